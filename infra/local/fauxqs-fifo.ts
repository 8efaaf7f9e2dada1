/**
 * The embedded SQS server's FIFO receives made Amazon SQS's: the one place where this project
 * changes how fauxqs behaves (docs/adr/031-fauxqs-fifo-receives-as-sqs.md). `SQS_FAUXQS=plain`
 * (or `startLocalSqs({ fauxqs: 'plain' })`) leaves fauxqs as published.
 *
 * fauxqs 2.4.1 hands out at most one message per FIFO group per ReceiveMessage. Amazon SQS returns
 * as many available messages of one group as it can (up to MaxNumberOfMessages, in order), then
 * messages of other groups, each group in its order; a group with a message in flight yields
 * nothing until that message is deleted or visible again ("FIFO queue delivery logic",
 * SQSDeveloperGuide/FIFO-queues-understanding-logic.html). So here, per FIFO queue:
 *   - receive: the available groups in the order of their oldest message (SQS reads the queue from
 *     its oldest message), from each as many as the count left allows;
 *   - a message that comes back (visibility expired or set to 0) goes back to its place in its
 *     group by sequence number. fauxqs puts each at the front, which, once several of a group are
 *     in flight together, reverses them.
 * Everything else is fauxqs's own, unchanged: group holds (`fifoLockedGroups`, one count per
 * message in flight), receive counts and the redrive to the dead-letter queue at receive,
 * visibility timeouts, the queue's delay, deduplication, long polls, standard queues.
 *
 * fauxqs exports only its app; the store classes are its own files, reached beside its entry
 * point and handed to buildApp through its `stores` option. The shapes relied on are checked when
 * a queue is made, so another fauxqs version fails loudly here instead of behaving differently.
 */
import { randomUUID } from 'node:crypto';
import type { BuildAppOptions } from 'fauxqs';

export type FauxqsStores = NonNullable<BuildAppOptions['stores']>;
type SqsStore = FauxqsStores['sqsStore'];
type SqsQueue = ReturnType<SqsStore['createQueue']>;
type SqsMessage = SqsQueue['messages'][number];
type Received = ReturnType<SqsQueue['dequeue']>[number];
type DlqResolver = Parameters<SqsQueue['dequeue']>[2];

/** The version whose internals this file follows (package.json pins it). */
export const FAUXQS_VERSION = '2.4.1';

/** fauxqs's group of a FIFO message sent without one (its DEFAULT_FIFO_GROUP_ID). */
const NO_GROUP = '__default';

/** fauxqs's stores, with every FIFO queue the SQS store makes receiving as Amazon SQS does. */
export async function fauxqsStoresAsSqs(): Promise<FauxqsStores> {
  const entry = import.meta.resolve('fauxqs');
  const load = async (path: string, name: string): Promise<new () => unknown> => {
    const mod: Record<string, unknown> = await import(new URL(path, entry).href);
    const cls = mod[name];
    if (typeof cls !== 'function')
      throw new Error(`fauxqs: ${path} has no ${name} (not fauxqs ${FAUXQS_VERSION}?)`);
    return cls as new () => unknown;
  };
  const [Sqs, Sns, S3] = await Promise.all([
    load('./sqs/sqsStore.js', 'SqsStore'),
    load('./sns/snsStore.js', 'SnsStore'),
    load('./s3/s3Store.js', 'S3Store'),
  ]);
  const stores = { sqsStore: new Sqs(), snsStore: new Sns(), s3Store: new S3() } as FauxqsStores;
  const createQueue = stores.sqsStore.createQueue.bind(stores.sqsStore);
  stores.sqsStore.createQueue = (...args) => {
    const queue = createQueue(...args);
    if (queue.isFifo()) receiveAsSqs(queue);
    return queue;
  };
  return stores;
}

/** Replaces, on this FIFO queue only, the three methods that decide what a receive returns. */
function receiveAsSqs(queue: SqsQueue): void {
  checkShape(queue);
  const heads = new GroupHeads();
  HEADS.set(queue, heads);
  const plainChangeVisibility = queue.changeVisibility.bind(queue);
  const plainEnqueue = queue.enqueue.bind(queue);
  const plainDelete = queue.deleteMessage.bind(queue);
  const plainPurge = queue.purge.bind(queue);
  // fauxqs's own writes that can make a group available or change its head: noted, nothing else.
  queue.enqueue = (msg) => {
    plainEnqueue(msg);
    noteGroup(queue, msg.messageGroupId ?? NO_GROUP);
  };
  queue.deleteMessage = (receiptHandle) => {
    const groupId = queue.inflightMessages.get(receiptHandle)?.message.messageGroupId;
    const deleted = plainDelete(receiptHandle);
    if (groupId !== undefined) noteGroup(queue, groupId);
    return deleted;
  };
  queue.purge = () => {
    plainPurge();
    heads.clear();
  };
  queue.dequeue = (maxCount, visibilityTimeoutOverride, dlqResolver) =>
    dequeueFifo(queue, maxCount, visibilityTimeoutOverride, dlqResolver);
  queue.processTimers = () => processTimersFifo(queue);
  queue.changeVisibility = (receiptHandle, timeoutSeconds) => {
    const entry = queue.inflightMessages.get(receiptHandle);
    if (!entry || timeoutSeconds !== 0) return plainChangeVisibility(receiptHandle, timeoutSeconds);
    // Visible now: back to its place in its group (fauxqs: to the group's front).
    queue.inflightMessages.delete(receiptHandle);
    queue.persistence?.updateMessageReady(entry.message.messageId);
    release(queue, entry.message);
    notifyWaiters(queue);
  };
}

