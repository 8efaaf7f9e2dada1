/**
 * What only the Lambda adapter does, against a real SQS server (fauxqs): the backoff of a failed
 * FIFO group reaches every record the batch skipped behind the failure, at the group's highest
 * receive count; a failure at the last receive is dead-lettered by the handler and the records
 * behind it run; the group a record came in becomes the object it is serialized by; the SQS client
 * is loaded only when a record needs it; and the requeue forwarder.
 *
 * The batches of one key's records (ADR 027) are one group's, received as SQS hands them out (several
 * of a group in order, infra/local/fauxqs-fifo.ts). The batches whose records of one group carry
 * different receive counts are built from messages received in groups of their own, labelled with
 * the group they share (receipt handles and receive counts are the server's).
 */
import { ChangeMessageVisibilityCommand, type Message, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import type { MessageEnvelope } from '../../../events/envelope.ts';
import { ensureQueues, type QueueUrls, queueArn } from '../../../shared/queue/ensure.ts';
import { scheduleRequeue } from '../../../shared/queue/requeue.ts';
import type { ObjectKey, ReconcileFn } from '../../../shared/reconcile/context.ts';
import { TransientError } from '../../../shared/reconcile/errors.ts';
import { done } from '../../../shared/reconcile/result.ts';
import { createRequeueForwarder, createSqsHandler } from '../../../shared/runtimes/lambda.ts';
import { offlineContext } from '../../helpers/context.ts';
import { envelope } from '../../helpers/messages.ts';
import { receiveAll, sendBodies, useSqs } from '../../helpers/sqs.ts';
import { sqsEvent } from '../../helpers/sqs-event.ts';
import { until } from '../../helpers/wait.ts';

const local = useSqs();

let installs = 0;
const install = async (): Promise<{ urls: QueueUrls; prefix: string; arn: string }> => {
  const prefix = `la${installs++}-`;
  const urls = await ensureQueues(local.sqs, {
    prefix,
    functions: ['selectHost'],
    visibilityTimeoutSeconds: 180,
  });
  return { urls, prefix, arn: await queueArn(local.sqs, urls.main.selectHost) };
};

/** Sends each name in a fauxqs group of its own; receives them all (receive count 1). */
async function receivedSeparately(url: string, names: string[]): Promise<Map<string, Message>> {
  for (const name of names) {
    await local.sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: JSON.stringify(envelope({ name, uid: name })),
        MessageGroupId: `own-${name}`,
        MessageDeduplicationId: `${name}-${installs}`,
      }),
    );
  }
  const got = await receiveAll(local.sqs, url, names.length, { visibility: 180 });
  return new Map(got.map((m) => [JSON.parse(m.Body!).name as string, m]));
}

/** Makes a held message visible and receives it again: its receive count goes up by one. */
async function receiveAgain(url: string, m: Message): Promise<Message> {
  await local.sqs.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: url,
      ReceiptHandle: m.ReceiptHandle!,
      VisibilityTimeout: 0,
    }),
  );
  const [again] = await receiveAll(local.sqs, url, 1, { visibility: 180 });
  return again!;
}

/** The messages as one FIFO group's records, in this order. */
const inOneGroup = (ms: Message[], group: string): Message[] =>
  ms.map((m) => ({ ...m, Attributes: { ...m.Attributes, MessageGroupId: group } }));

/** A handler on the installation's queues whose core fails for the names in `failing`, recording what ran. */
function handlerFailing(
  install: { urls: QueueUrls; prefix: string },
  failing: Record<string, string>,
  opts: { maxReceiveCount?: number } = {},
) {
  const ran: string[] = [];
  const core: ReconcileFn = async (_c, msg) => {
    ran.push(msg.name);
    const error = failing[msg.name];
    if (error) throw new TransientError(error);
    return done();
  };
  const handler = createSqsHandler({
    fns: { selectHost: core },
    context: offlineContext,
    sqs: local.sqs,
    naming: { prefix: install.prefix },
    requeueUrl: install.urls.requeue,
    ...opts,
  });
  return { ran, handler };
}

