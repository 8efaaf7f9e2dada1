import { GetQueueAttributesCommand, type Message, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deduplicationId, parseEnvelope } from '../../../events/envelope.ts';
import { redrive } from '../../../shared/queue/dlq.ts';
import { ensureQueues, type QueueUrls, resolveQueues } from '../../../shared/queue/ensure.ts';
import { groupId, objectGroup } from '../../../shared/queue/message.ts';
import { dlqName, functionOfQueue, queueName, requeueQueueName } from '../../../shared/queue/names.ts';
import {
  forwardDueRequeues,
  forwardOne,
  requeueEnvelope,
  scheduleRequeue,
  sendDelayed,
} from '../../../shared/queue/requeue.ts';
import { QueueSender } from '../../../shared/queue/sender.ts';
import { envelope } from '../../helpers/messages.ts';
import { receiveAll, startSqs } from '../../helpers/sqs.ts';

let local: Awaited<ReturnType<typeof startSqs>>;
let urls: QueueUrls;

const drain = (url: string, expected: number, timeoutMs = 5_000): Promise<Message[]> =>
  receiveAll(local.sqs, url, expected, { timeoutMs });

beforeAll(async () => {
  local = await startSqs();
  urls = await ensureQueues(local.sqs, { prefix: 'q-' });
});
afterAll(async () => {
  local?.sqs.destroy();
  await local?.stop();
});

describe('queue names', () => {
  it('names FIFO queues and DLQs per function, with the prefix', () => {
    expect(queueName('selectHost')).toBe('metal3fn-selectHost.fifo');
    expect(dlqName('allocateIndex', { prefix: 'dev-' })).toBe('dev-metal3fn-allocateIndex-dlq.fifo');
    expect(requeueQueueName({ prefix: 'x-' })).toBe('x-metal3fn-requeue');
    expect(functionOfQueue('dev-metal3fn-renderData-dlq.fifo', { prefix: 'dev-' })).toEqual({
      fn: 'renderData',
      dlq: true,
    });
    expect(functionOfQueue('other.fifo')).toBeUndefined();
    expect(() => queueName('selectHost', { prefix: 'bad prefix' })).toThrow(/prefix/);
  });

  it('keeps group ids within 128 characters and stable', () => {
    const long = objectGroup('Metal3Machine', 'ns', 'x'.repeat(250));
    expect(long.length).toBeLessThanOrEqual(128);
    expect(groupId(`Metal3Machine/ns/${'x'.repeat(250)}`)).toBe(long);
  });
});

describe('ensureQueues', () => {
  it('is idempotent and wires each function queue to its DLQ with maxReceiveCount 12, the delay queue with 5', async () => {
    const again = await ensureQueues(local.sqs, { prefix: 'q-' });
    expect(again).toEqual(urls);
    expect(await resolveQueues(local.sqs, { prefix: 'q-' })).toEqual(urls);
    const attrs = await local.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: urls.main.selectHost, AttributeNames: ['All'] }),
    );
    expect(attrs.Attributes?.FifoQueue).toBe('true');
    const redrivePolicy = JSON.parse(attrs.Attributes?.RedrivePolicy ?? '{}');
    expect(String(redrivePolicy.maxReceiveCount)).toBe('12');
    expect(redrivePolicy.deadLetterTargetArn).toMatch(/q-metal3fn-selectHost-dlq\.fifo$/);
    const delay = await local.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: urls.requeue, AttributeNames: ['RedrivePolicy'] }),
    );
    expect(String(JSON.parse(delay.Attributes?.RedrivePolicy ?? '{}').maxReceiveCount)).toBe('5');
  });
});

describe('QueueSender', () => {
  it('batches by function, sets group and dedup ids, and coalesces a hot key', async () => {
    const sender = new QueueSender(local.sqs, urls.main);
    const msgs = Array.from({ length: 23 }, (_, i) =>
      envelope({ name: `m-${i}`, uid: `u-${i}`, resourceVersion: String(100 + i) }),
    );
    sender.enqueue(msgs.map((msg) => ({ msg, group: objectGroup(msg.kind, msg.namespace, msg.name) })));
    // A hot key: 50 updates of one claim, only the last should travel (allocateIndex, group = template).
    for (let rv = 1; rv <= 50; rv++) {
      const msg = envelope({
        function: 'allocateIndex',
        kind: 'Metal3DataClaim',
        name: 'claim-a',
        uid: 'uc',
        resourceVersion: String(rv),
      });
      sender.enqueue([{ msg, group: 'Metal3DataTemplate/metal3/tpl' }]);
    }
    await sender.flush();
    expect(sender.stats.sent).toBeGreaterThanOrEqual(24);
    expect(sender.stats.coalesced).toBeGreaterThan(0);
    expect(sender.stats.batches).toBeGreaterThanOrEqual(4);

    const got = await drain(urls.main.selectHost, 23);
    expect(got.map((m) => parseEnvelope(m.Body).name).sort()).toEqual(msgs.map((m) => m.name).sort());
    const first = got.find((m) => parseEnvelope(m.Body).name === 'm-0')!;
    expect(first.Attributes?.MessageGroupId).toBe('Metal3Machine/metal3/m-0');
    expect(first.Attributes?.MessageDeduplicationId).toBe(deduplicationId(msgs[0]!));

    const claims = await drain(urls.main.allocateIndex, 1, 2_000);
    const last = parseEnvelope(claims.at(-1)!.Body);
    expect(last.resourceVersion).toBe('50');
    expect(claims.at(-1)!.Attributes?.MessageGroupId).toBe('Metal3DataTemplate/metal3/tpl');
    expect(claims.length).toBeLessThan(50);
  });

  it('drops messages for functions it has no queue for, and counts them', async () => {
    const sender = new QueueSender(local.sqs, { selectHost: urls.main.selectHost });
    sender.enqueue([{ msg: envelope({ function: 'renderData' }), group: 'g' }]);
    await sender.flush();
    expect(sender.stats.dropped).toBe(1);
  });

  it('re-buffers sends SQS refuses and keeps retrying them', async () => {
    const bad = new QueueSender(
      local.sqs,
      { selectHost: `${urls.main.selectHost}-missing.fifo` },
      { retryBaseMs: 10 },
    );
    bad.enqueue([{ msg: envelope({ name: 'retry-me' }), group: 'g' }]);
    await new Promise((r) => setTimeout(r, 100));
    expect(bad.stats.refused).toBeGreaterThan(0);
    expect(bad.bufferedCount + bad.inFlightBatches).toBeGreaterThan(0);
  });
});

