/**
 * Malformed messages, one of each kind a queue can carry: every runtime dead-letters each with the
 * reason given here, before any core runs (the runtime contract suite and the bad-input corpus).
 */
import { MAX_MESSAGE_BYTES, type MessageEnvelope } from '../../events/envelope.ts';

export interface Poison {
  label: string;
  body: string;
  reason: RegExp;
}

/** Poisons for a queue of `good.function`, varied from `good`; `other` is a good message for another function. */
export function poisons(good: MessageEnvelope, other: MessageEnvelope): Poison[] {
  return [
    {
      label: 'not JSON',
      body: `{"function":"${good.function}","kind":"${good.kind}"`,
      reason: /message is not JSON/,
    },
    { label: 'not an object', body: '[1,2,3]', reason: /invalid message/ },
    {
      label: 'missing name',
      body: JSON.stringify({ ...good, name: undefined }),
      reason: /invalid message: name/,
    },
    {
      label: 'unknown field',
      body: JSON.stringify({ ...good, payload: { spec: {} } }),
      reason: /invalid message.*payload/i,
    },
    {
      label: 'bad name',
      body: JSON.stringify({ ...good, name: '../../etc/passwd' }),
      reason: /name must be a DNS-1123/,
    },
    {
      label: 'unknown function',
      body: JSON.stringify({ ...good, function: 'formatDisks' }),
      reason: /invalid message: function/,
    },
    {
      label: 'unknown kind',
      body: JSON.stringify({ ...good, apiVersion: 'apps/v1', kind: 'StatefulSet' }),
      reason: /unknown kind 'StatefulSet'/,
    },
    {
      label: 'oversized',
      body: JSON.stringify(good).replace('{', `{${' '.repeat(MAX_MESSAGE_BYTES)}`),
      reason: /message too large/,
    },
    {
      label: 'for another function',
      body: JSON.stringify(other),
      reason: new RegExp(`message for function '${other.function}' reached ${good.function}`),
    },
  ];
}
