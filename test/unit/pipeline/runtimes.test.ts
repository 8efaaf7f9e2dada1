/**
 * Lambda adapter and local worker against a real SQS server: a poisoned message goes to the DLQ
 * with its reason while its batch-mates succeed; failures are retried; requeues go through the
 * delay queue; a graceful stop loses nothing.
 */
import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deduplicationId, type MessageEnvelope } from '../../../events/envelope.ts';
import { ensureQueues, type QueueUrls, queueArn } from '../../../shared/queue/ensure.ts';
import { forwardDueRequeues, scheduleRequeue } from '../../../shared/queue/requeue.ts';
import type { ObjectKey, ReconcileFn } from '../../../shared/reconcile/context.ts';
import { TerminalError, TransientError } from '../../../shared/reconcile/errors.ts';
import { done, requeueAfter } from '../../../shared/reconcile/result.ts';
import { createRequeueForwarder, createSqsHandler } from '../../../shared/runtimes/lambda.ts';
import { Worker } from '../../../shared/runtimes/worker.ts';
import { offlineContext } from '../../helpers/context.ts';
import { envelope } from '../../helpers/messages.ts';
import { startSqs } from '../../helpers/sqs.ts';
import { until } from '../../helpers/wait.ts';

let local: Awaited<ReturnType<typeof startSqs>>;

beforeAll(async () => {
  local = await startSqs();
});
afterAll(async () => {
  local?.sqs.destroy();
  await local?.stop();
});

/** A core whose behaviour is chosen by the message's name. */
function scriptedCore(seen: MessageEnvelope[]): ReconcileFn {
  return async (_ctx, msg) => {
    seen.push(msg);
    if (msg.name.startsWith('fail')) throw new TransientError('try again');
    if (msg.name.startsWith('boom')) throw new Error('unexpected');
    if (msg.name.startsWith('wait')) return requeueAfter(30, 'waiting for host');
    if (msg.name.startsWith('bad-input')) throw new TerminalError('InvalidConfiguration', 'bad selector');
    return done();
  };
}

async function sendRaw(url: string, bodies: { body: string; group: string }[]): Promise<void> {
  await local.sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: url,
      Entries: bodies.map((b, i) => ({
        Id: String(i),
        MessageBody: b.body,
        MessageGroupId: b.group,
        MessageDeduplicationId: `${b.group}-${i}-${Math.random()}`,
      })),
    }),
  );
}

async function receiveAll(url: string, n: number, visibility = 30): Promise<Message[]> {
  const out: Message[] = [];
  const end = Date.now() + 5_000;
  while (out.length < n && Date.now() < end) {
    const r = await local.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: visibility,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    out.push(...(r.Messages ?? []));
  }
  return out;
}

/** The SQS event Lambda would build from received messages. */
function sqsEvent(messages: Message[], arn: string): SQSEvent {
  return {
    Records: messages.map((m) => ({
      messageId: m.MessageId!,
      receiptHandle: m.ReceiptHandle!,
      body: m.Body!,
      attributes: {
        ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
        SentTimestamp: m.Attributes?.SentTimestamp ?? '0',
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: '0',
        MessageGroupId: m.Attributes?.MessageGroupId,
        MessageDeduplicationId: m.Attributes?.MessageDeduplicationId,
        SequenceNumber: m.Attributes?.SequenceNumber,
      },
      messageAttributes: {},
      md5OfBody: m.MD5OfBody!,
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: 'us-east-1',
    })),
  };
}

