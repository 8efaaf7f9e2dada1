/** How the queues redeliver a failed message; every runtime that redelivers follows the same rule. */

/** Receives before a message moves to its DLQ (the redrive policy of every queue we create). */
export const MAX_RECEIVE_COUNT = 5;

/** Wait before the next receive after the n-th failed one: 1, 2, 4 … seconds, at most 300. */
export const retryBackoffSeconds = (receiveCount: number): number =>
  Math.min(300, 2 ** Math.max(0, receiveCount - 1));