describe('Lambda adapter: backoff of a failed group', () => {
  it('the failed record and every record skipped behind it come back together, after the backoff of the highest receive count', async () => {
    const inst = await install();
    const { urls, arn } = inst;
    const { ran, handler } = handlerFailing(inst, { head: '409 on the template' });
    const url = urls.main.selectHost;
    const got = await receivedSeparately(url, ['head', 'behind']);
    // `behind` has been received twice (held back once before): the group waits 2 s, not 1 s.
    const behind = await receiveAgain(url, got.get('behind')!);
    expect(behind.Attributes?.ApproximateReceiveCount).toBe('2');
    const res = await handler(
      sqsEvent(inOneGroup([got.get('head')!, behind], 'Metal3DataTemplate/metal3/t'), arn),
    );
    const answered = Date.now();
    expect(res.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([
      got.get('head')!.MessageId,
      behind.MessageId,
    ]);
    expect(ran).toEqual(['head']);
    // Neither is handed out again before the group's 2 s; then both are (not after 180 s).
    const back = await until(async () => {
      const r = await receiveAll(local.sqs, url, 2, { timeoutMs: 1_000 });
      return r.length === 2 ? r : undefined;
    }, 15_000);
    expect(Date.now() - answered).toBeGreaterThanOrEqual(1_900);
    expect(back.map((m) => m.Attributes?.ApproximateReceiveCount).sort()).toEqual(['2', '3']);
    expect(await receiveAll(local.sqs, urls.dlq.selectHost, 1, { timeoutMs: 500 })).toEqual([]);
  });

  it('a failure at the last receive is dead-lettered with its error, and the records behind it run now', async () => {
    const inst = await install();
    const { urls, arn } = inst;
    const { ran, handler } = handlerFailing(inst, { poison: 'always fails' }, { maxReceiveCount: 2 });
    const url = urls.main.selectHost;
    const got = await receivedSeparately(url, ['poison', 'next']);
    const poison = await receiveAgain(url, got.get('poison')!); // its 2nd receive: the last
    const res = await handler(sqsEvent(inOneGroup([poison, got.get('next')!], 'G'), arn));
    expect(res.batchItemFailures).toEqual([]);
    expect(ran).toEqual(['poison', 'next']);
    const [dead] = await receiveAll(local.sqs, urls.dlq.selectHost, 1);
    expect(JSON.parse(dead!.Body!).name).toBe('poison');
    expect(dead!.MessageAttributes?.reason?.StringValue).toBe('failed 2 receives; last error: always fails');
  });
});

describe('Lambda adapter: a batch with several records of one key (ADR 027)', () => {
  /** The bodies sent in one group and received in one receive, as SQS hands them out: in order. */
  async function oneGroupBatch(url: string, bodies: MessageEnvelope[], group: string): Promise<Message[]> {
    await sendBodies(
      local.sqs,
      url,
      bodies.map((b) => ({ body: JSON.stringify(b), group })),
    );
    const got = await receiveAll(local.sqs, url, bodies.length, { visibility: 180 });
    expect(got.map((m) => m.Body)).toEqual(bodies.map((b) => JSON.stringify(b)));
    return got;
  }

  it('runs the last record of a key once and acknowledges the earlier ones; other keys run in order', async () => {
    const inst = await install();
    const { ran, handler } = handlerFailing(inst, {});
    const url = inst.urls.main.selectHost;
    const batch = await oneGroupBatch(
      url,
      [
        envelope({ name: 'a', resourceVersion: '1', reason: 'added' }),
        envelope({ name: 'b', resourceVersion: '1' }),
        envelope({ name: 'a', resourceVersion: '2', reason: 'related', cause: 'Machine/metal3/a@2' }),
        envelope({ name: 'a', resourceVersion: '3' }),
      ],
      'Metal3DataTemplate/metal3/t',
    );
    const res = await handler(sqsEvent(batch, inst.arn));
    expect(res.batchItemFailures).toEqual([]);
    // The last `a` (resourceVersion 3) ran, after `b`; every record is acknowledged (no failure).
    expect(ran).toEqual(['b', 'a']);
  });

  it('when the record that runs fails, it comes back; the acknowledged earlier record does not', async () => {
    const inst = await install();
    const url = inst.urls.main.selectHost;
    const batch = await oneGroupBatch(
      url,
      [envelope({ name: 'a', resourceVersion: '1' }), envelope({ name: 'a', resourceVersion: '2' })],
      'Metal3Machine/metal3/a',
    );
    const ran: string[] = [];
    const handler = createSqsHandler({
      fns: {
        selectHost: async (_c, msg) => {
          ran.push(msg.resourceVersion ?? '');
          throw new TransientError('API server unavailable');
        },
      },
      context: offlineContext,
      sqs: local.sqs,
      naming: { prefix: inst.prefix },
      requeueUrl: inst.urls.requeue,
    });
    const res = await handler(sqsEvent(batch, inst.arn));
    expect(ran).toEqual(['2']);
    expect(res.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([batch[1]!.MessageId]);
  });

  it('a record not yet due is not coalesced: it goes round again, and the due one runs', async () => {
    const inst = await install();
    const url = inst.urls.main.selectHost;
    const batch = await oneGroupBatch(
      url,
      [
        envelope({ name: 'a', resourceVersion: '1' }),
        envelope({
          name: 'a',
          resourceVersion: '1',
          reason: 'requeue',
          attempt: 1,
          notBefore: Date.now() + 120_000,
        }),
      ],
      'Metal3Machine/metal3/a',
    );
    const ran: string[] = [];
    const outcomes: string[] = [];
    const handler = createSqsHandler({
      fns: {
        selectHost: async (_c, msg) => {
          ran.push(msg.reason);
          return done();
        },
      },
      context: offlineContext,
      sqs: local.sqs,
      naming: { prefix: inst.prefix },
      requeueUrl: inst.urls.requeue,
      onOutcome: (o) => outcomes.push(o.kind === 'requeue' ? `requeue: ${o.reason}` : o.kind),
    });
    const res = await handler(sqsEvent(batch, inst.arn));
    expect(res.batchItemFailures).toEqual([]);
    expect(ran).toEqual(['modified']);
    expect(outcomes).toEqual(['done', 'requeue: not yet due']);
  });
});

describe('Lambda adapter: what the core is told it is serialized by', () => {
  it("the object of the record's group from a FIFO queue, nothing from a standard queue", async () => {
    const { urls, prefix, arn } = await install();
    const seen: (ObjectKey | undefined)[] = [];
    const handler = createSqsHandler({
      fns: {
        selectHost: async (c) => {
          seen.push(c.serializedBy);
          return done();
        },
      },
      context: offlineContext,
      sqs: local.sqs,
      naming: { prefix },
      requeueUrl: urls.requeue,
    });
    const record = (from: string) =>
      sqsEvent(
        [
          {
            MessageId: 'm',
            ReceiptHandle: 'm',
            Body: JSON.stringify(envelope()),
            Attributes: { MessageGroupId: 'IPPool/metal3/pool-1' },
          },
        ],
        from,
      );
    expect((await handler(record(arn))).batchItemFailures).toEqual([]);
    expect((await handler(record(arn.replace(/\.fifo$/, '')))).batchItemFailures).toEqual([]);
    expect(seen).toEqual([{ kind: 'IPPool', namespace: 'metal3', name: 'pool-1' }, undefined]);
  });
});

describe('Lambda adapter with a lazy SQS client (how the bundles build it)', () => {
  it('calls the factory only when a message needs SQS, once, and then dead-letters as usual', async () => {
    const { urls, prefix, arn } = await install();
    let made = 0;
    const handler = createSqsHandler({
      fns: { selectHost: async () => done() },
      context: offlineContext,
      sqs: async () => {
        made++;
        return local.sqs;
      },
      naming: { prefix },
      requeueUrl: urls.requeue,
    });
    const mk = (id: string, body: string): Message => ({
      MessageId: id,
      ReceiptHandle: id,
      Body: body,
      Attributes: { MessageGroupId: id },
    });
    expect(await handler(sqsEvent([mk('ok', JSON.stringify(envelope({ name: 'ok-1' })))], arn))).toEqual({
      batchItemFailures: [],
    });
    expect(made).toBe(0);
    const bad = [mk('bad-1', '{"function":'), mk('bad-2', 'not json')];
    expect(await handler(sqsEvent(bad, arn))).toEqual({ batchItemFailures: [] });
    expect(made).toBe(1);
    expect(await receiveAll(local.sqs, urls.dlq.selectHost, 2)).toHaveLength(2);
  });
});

describe('requeue forwarder Lambda', () => {
  it('forwards a due requeue into its FIFO queue with its group, looking queues up by name', async () => {
    const urls = await ensureQueues(local.sqs, { prefix: 'fwd-' });
    const msg: MessageEnvelope = envelope({ function: 'deprovision', name: 'fwd-1' });
    await scheduleRequeue(local.sqs, urls.requeue, msg, 'Metal3Machine/metal3/fwd-1', 0);
    const [m] = await receiveAll(local.sqs, urls.requeue, 1);
    const arn = await queueArn(local.sqs, urls.requeue);
    const handler = createRequeueForwarder({ sqs: local.sqs, naming: { prefix: 'fwd-' } });
    expect(await handler(sqsEvent([m!], arn))).toEqual({ batchItemFailures: [] });
    const [fwd] = await receiveAll(local.sqs, urls.main.deprovision, 1);
    expect(JSON.parse(fwd!.Body!)).toMatchObject({ name: 'fwd-1', reason: 'requeue', attempt: 1 });
    expect(fwd!.Attributes?.MessageGroupId).toBe('Metal3Machine/metal3/fwd-1');
    // A body that names no function fails alone (and ends in the requeue DLQ after its receives).
    const bad = sqsEvent([{ ...m!, MessageId: 'bad', Body: '{}' }], arn);
    expect((await handler(bad)).batchItemFailures).toEqual([{ itemIdentifier: 'bad' }]);
  });
});