function checkShape(queue: SqsQueue): void {
  const ok =
    queue.fifoMessages instanceof Map &&
    queue.fifoDelayed instanceof Map &&
    queue.fifoLockedGroups instanceof Map &&
    queue.inflightMessages instanceof Map &&
    Array.isArray(queue.pollWaiters);
  if (!ok)
    throw new Error(
      `fauxqs: its FIFO queue is not the one of fauxqs ${FAUXQS_VERSION} that infra/local/fauxqs-fifo.ts follows`,
    );
}

/** Older first: sequence numbers are zero-padded to 20 digits, so strings compare as numbers. */
const before = (a: SqsMessage, b: SqsMessage) => (a.sequenceNumber ?? '') < (b.sequenceNumber ?? '');

/** Puts a message back into its group's available messages at its sequence number's place. */
function insertInOrder(queue: SqsQueue, groupId: string, msg: SqsMessage): void {
  const group = queue.fifoMessages.get(groupId) ?? [];
  let lo = 0;
  let hi = group.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(group[mid]!, msg)) lo = mid + 1;
    else hi = mid;
  }
  group.splice(lo, 0, msg);
  queue.fifoMessages.set(groupId, group);
  noteGroup(queue, groupId);
}

/** A message of the group is no longer in flight: one hold less, and the message is available again. */
function release(queue: SqsQueue, msg: SqsMessage): void {
  const groupId = msg.messageGroupId ?? NO_GROUP;
  const holds = (queue.fifoLockedGroups.get(groupId) ?? 1) - 1;
  if (holds <= 0) queue.fifoLockedGroups.delete(groupId);
  else queue.fifoLockedGroups.set(groupId, holds);
  insertInOrder(queue, groupId, msg);
}

/** fauxqs's notifyWaiters (private there): wakes every open long poll, which then receives. */
function notifyWaiters(queue: SqsQueue): void {
  for (let w = queue.pollWaiters.shift(); w; w = queue.pollWaiters.shift()) {
    clearTimeout(w.timer);
    w.resolve();
  }
}

/** fauxqs's processTimers for a FIFO queue, with expired messages put back in order. */
function processTimersFifo(queue: SqsQueue): void {
  const now = Date.now();
  for (const [handle, entry] of queue.inflightMessages) {
    if (entry.visibilityDeadline > now) continue;
    queue.inflightMessages.delete(handle);
    release(queue, entry.message);
  }
  // The queue's delay (FIFO queues have no per-message delay): as fauxqs, to the group's end.
  for (const [groupId, delayed] of queue.fifoDelayed) {
    const still: SqsMessage[] = [];
    for (const msg of delayed) {
      if (msg.delayUntil && msg.delayUntil > now) still.push(msg);
      else insertInOrder(queue, groupId, msg);
    }
    if (still.length === 0) queue.fifoDelayed.delete(groupId);
    else queue.fifoDelayed.set(groupId, still);
  }
  if (HEADS.get(queue)!.hasAvailable(queue)) notifyWaiters(queue);
}

/**
 * One FIFO receive as Amazon SQS makes it: the available groups by their oldest message, each
 * handing out its messages in order until `maxCount` (≤ 10) is reached. What happens to each
 * message handed out (receive count, first-receive time, the dead-letter move past the redrive
 * policy's maxReceiveCount, visibility, the group's hold) is fauxqs's dequeueFifo's, line for line.
 */