describe('Lambda adapter (Powertools partial batch response)', () => {
  let urls: QueueUrls;
  beforeAll(async () => {
    urls = await ensureQueues(local.sqs, { prefix: 'lambda-' });
  });

  it('fails only the failing record, dead-letters the poisoned one with its reason, acks the rest', async () => {
    const seen: MessageEnvelope[] = [];
    const handler = createSqsHandler({
      fns: { selectHost: scriptedCore(seen) },
      context: offlineContext,
      sqs: local.sqs,
      naming: { prefix: 'lambda-' },
      requeueUrl: urls.requeue,
    });
    await sendRaw(urls.main.selectHost, [
      { body: JSON.stringify(envelope({ name: 'ok-1' })), group: 'g1' },
      { body: '{"function":"selectHost","kind":"Metal3Machine"', group: 'g2' },
      { body: JSON.stringify(envelope({ name: 'fail-1' })), group: 'g3' },
      { body: JSON.stringify(envelope({ name: 'ok-2' })), group: 'g4' },
      { body: JSON.stringify(envelope({ name: 'wait-1' })), group: 'g5' },
    ]);
    const received = await receiveAll(urls.main.selectHost, 5);
    expect(received).toHaveLength(5);
    const arn = await queueArn(local.sqs, urls.main.selectHost);
    const res = await handler(sqsEvent(received, arn));

    const failId = received.find((m) => m.Body?.includes('fail-1'))!.MessageId;
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: failId }]);
    expect(seen.map((m) => m.name).sort()).toEqual(['fail-1', 'ok-1', 'ok-2', 'wait-1']);

    const [dead] = await receiveAll(urls.dlq.selectHost, 1);
    expect(dead?.Body).toBe('{"function":"selectHost","kind":"Metal3Machine"');
    expect(dead?.MessageAttributes?.reason?.StringValue).toMatch(/not JSON/);
    expect(dead?.MessageAttributes?.['source-queue']?.StringValue).toBe('lambda-metal3fn-selectHost.fifo');

    // The requeue of wait-1 waits in the delay queue for its 30 s hop; nothing is due yet.
    const delayed = await local.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: urls.requeue,
        AttributeNames: ['ApproximateNumberOfMessagesDelayed'],
      }),
    );
    expect(delayed.Attributes?.ApproximateNumberOfMessagesDelayed).toBe('1');
    expect((await forwardDueRequeues(local.sqs, urls, { waitTimeSeconds: 0 })).forwarded).toBe(0);
  });

  it('a FIFO failure holds back only later messages of the same group', async () => {
    const seen: MessageEnvelope[] = [];
    const handler = createSqsHandler({
      fns: { selectHost: scriptedCore(seen) },
      context: offlineContext,
      sqs: local.sqs,
      naming: { prefix: 'lambda-' },
      requeueUrl: urls.requeue,
    });
    const arn = await queueArn(local.sqs, urls.main.selectHost);
    const mk = (name: string, group: string, id: string): Message => ({
      MessageId: id,
      ReceiptHandle: id,
      Body: JSON.stringify(envelope({ name })),
      MD5OfBody: 'x',
      Attributes: { MessageGroupId: group },
    });
    const res = await handler(
      sqsEvent([mk('fail-a', 'A', '1'), mk('ok-a', 'A', '2'), mk('ok-b', 'B', '3')], arn),
    );
    expect(res.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['1', '2']);
    expect(seen.map((m) => m.name)).toEqual(['fail-a', 'ok-b']);
  });

  it("gives the core the record's group from a FIFO queue, none from a standard queue", async () => {
    const groups: (ObjectKey | undefined)[] = [];
    const handler = createSqsHandler({
      fns: {
        selectHost: async (c) => {
          groups.push(c.serializedBy);
          return { kind: 'done' };
        },
      },
      context: offlineContext,
      sqs: local.sqs,
      naming: { prefix: 'lambda-' },
      requeueUrl: urls.requeue,
    });
    const fifo = await queueArn(local.sqs, urls.main.selectHost);
    const record = (arn: string) => ({
      ...sqsEvent(
        [
          {
            MessageId: 'm',
            ReceiptHandle: 'm',
            Body: JSON.stringify(envelope()),
            MD5OfBody: 'x',
            Attributes: { MessageGroupId: 'IPPool/metal3/pool-1' },
          },
        ],
        arn,
      ),
    });
    expect((await handler(record(fifo))).batchItemFailures).toEqual([]);
    expect((await handler(record(fifo.replace(/\.fifo$/, '')))).batchItemFailures).toEqual([]);
    expect(groups).toEqual([{ kind: 'IPPool', namespace: 'metal3', name: 'pool-1' }, undefined]);
  });
});

