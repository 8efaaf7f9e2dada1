/**
 * The embedded SQS server hands out FIFO messages as Amazon SQS does (infra/local/fauxqs-fifo.ts,
 * ADR 031): as many of one group as a receive asks for, in order, then other groups; nothing more
 * of a group while one of its messages is in flight; a message that comes back comes back at its
 * place. Group holds, receive counts and the redrive, visibility, the queue's delay and
 * deduplication stay fauxqs's. With `SQS_FAUXQS=plain` (fauxqs as published) the first group of
 * tests fails: that is the deviation this replaces; the last group pins the switch.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseFauxqsFifo, startLocalSqs } from '../../../infra/local/sqs.ts';
import { createSqsClient } from '../../../shared/queue/sqs.ts';
import { type TestSqs, useSqs } from '../../helpers/sqs.ts';

const local = useSqs();
let queues = 0;

/** A new FIFO queue (30 s visibility unless said), optionally with a dead-letter queue. */
async function fifoQueue(
  sqs: SQSClient,
  attrs: Record<string, string> = {},
  dlq?: { maxReceiveCount: number },
): Promise<{ url: string; dlqUrl?: string }> {
  const name = `fifo-${process.pid}-${++queues}`;
  let dlqUrl: string | undefined;
  const attributes: Record<string, string> = { FifoQueue: 'true', VisibilityTimeout: '30', ...attrs };
  if (dlq) {
    dlqUrl = (
      await sqs.send(
        new CreateQueueCommand({ QueueName: `${name}-dlq.fifo`, Attributes: { FifoQueue: 'true' } }),
      )
    ).QueueUrl!;
    const arn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }))
    ).Attributes!.QueueArn!;
    attributes.RedrivePolicy = JSON.stringify({
      deadLetterTargetArn: arn,
      maxReceiveCount: dlq.maxReceiveCount,
    });
  }
  const url = (await sqs.send(new CreateQueueCommand({ QueueName: `${name}.fifo`, Attributes: attributes })))
    .QueueUrl!;
  return { url, dlqUrl };
}

/** Sends `group:body` entries in this order, in one batch per ten. */
async function send(sqs: SQSClient, url: string, entries: readonly string[]): Promise<void> {
  for (let i = 0; i < entries.length; i += 10) {
    const r = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: entries.slice(i, i + 10).map((e, j) => ({
          Id: String(j),
          MessageBody: e,
          MessageGroupId: e.split(':')[0],
          MessageDeduplicationId: `${e}-${i + j}`,
        })),
      }),
    );
    expect(r.Failed ?? []).toEqual([]);
  }
}

/** One receive (no wait unless said): the messages, in the order the server returned them. */
async function receive(
  sqs: SQSClient,
  url: string,
  max: number,
  opts: { visibility?: number; wait?: number } = {},
): Promise<Message[]> {
  const r = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: max,
      WaitTimeSeconds: opts.wait ?? 0,
      ...(opts.visibility === undefined ? {} : { VisibilityTimeout: opts.visibility }),
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return r.Messages ?? [];
}

const bodies = (ms: readonly Message[]) => ms.map((m) => m.Body);
const receiveCounts = (ms: readonly Message[]) =>
  ms.map((m) => Number(m.Attributes?.ApproximateReceiveCount));

async function remove(sqs: SQSClient, url: string, ms: readonly Message[]): Promise<void> {
  const r = await sqs.send(
    new DeleteMessageBatchCommand({
      QueueUrl: url,
      Entries: ms.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
    }),
  );
  expect(r.Failed ?? []).toEqual([]);
}