describe('requeue-after through the delay queue', () => {
  it('forwards due messages into the FIFO queue with their group and reschedules early ones', async () => {
    const msg = envelope({ function: 'renderData', kind: 'Metal3Data', name: 'd-1', uid: 'ud1' });
    const next = await scheduleRequeue(local.sqs, urls.requeue, msg, 'Metal3Data/metal3/d-1', 0);
    expect(next.reason).toBe('requeue');
    expect(next.attempt).toBe(1);
    const r = await forwardDueRequeues(local.sqs, urls, { waitTimeSeconds: 1 });
    expect(r.forwarded).toBe(1);
    const [m] = await drain(urls.main.renderData, 1);
    expect(parseEnvelope(m!.Body).reason).toBe('requeue');
    expect(m!.Attributes?.MessageGroupId).toBe('Metal3Data/metal3/d-1');

    // Due in an hour: a hop of at most 900 s, never forwarded early.
    const later = { ...next, notBefore: Date.now() + 3_600_000 };
    expect(await forwardOne(local.sqs, urls, JSON.stringify(later), 'g')).toBe('rescheduled');
  });
});

describe('requeues of one key decided close together (ADR 037)', () => {
  it('reach the function queue once; one a grid step later arrives too', async () => {
    // Decided over three minutes ago, so due now; t0 is 1 s past a 15 s grid line.
    const t0 = Math.floor((Date.now() - 200_000) / 15_000) * 15_000 + 1_000;
    const pass = async (over: Parameters<typeof envelope>[0], at: number) => {
      const next = requeueEnvelope(envelope({ name: 'grid-1', uid: 'u-grid-1', ...over }), 60, at);
      await sendDelayed(local.sqs, urls.requeue, next, 'Metal3Machine/metal3/grid-1', Date.now());
      return next;
    };
    const a = await pass({ resourceVersion: '5' }, t0);
    const b = await pass(
      { resourceVersion: '9', reason: 'related', cause: 'Machine/metal3/grid-1@7', attempt: 1 },
      t0 + 5_000,
    );
    const c = await pass({ resourceVersion: '9' }, t0 + 15_000);
    expect(a.notBefore).toBe(b.notBefore);
    expect(c.notBefore).toBeGreaterThan(a.notBefore!);
    let forwarded = 0;
    for (let i = 0; i < 20 && forwarded < 3; i++)
      forwarded += (await forwardDueRequeues(local.sqs, urls, { waitTimeSeconds: 1 })).forwarded;
    expect(forwarded).toBe(3);
    const arrived = await drain(urls.main.selectHost, 3, 2_000);
    const mine = arrived.map((m) => parseEnvelope(m.Body)).filter((m) => m.name === 'grid-1');
    expect(mine.map((m) => m.notBefore).sort()).toEqual([a.notBefore, c.notBefore]);
  });
});

describe('redrive', () => {
  it('moves DLQ messages back with their group (copy fallback where StartMessageMoveTask is missing)', async () => {
    const body = JSON.stringify(envelope({ name: 'dead-1' }));
    await local.sqs.send(
      new SendMessageCommand({
        QueueUrl: urls.dlq.selectHost,
        MessageBody: body,
        MessageGroupId: 'Metal3Machine/metal3/dead-1',
        MessageDeduplicationId: 'dead-1',
      }),
    );
    const r = await redrive(local.sqs, urls.dlq.selectHost, urls.main.selectHost);
    if (local.backend === 'fauxqs') expect(r).toEqual({ method: 'copy', moved: 1 });
    const back = await drain(urls.main.selectHost, 1);
    const mine = back.find((m) => m.Body === body)!;
    expect(mine.Attributes?.MessageGroupId).toBe('Metal3Machine/metal3/dead-1');
  });
});