describe('Lambda adapter with a lazy SQS client (how the bundles build it)', () => {
  it('calls the factory only when a message needs SQS, once, and then dead-letters as usual', async () => {
    const urls = await ensureQueues(local.sqs, { prefix: 'lazy-' });
    let made = 0;
    const handler = createSqsHandler({
      fns: { selectHost: scriptedCore([]) },
      context: offlineContext,
      sqs: async () => {
        made++;
        return local.sqs;
      },
      naming: { prefix: 'lazy-' },
      requeueUrl: urls.requeue,
    });
    const arn = await queueArn(local.sqs, urls.main.selectHost);
    const mk = (id: string, body: string): Message => ({
      MessageId: id,
      ReceiptHandle: id,
      Body: body,
      MD5OfBody: 'x',
      Attributes: { MessageGroupId: id },
    });
    expect(await handler(sqsEvent([mk('ok', JSON.stringify(envelope({ name: 'ok-1' })))], arn))).toEqual({
      batchItemFailures: [],
    });
    expect(made).toBe(0);
    const bad = [mk('bad-1', '{"function":'), mk('bad-2', 'not json')];
    expect(await handler(sqsEvent(bad, arn))).toEqual({ batchItemFailures: [] });
    expect(made).toBe(1);
    expect(await receiveAll(urls.dlq.selectHost, 2)).toHaveLength(2);
  });
});

describe('requeue forwarder Lambda', () => {
  it('forwards a due requeue into its FIFO queue with its group, looking queues up by name', async () => {
    const urls = await ensureQueues(local.sqs, { prefix: 'fwd-' });
    const msg = envelope({ function: 'deprovision', name: 'fwd-1' });
    await scheduleRequeue(local.sqs, urls.requeue, msg, 'Metal3Machine/metal3/fwd-1', 0);
    const [m] = await receiveAll(urls.requeue, 1);
    const arn = await queueArn(local.sqs, urls.requeue);
    const event = sqsEvent([m!], arn);
    event.Records[0]!.messageAttributes = {
      group: { stringValue: m!.MessageAttributes?.group?.StringValue, dataType: 'String' },
    };
    const handler = createRequeueForwarder({ sqs: local.sqs, naming: { prefix: 'fwd-' } });
    expect(await handler(event)).toEqual({ batchItemFailures: [] });
    const [fwd] = await receiveAll(urls.main.deprovision, 1);
    expect(JSON.parse(fwd!.Body!)).toMatchObject({ name: 'fwd-1', reason: 'requeue', attempt: 1 });
    expect(fwd!.Attributes?.MessageGroupId).toBe('Metal3Machine/metal3/fwd-1');
    // A body that names no function fails alone (and ends in the requeue DLQ after its receives).
    const bad = sqsEvent([{ ...m!, MessageId: 'bad', Body: '{}' }], arn);
    expect((await handler(bad)).batchItemFailures).toEqual([{ itemIdentifier: 'bad' }]);
  });
});

