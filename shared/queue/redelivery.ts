/**
 * How the queues redeliver a failed message; every runtime that redelivers follows the same rule
 * (docs/adr/017-retry-backoff.md).
 *
 * - A failed message waits 1, 2, 4 … seconds (at most 300) by its receive count before its next
 *   receive; the messages of its FIFO group held back behind it wait as long (the group's wait is
 *   the schedule at the highest receive count among them, so no message of the group is received
 *   again sooner than its own count allows).
 * - A message failing at its MAX_RECEIVE_COUNT-th receive is dead-lettered by the runtime with the
 *   error as its reason, and the rest of its group runs: a message held back behind it is never
 *   dead-lettered for its failure. The queues' redrive policy has the same limit, a backstop for
 *   what never reaches the runtime's verdict (a crash, a timeout).
 */

/** Receives before a message is dead-lettered (the redrive policy of every queue we create). */
export const MAX_RECEIVE_COUNT = 12;

/**
 * The requeue delay queue's limit: only a body its forwarder cannot read fails there (ADR 002), and
 * no FIFO group waits behind it.
 */
export const REQUEUE_MAX_RECEIVE_COUNT = 5;

/** Wait before the next receive after the n-th failed one: 1, 2, 4 … seconds, at most 300. */
export const retryBackoffSeconds = (receiveCount: number): number =>
  Math.min(300, 2 ** Math.max(0, receiveCount - 1));

/** The wait of a failed FIFO group: the schedule at the highest receive count among its held messages. */
export const groupBackoffSeconds = (
  receiveCounts: readonly number[],
  schedule: (receiveCount: number) => number = retryBackoffSeconds,
): number => schedule(Math.max(1, ...receiveCounts));

/**
 * The least time between a message's first receive and its n-th, when every receive before failed
 * or was held back behind a failure: the sum of the waits of receives 1 … n-1.
 */
export function secondsBeforeReceive(n: number, schedule = retryBackoffSeconds): number {
  let s = 0;
  for (let k = 1; k < n; k++) s += schedule(k);
  return s;
}

/** The reason a message dead-lettered after failing its last receive carries. */
export const retriesExhausted = (receives: number, error: string): string =>
  `failed ${receives} receives; last error: ${error}`;

/** A message's receive count as the queue reports it (the attribute is a string; absent = first). */
export function receiveCountOf(attribute: string | undefined): number {
  const n = Number(attribute);
  return Number.isInteger(n) && n > 0 ? n : 1;
}
