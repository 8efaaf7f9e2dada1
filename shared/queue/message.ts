/**
 * A message on its way to a queue: the envelope (a key, never a payload) and its FIFO message
 * group, the serialization key. The group is the object's own key, except for allocations, which
 * are serialized per Metal3DataTemplate / IPPool (so one template's indexes are chosen one at a time).
 */
import { createHash } from 'node:crypto';
import type { MessageAttributeValue, SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { deduplicationId, type MessageEnvelope } from '../../events/envelope.ts';
import type { ObjectKey } from '../reconcile/context.ts';

export interface RoutedMessage {
  msg: MessageEnvelope;
  group: string;
}

/** SQS: MessageGroupId ≤ 128 characters; longer keys keep a readable head and a hash tail. */
export function groupId(key: string): string {
  if (key.length <= 128) return key;
  const hash = createHash('sha256').update(key).digest('base64url').slice(0, 22);
  return `${key.slice(0, 105)}~${hash}`;
}

/** The serialization key of one object: `Kind/namespace/name`. */
export const objectGroup = (kind: string, namespace: string | undefined, name: string): string =>
  groupId(`${kind}/${namespace ?? ''}/${name}`);

/**
 * The object a group serializes by, read back from `objectGroup`'s form; undefined for a group
 * that is not one (a hashed long key, a hand-sent message's own group).
 */
export function groupObject(group: string): ObjectKey | undefined {
  const m = /^([A-Za-z][A-Za-z0-9]*)\/([a-z0-9-]*)\/([a-z0-9][a-z0-9.-]*)$/.exec(group);
  if (!m) return undefined;
  return { kind: m[1]!, ...(m[2] ? { namespace: m[2] } : {}), name: m[3]! };
}

/** The default group of an envelope: its own object. */
export const envelopeGroup = (m: MessageEnvelope): string => objectGroup(m.kind, m.namespace, m.name);

/** A delivery's key: one function and object (the relay coalesces on it; dispatch runs one at a time). */
export const messageKey = (m: MessageEnvelope): string =>
  `${m.function}|${m.cluster}|${m.kind}/${m.namespace ?? ''}/${m.name}`;

/** The key the relay coalesces on: one pending message per function and object. */
export const coalesceKey = (r: RoutedMessage): string => messageKey(r.msg);

export function toBatchEntry(r: RoutedMessage, id: string): SendMessageBatchRequestEntry {
  return {
    Id: id,
    MessageBody: JSON.stringify(r.msg),
    MessageGroupId: groupId(r.group),
    MessageDeduplicationId: deduplicationId(r.msg),
  };
}

/** Message attribute names we use on the wire. */
export const ATTR_GROUP = 'group';
export const ATTR_REASON = 'reason';
export const ATTR_SOURCE_QUEUE = 'source-queue';
export const ATTR_SOURCE_MESSAGE_ID = 'source-message-id';

export const stringAttr = (v: string): MessageAttributeValue => ({ DataType: 'String', StringValue: v });