function dequeueFifo(
  queue: SqsQueue,
  maxCount: number,
  visibilityTimeoutOverride: number | undefined,
  dlqResolver: DlqResolver,
): Received[] {
  queue.processTimers();
  const visibilityTimeout =
    visibilityTimeoutOverride ?? Number.parseInt(queue.attributes.VisibilityTimeout ?? '30', 10);
  let maxReceiveCount = Number.POSITIVE_INFINITY;
  let dlqArn: string | undefined;
  if (queue.attributes.RedrivePolicy) {
    try {
      const policy: { maxReceiveCount?: number; deadLetterTargetArn?: string } = JSON.parse(
        queue.attributes.RedrivePolicy,
      );
      maxReceiveCount = policy.maxReceiveCount ?? Number.POSITIVE_INFINITY;
      dlqArn = policy.deadLetterTargetArn;
    } catch {
      // fauxqs ignores a policy it cannot read.
    }
  }
  const count = Math.min(maxCount, 10);
  const result: Received[] = [];
  // Each group taken ends held or empty (its last messages may have gone to the dead-letter
  // queue), so the next oldest available group is taken until the count is reached or none is left.
  const heads = HEADS.get(queue)!;
  while (result.length < count) {
    const groupId = heads.popOldestAvailable(queue);
    if (groupId === undefined) break;
    const groupMsgs = queue.fifoMessages.get(groupId)!;
    while (result.length < count && groupMsgs.length > 0) {
      const msg = groupMsgs.shift()!;
      msg.approximateReceiveCount++;
      if (!msg.approximateFirstReceiveTimestamp) msg.approximateFirstReceiveTimestamp = Date.now();
      if (dlqArn && dlqResolver && msg.approximateReceiveCount > maxReceiveCount) {
        const dlq = dlqResolver(dlqArn);
        if (dlq) {
          queue.spy?.addMessage({
            service: 'sqs',
            queueName: queue.name,
            messageId: msg.messageId,
            body: msg.body,
            messageAttributes: msg.messageAttributes,
            status: 'dlq',
            timestamp: Date.now(),
          });
          queue.persistence?.deleteMessage(msg.messageId);
          dlq.enqueue(msg);
          continue;
        }
      }
      const receiptHandle = randomUUID();
      const visibilityDeadline = Date.now() + visibilityTimeout * 1000;
      queue.inflightMessages.set(receiptHandle, { message: msg, receiptHandle, visibilityDeadline });
      queue.persistence?.updateMessageInflight(
        msg.messageId,
        receiptHandle,
        visibilityDeadline,
        msg.approximateReceiveCount,
        msg.approximateFirstReceiveTimestamp,
      );
      const received: Received = {
        MessageId: msg.messageId,
        ReceiptHandle: receiptHandle,
        MD5OfBody: msg.md5OfBody,
        Body: msg.body,
      };
      if (msg.md5OfMessageAttributes) received.MD5OfMessageAttributes = msg.md5OfMessageAttributes;
      if (Object.keys(msg.messageAttributes).length > 0) received.MessageAttributes = msg.messageAttributes;
      result.push(received);
      // One hold per message in flight: the group is handed out again when all are deleted or back.
      queue.fifoLockedGroups.set(groupId, (queue.fifoLockedGroups.get(groupId) ?? 0) + 1);
    }
    if (groupMsgs.length === 0) queue.fifoMessages.delete(groupId);
    else noteGroup(queue, groupId);
  }
  return result;
}

/** Each FIFO queue's group heads (made when the queue is). */
const HEADS = new WeakMap<SqsQueue, GroupHeads>();

/** The group's first message while the group can be handed out (no message of it in flight). */
const availableHead = (queue: SqsQueue, groupId: string): SqsMessage | undefined =>
  queue.fifoLockedGroups.has(groupId) ? undefined : queue.fifoMessages.get(groupId)?.[0];

/** A group's head may have changed, or the group may have become available: noted for the next receive. */
function noteGroup(queue: SqsQueue, groupId: string): void {
  const head = availableHead(queue, groupId);
  if (head) HEADS.get(queue)?.push(head.sequenceNumber ?? '', groupId);
}

/**
 * The available groups by their head's sequence number, as a min-heap checked when taken: an
 * entry is current while its group is not held and its head still has that sequence number;
 * anything else is stale and dropped (every change that makes a group available or moves its head
 * adds an entry). A receive then costs O(log groups) instead of a pass over every group, which at
 * fleet scale (10,000 groups waiting) was most of the embedded SQS server's time.
 */
class GroupHeads {
  private readonly heap: { seq: string; groupId: string }[] = [];

  push(seq: string, groupId: string): void {
    const h = this.heap;
    h.push({ seq, groupId });
    for (let i = h.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (h[p]!.seq <= h[i]!.seq) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  /** The oldest available group, taken off the heap (stale entries above it dropped). */
  popOldestAvailable(queue: SqsQueue): string | undefined {
    return this.dropStale(queue) ? this.pop()!.groupId : undefined;
  }

  /** Whether some group can be handed out (stale entries above the oldest dropped). */
  hasAvailable(queue: SqsQueue): boolean {
    return this.dropStale(queue);
  }

  clear(): void {
    this.heap.length = 0;
  }

  /** Drops stale entries from the top; true when the top is then a current one. */
  private dropStale(queue: SqsQueue): boolean {
    for (let top = this.heap[0]; top; top = this.heap[0]) {
      const head = availableHead(queue, top.groupId);
      if (head && (head.sequenceNumber ?? '') === top.seq) return true;
      this.pop();
    }
    return false;
  }

  private pop(): { seq: string; groupId: string } | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l]!.seq < h[m]!.seq) m = l;
        if (r < h.length && h[r]!.seq < h[m]!.seq) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i]!, h[m]!];
        i = m;
      }
    }
    return top;
  }
}
