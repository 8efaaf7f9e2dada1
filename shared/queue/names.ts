/**
 * Queue naming: one FIFO queue and one FIFO DLQ per function, plus one standard delay queue for
 * requeue-after (FIFO queues have no per-message delay; see docs/adr/002-requeue-after-on-fifo.md).
 * An optional prefix separates several installations on one account (`dev-`, `team-a-`).
 */
import { FUNCTION_NAMES, type FunctionName } from '../../events/envelope.ts';

export interface QueueNaming {
  prefix?: string | undefined;
}

const VALID = /^[A-Za-z0-9_-]*$/;

function checkPrefix(prefix: string): string {
  if (!VALID.test(prefix))
    throw new Error(`queue prefix '${prefix}' may only hold letters, digits, '-' and '_'`);
  return prefix;
}

export const queueName = (fn: FunctionName, n: QueueNaming = {}): string =>
  `${checkPrefix(n.prefix ?? '')}metal3fn-${fn}.fifo`;

export const dlqName = (fn: FunctionName, n: QueueNaming = {}): string =>
  `${checkPrefix(n.prefix ?? '')}metal3fn-${fn}-dlq.fifo`;

/** The standard queue whose DelaySeconds carries requeue-after (≤ 900 s per hop). */
export const requeueQueueName = (n: QueueNaming = {}): string =>
  `${checkPrefix(n.prefix ?? '')}metal3fn-requeue`;

/** Where requeue messages that cannot be forwarded end (standard queue, so a standard DLQ). */
export const requeueDlqName = (n: QueueNaming = {}): string =>
  `${checkPrefix(n.prefix ?? '')}metal3fn-requeue-dlq`;

/** The function a queue name belongs to (main or DLQ), or undefined for foreign queues. */
export function functionOfQueue(
  name: string,
  n: QueueNaming = {},
): { fn: FunctionName; dlq: boolean } | undefined {
  for (const fn of FUNCTION_NAMES) {
    if (name === queueName(fn, n)) return { fn, dlq: false };
    if (name === dlqName(fn, n)) return { fn, dlq: true };
  }
  return undefined;
}

/** `arn:aws:sqs:<region>:<account>:<name>` → its parts. */
export function parseQueueArn(arn: string): { region: string; account: string; name: string } | undefined {
  const m = /^arn:[^:]+:sqs:([^:]*):([^:]*):(.+)$/.exec(arn);
  return m ? { region: m[1]!, account: m[2]!, name: m[3]! } : undefined;
}

/** The last path segment of a queue URL is its name. */
export const queueNameOfUrl = (url: string): string => url.slice(url.lastIndexOf('/') + 1);
