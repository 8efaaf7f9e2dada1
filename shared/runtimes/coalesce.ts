/**
 * A receive's messages for one key, coalesced (ADR 027): when a later message of the same group
 * names the same function and object, an earlier one is acknowledged without running. A message
 * is a key, not a payload (DESIGN.md §1), and every pass reads the current state, so the later
 * pass covers every event the earlier one was sent for: it was sent after them, and runs after
 * them. controller-runtime's workqueue collapses a key's events while it waits in the same way.
 *
 * Never coalesced: a message that fails to parse (dispatch dead-letters it with its reason), an
 * operator's replay (it should be seen to run), and a message not yet due or superseded only by one
 * not yet due (dispatch sends those round again: their time, not their key, is what they carry).
 */
import { type MessageEnvelope, parseEnvelope } from '../../events/envelope.ts';
import { messageKey } from '../queue/message.ts';
import { notYetDue } from './dispatch.ts';

export interface Receivable {
  /** The message body as the queue delivered it. */
  body: string | undefined;
  /** Its FIFO group (undefined: a standard queue, no order between messages). */
  group: string | undefined;
}

/** The messages of `batch` (in receive order) that a later one of the same group and key supersedes. */
export function supersededInBatch<T extends Receivable>(batch: readonly T[], now: number): Set<T> {
  const out = new Set<T>();
  const latest = new Map<string, T>();
  // From the end: the first eligible message seen for a key is its latest.
  for (let i = batch.length - 1; i >= 0; i--) {
    const item = batch[i]!;
    if (item.group === undefined) continue;
    const msg = eligible(item.body, now);
    if (!msg) continue;
    const key = `${item.group}\u0000${messageKey(msg)}`;
    if (latest.has(key)) out.add(item);
    else latest.set(key, item);
  }
  return out;
}

function eligible(body: string | undefined, now: number): MessageEnvelope | undefined {
  if (body === undefined) return undefined;
  let msg: MessageEnvelope;
  try {
    msg = parseEnvelope(body);
  } catch {
    return undefined;
  }
  if (msg.reason === 'replay') return undefined;
  if (notYetDue(msg, now)) return undefined;
  return msg;
}