const range = (group: string, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${group}:${from + i}`);

describe('FIFO receives as Amazon SQS', () => {
  it('hands out several messages of one group in one receive, in order, up to MaxNumberOfMessages', async () => {
    const { sqs } = local;
    const { url } = await fifoQueue(sqs);
    await send(sqs, url, range('a', 1, 13));
    const first = await receive(sqs, url, 3);
    expect(bodies(first)).toEqual(range('a', 1, 3));
    await remove(sqs, url, first);
    const second = await receive(sqs, url, 10);
    expect(bodies(second)).toEqual(range('a', 4, 13));
    expect(receiveCounts(second)).toEqual(Array(10).fill(1));
  });

  it('hands out nothing more of a group while one of its messages is in flight', async () => {
    const { sqs } = local;
    const { url } = await fifoQueue(sqs);
    await send(sqs, url, range('a', 1, 3));
    const [a1, a2] = await receive(sqs, url, 2);
    expect(bodies([a1!, a2!])).toEqual(['a:1', 'a:2']);
    expect(await receive(sqs, url, 10)).toEqual([]);
    await send(sqs, url, ['a:4']);
    await remove(sqs, url, [a1!]);
    // a:2 is still in flight: the group is still held.
    expect(await receive(sqs, url, 10)).toEqual([]);
    await remove(sqs, url, [a2!]);
    expect(bodies(await receive(sqs, url, 10))).toEqual(['a:3', 'a:4']);
  });

  it('takes the group of the oldest message first, each group in order, then fills from the next', async () => {
    const { sqs } = local;
    const { url } = await fifoQueue(sqs);
    await send(sqs, url, ['a:1', 'b:1', 'a:2', 'c:1', 'b:2', 'a:3']);
    expect(bodies(await receive(sqs, url, 4))).toEqual(['a:1', 'a:2', 'a:3', 'b:1']);
    // a is held (all of it in flight), b too (b:1 in flight): c, then nothing.
    expect(bodies(await receive(sqs, url, 10))).toEqual(['c:1']);
    expect(await receive(sqs, url, 10)).toEqual([]);

    const other = (await fifoQueue(sqs)).url;
    await send(sqs, other, ['a:1', 'b:1', 'a:2', 'b:2', 'a:3']);
    const as = await receive(sqs, other, 2);
    expect(bodies(as)).toEqual(['a:1', 'a:2']);
    expect(bodies(await receive(sqs, other, 2))).toEqual(['b:1', 'b:2']);
    await remove(sqs, other, as);
    expect(bodies(await receive(sqs, other, 2))).toEqual(['a:3']);
  });

  it('puts messages made visible back at their place: first in their group, their group by its age', async () => {
    const { sqs } = local;
    const { url } = await fifoQueue(sqs);
    await send(sqs, url, ['a:1', 'a:2', 'b:1', 'a:3', 'b:2']);
    const held = await receive(sqs, url, 3);
    expect(bodies(held)).toEqual(['a:1', 'a:2', 'a:3']);
    // Released one by one in their order (as a consumer gives back what it did not start).
    for (const m of held)
      await sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: url,
          ReceiptHandle: m.ReceiptHandle!,
          VisibilityTimeout: 0,
        }),
      );
    const again = await receive(sqs, url, 10);
    // a's oldest message is older than b's: a first, though b waited while a was away.
    expect(bodies(again)).toEqual(['a:1', 'a:2', 'a:3', 'b:1', 'b:2']);
    expect(receiveCounts(again)).toEqual([2, 2, 2, 1, 1]);
  });

  it('while one released message waits for the rest of its group, the group stays held', async () => {
    const { sqs } = local;
    const { url } = await fifoQueue(sqs);
    await send(sqs, url, range('a', 1, 3));
    const [a1, a2] = await receive(sqs, url, 2);
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: [{ Id: '0', ReceiptHandle: a2!.ReceiptHandle!, VisibilityTimeout: 0 }],
      }),
    );
    expect(await receive(sqs, url, 10)).toEqual([]);
    await remove(sqs, url, [a1!]);
    expect(bodies(await receive(sqs, url, 10))).toEqual(['a:2', 'a:3']);
  });

  it('brings a batch whose visibility timed out back first, in order, before the later messages of its group', async () => {
    const { sqs } = local;
    const { url } = await fifoQueue(sqs);
    await send(sqs, url, range('a', 1, 5));
    expect(bodies(await receive(sqs, url, 3, { visibility: 1 }))).toEqual(range('a', 1, 3));
    // Held for the second the visibility lasts; the long poll ends when they are back.
    let back: Message[] = [];
    while (back.length === 0) back = await receive(sqs, url, 10, { wait: 5 });
    expect(bodies(back)).toEqual(range('a', 1, 5));
    expect(receiveCounts(back)).toEqual([2, 2, 2, 1, 1]);
  });

  it('keeps fauxqs receive counts and redrive: past maxReceiveCount the messages move to the DLQ in order', async () => {
    const { sqs } = local;
    const { url, dlqUrl } = await fifoQueue(sqs, {}, { maxReceiveCount: 2 });
    await send(sqs, url, ['a:1', 'a:2', 'b:1']);
    // Visibility 0: each receive's messages are available again at the next receive.
    expect(receiveCounts(await receive(sqs, url, 10, { visibility: 0 }))).toEqual([1, 1, 1]);
    expect(receiveCounts(await receive(sqs, url, 10, { visibility: 0 }))).toEqual([2, 2, 2]);
    expect(await receive(sqs, url, 10, { visibility: 0 })).toEqual([]);
    expect(bodies(await receive(sqs, dlqUrl!, 10))).toEqual(['a:1', 'a:2', 'b:1']);
  });

  it("keeps the queue's delay and deduplication", async () => {
    const { sqs } = local;
    const { url } = await fifoQueue(sqs, { DelaySeconds: '1' });
    await send(sqs, url, ['a:1', 'a:2']);
    // The same deduplication id again: accepted, not enqueued.
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [{ Id: '0', MessageBody: 'a:1', MessageGroupId: 'a', MessageDeduplicationId: 'a:1-0' }],
      }),
    );
    expect(await receive(sqs, url, 10)).toEqual([]);
    let got: Message[] = [];
    while (got.length === 0) got = await receive(sqs, url, 10, { wait: 5 });
    expect(bodies(got)).toEqual(['a:1', 'a:2']);
  });
});

describe('the switch: SQS_FAUXQS', () => {
  let plain: TestSqs;
  beforeAll(async () => {
    const s = await startLocalSqs({ backend: 'fauxqs', fauxqs: 'plain' });
    plain = { ...s, sqs: createSqsClient({ endpoint: s.endpoint, region: 'us-east-1' }) };
  });
  afterAll(async () => {
    plain?.sqs.destroy();
    await plain?.stop();
  });

  it('is as Amazon SQS by default, plain fauxqs when asked, and refuses anything else', () => {
    expect(chooseFauxqsFifo({}, {})).toBe('sqs');
    expect(chooseFauxqsFifo({}, { SQS_FAUXQS: '' })).toBe('sqs');
    expect(chooseFauxqsFifo({}, { SQS_FAUXQS: 'plain' })).toBe('plain');
    expect(chooseFauxqsFifo({ fauxqs: 'sqs' }, { SQS_FAUXQS: 'plain' })).toBe('sqs');
    expect(() => chooseFauxqsFifo({}, { SQS_FAUXQS: 'fast' })).toThrow(
      "SQS_FAUXQS must be sqs or plain, not 'fast'",
    );
    expect(plain.fauxqs).toBe('plain');
  });

  it('plain: fauxqs 2.4.1 as published, one message per group per receive', async () => {
    const { sqs } = plain;
    const { url } = await fifoQueue(sqs);
    await send(sqs, url, ['a:1', 'a:2', 'b:1', 'a:3']);
    const first = await receive(sqs, url, 10);
    expect(bodies(first)).toEqual(['a:1', 'b:1']);
    await remove(sqs, url, first);
    expect(bodies(await receive(sqs, url, 10))).toEqual(['a:2']);
  });
});
