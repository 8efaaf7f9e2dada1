/**
 * A message on its way to a queue: the envelope (a key, never a payload) and its FIFO message
 * group, the serialization key. The group is the object's own key, except for allocations, which
 * are serialized per Metal3DataTemplate / IPPool (so one template's indexes are chosen one at a time).
 */
import { createHash } from 'node:crypto';
import type { MessageAttributeValue, SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { deduplicationId, type MessageEnvelope } from '../../events/envelope.ts';

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

/** The default group of an envelope: its own object. */
export const envelopeGroup = (m: MessageEnvelope): string => objectGroup(m.kind, m.namespace, m.name);

/** The key the relay coalesces on: one pending message per function and object. */
export const coalesceKey = (r: RoutedMessage): string =>
  `${r.msg.function}|${r.msg.cluster}|${r.msg.kind}/${r.msg.namespace ?? ''}/${r.msg.name}`;

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