describe('local worker', () => {
  let urls: QueueUrls;
  beforeAll(async () => {
    urls = await ensureQueues(local.sqs, { prefix: 'worker-', visibilityTimeoutSeconds: 5 });
  });

  it('processes a batch: poison to the DLQ with its reason, batch-mates succeed, failures retried', async () => {
    const seen: MessageEnvelope[] = [];
    let failures = 0;
    const core: ReconcileFn = async (ctx, msg) => {
      if (msg.name === 'flaky' && failures++ < 2) throw new TransientError('not yet');
      return scriptedCore(seen)(ctx, msg);
    };
    const worker = new Worker({
      sqs: local.sqs,
      fns: { selectHost: core },
      context: offlineContext(),
      queues: urls,
      functions: ['selectHost'],
      waitTimeSeconds: 1,
      retryBackoffSeconds: () => 0,
    }).start();
    try {
      await sendRaw(urls.main.selectHost, [
        { body: JSON.stringify(envelope({ name: 'w-ok-1' })), group: 'a' },
        { body: JSON.stringify({ ...envelope(), kind: 'not-a-kind' }), group: 'b' },
        { body: JSON.stringify(envelope({ name: 'flaky' })), group: 'c' },
        { body: JSON.stringify(envelope({ name: 'w-ok-2' })), group: 'd' },
      ]);
      await until(() => seen.some((m) => m.name === 'flaky') && seen.length >= 3);
      expect(seen.map((m) => m.name).sort()).toEqual(['flaky', 'w-ok-1', 'w-ok-2']);
      expect(worker.stats.retried).toBe(2);
      const [dead] = await receiveAll(urls.dlq.selectHost, 1);
      expect(dead?.MessageAttributes?.reason?.StringValue).toMatch(/kind/);
    } finally {
      await worker.stop({ graceMs: 2_000 });
    }
  });

  it('a message that always fails reaches the DLQ through the redrive policy (maxReceiveCount 5)', async () => {
    const worker = new Worker({
      sqs: local.sqs,
      fns: { deprovision: scriptedCore([]) },
      context: offlineContext(),
      queues: urls,
      functions: ['deprovision'],
      waitTimeSeconds: 1,
      retryBackoffSeconds: () => 0,
    }).start();
    try {
      const msg = envelope({ function: 'deprovision', name: 'boom-forever' });
      await local.sqs.send(
        new SendMessageCommand({
          QueueUrl: urls.main.deprovision,
          MessageBody: JSON.stringify(msg),
          MessageGroupId: 'g',
          MessageDeduplicationId: deduplicationId(msg),
        }),
      );
      const [dead] = await until(async () => {
        const r = await receiveAll(urls.dlq.deprovision, 1);
        return r.length ? r : undefined;
      }, 20_000);
      expect(dead?.Body).toContain('boom-forever');
      expect(worker.stats.retried).toBe(5);
    } finally {
      await worker.stop({ graceMs: 2_000 });
    }
  });

  it('extends visibility while a slow message runs, so no other consumer gets it', async () => {
    let finished = false;
    const slow: ReconcileFn = async () => {
      await new Promise((r) => setTimeout(r, 4_000));
      finished = true;
      return done();
    };
    const worker = new Worker({
      sqs: local.sqs,
      fns: { reconcileCluster: slow },
      context: offlineContext(),
      queues: urls,
      functions: ['reconcileCluster'],
      waitTimeSeconds: 1,
      visibilityTimeoutSeconds: 2,
    }).start();
    try {
      await sendRaw(urls.main.reconcileCluster, [
        {
          body: JSON.stringify(
            envelope({ function: 'reconcileCluster', kind: 'Metal3Cluster', name: 'slow-1' }),
          ),
          group: 's',
        },
      ]);
      await until(() => worker.stats.received === 1);
      // Another consumer polls for longer than the 2 s visibility: the extensions keep it hidden.
      let stolen = 0;
      while (!finished) {
        const r = await local.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: urls.main.reconcileCluster,
            WaitTimeSeconds: 1,
            VisibilityTimeout: 1,
          }),
        );
        stolen += r.Messages?.length ?? 0;
      }
      expect(stolen).toBe(0);
      await until(() => worker.stats.done === 1);
    } finally {
      await worker.stop({ graceMs: 2_000 });
    }
  });

  it('graceful stop lets the running message finish and loses nothing queued behind it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const started: string[] = [];
    const core: ReconcileFn = async (_ctx, msg) => {
      started.push(msg.name);
      if (msg.name === 'slow') await gate;
      return done();
    };
    const worker = new Worker({
      sqs: local.sqs,
      fns: { renderData: core },
      context: offlineContext(),
      queues: urls,
      functions: ['renderData'],
      waitTimeSeconds: 1,
      concurrency: 4,
    }).start();
    // One group: 'slow' runs, 'after-1' and 'after-2' wait behind it in order.
    await sendRaw(urls.main.renderData, [
      { body: JSON.stringify(envelope({ function: 'renderData', name: 'slow' })), group: 'one' },
      { body: JSON.stringify(envelope({ function: 'renderData', name: 'after-1' })), group: 'one' },
      { body: JSON.stringify(envelope({ function: 'renderData', name: 'after-2' })), group: 'one' },
    ]);
    await until(() => started.includes('slow'));
    const stopping = worker.stop({ graceMs: 5_000 });
    setTimeout(release, 200);
    const result = await stopping;
    expect(started).toEqual(['slow']);
    expect(result.finished).toBe(1);
    // Nothing lost: the messages behind 'slow' (released if they were held, or never received —
    // fauxqs hands out one message per FIFO group per receive) come back, in order.
    const back: Message[] = [];
    for (let i = 0; i < 2; i++) {
      const [m] = await receiveAll(urls.main.renderData, 1);
      back.push(m!);
      await local.sqs.send(
        new DeleteMessageCommand({ QueueUrl: urls.main.renderData, ReceiptHandle: m!.ReceiptHandle! }),
      );
    }
    expect(back.map((m) => JSON.parse(m.Body!).name)).toEqual(['after-1', 'after-2']);
  });
});
