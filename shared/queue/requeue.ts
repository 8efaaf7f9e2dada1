/**
 * Requeue-after on FIFO queues (docs/adr/002-requeue-after-on-fifo.md): FIFO queues have no
 * per-message delay, so a requeue goes to one standard queue with DelaySeconds (≤ 900 s per hop),
 * carrying the envelope (reason `requeue`, `notBefore`) and its FIFO group as an attribute. A
 * forwarder (the worker, or a small Lambda) moves due messages into the function's FIFO queue and
 * sends early ones round again, so delays beyond 15 minutes are chained hops.
 */
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type FunctionName, type MessageEnvelope, parseEnvelope } from '../../events/envelope.ts';
import { messageOf } from '../api/json.ts';
import { type Logger, silentLogger } from '../observability/logger.ts';
import { ATTR_GROUP, envelopeGroup, groupId, stringAttr, toBatchEntry } from './message.ts';

/** SQS's limit on DelaySeconds. */
export const MAX_DELAY_SECONDS = 900;

/** The grid step of a requeue-after's due time: a quarter of the delay, at most this (ADR 037). */
export const MAX_REQUEUE_GRID_MS = 15_000;

/**
 * When a requeue-after of `afterSeconds` decided at `nowMs` is due: at least that delay, rounded up
 * to a grid of a quarter of it (at most MAX_REQUEUE_GRID_MS), so the requeues that several passes
 * of one key decide within a grid step name one due time and so one deduplication id: the queue
 * keeps one of them (ADR 037), as a controller's work queue keeps a key once.
 */
export function requeueDue(afterSeconds: number, nowMs: number): number {
  const afterMs = Math.max(0, Math.round(afterSeconds * 1000));
  const step = Math.min(MAX_REQUEUE_GRID_MS, Math.floor(afterMs / 4));
  return step > 0 ? Math.ceil((nowMs + afterMs) / step) * step : nowMs + afterMs;
}

/**
 * The envelope of a requeue: same key, reason `requeue`, due time (`notBefore` when the core named
 * one, else on requeueDue's grid: equal decisions give equal deduplication ids), one more attempt.
 */
export function requeueEnvelope(
  msg: MessageEnvelope,
  afterSeconds: number,
  nowMs: number,
  notBefore?: number,
): MessageEnvelope {
  const { cause: _cause, ...rest } = msg;
  return {
    ...rest,
    reason: 'requeue',
    notBefore: notBefore ?? requeueDue(afterSeconds, nowMs),
    attempt: (msg.attempt ?? 0) + 1,
    observedAt: nowMs,
  };
}

/** Sends one hop of a requeue: the delay queue holds it for min(remaining, 900) seconds. */
export async function sendDelayed(
  sqs: SQSClient,
  requeueUrl: string,
  msg: MessageEnvelope,
  group: string,
  nowMs: number,
): Promise<void> {
  const remaining = Math.max(0, Math.ceil(((msg.notBefore ?? nowMs) - nowMs) / 1000));
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: requeueUrl,
      MessageBody: JSON.stringify(msg),
      DelaySeconds: Math.min(MAX_DELAY_SECONDS, remaining),
      MessageAttributes: { [ATTR_GROUP]: stringAttr(group) },
    }),
  );
}

export async function scheduleRequeue(
  sqs: SQSClient,
  requeueUrl: string,
  msg: MessageEnvelope,
  group: string | undefined,
  afterSeconds: number,
  nowMs = Date.now(),
  notBefore?: number,
): Promise<MessageEnvelope> {
  const next = requeueEnvelope(msg, afterSeconds, nowMs, notBefore);
  await sendDelayed(sqs, requeueUrl, next, group ?? envelopeGroup(msg), nowMs);
  return next;
}

export interface ForwardOptions {
  /** Long-poll wait (seconds; 0 returns at once). */
  waitTimeSeconds?: number | undefined;
  /** Messages due within this many ms are forwarded now (hops are whole seconds). */
  slackMs?: number | undefined;
  log?: Logger | undefined;
  abortSignal?: AbortSignal | undefined;
  now?: () => number;
}

export interface ForwardResult {
  received: number;
  forwarded: number;
  rescheduled: number;
  /** Bodies that were not envelopes (left for the requeue queue's DLQ). */
  malformed: number;
}

/** Forwards one message if due, re-delays it otherwise. Returns what it did. */
export async function forwardOne(
  sqs: SQSClient,
  urls: { main: Partial<Record<FunctionName, string>>; requeue: string },
  body: string,
  groupAttr: string | undefined,
  opts: { slackMs?: number | undefined; now?: () => number } = {},
): Promise<'forwarded' | 'rescheduled'> {
  const msg = parseEnvelope(body);
  const now = (opts.now ?? Date.now)();
  const group = groupAttr ?? envelopeGroup(msg);
  if ((msg.notBefore ?? 0) > now + (opts.slackMs ?? 1_000)) {
    await sendDelayed(sqs, urls.requeue, msg, group, now);
    return 'rescheduled';
  }
  const url = urls.main[msg.function];
  if (!url) throw new Error(`no queue for function ${msg.function}`);
  const entry = toBatchEntry({ msg, group: groupId(group) }, '0');
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: url,
      MessageBody: entry.MessageBody,
      MessageGroupId: entry.MessageGroupId,
      MessageDeduplicationId: entry.MessageDeduplicationId,
    }),
  );
  return 'forwarded';
}

/** One receive from the requeue queue, forwarding what is due. */
export async function forwardDueRequeues(
  sqs: SQSClient,
  urls: { main: Partial<Record<FunctionName, string>>; requeue: string },
  opts: ForwardOptions = {},
): Promise<ForwardResult> {
  const log = opts.log ?? silentLogger;
  const r = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: urls.requeue,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: opts.waitTimeSeconds ?? 0,
      MessageAttributeNames: [ATTR_GROUP],
    }),
    opts.abortSignal ? { abortSignal: opts.abortSignal } : {},
  );
  const messages: Message[] = r.Messages ?? [];
  const result: ForwardResult = { received: messages.length, forwarded: 0, rescheduled: 0, malformed: 0 };
  const done: Message[] = [];
  for (const m of messages) {
    try {
      const what = await forwardOne(
        sqs,
        urls,
        m.Body ?? '',
        m.MessageAttributes?.[ATTR_GROUP]?.StringValue,
        opts,
      );
      result[what]++;
      done.push(m);
    } catch (e) {
      // Not deleted: it comes back after the visibility timeout and, after maxReceiveCount, lands
      // in the requeue DLQ, where a human can look at it.
      result.malformed++;
      log.warn('requeue message not forwarded', { messageId: m.MessageId, error: messageOf(e) });
    }
  }
  if (done.length > 0) {
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: urls.requeue,
        Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
  }
  return result;
}
