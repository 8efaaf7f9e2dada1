/** Which messages of a receive a later one of the same group and key supersedes (ADR 027). */
import { describe, expect, it } from 'vitest';
import type { MessageEnvelope } from '../../../events/envelope.ts';
import { supersededInBatch } from '../../../shared/runtimes/coalesce.ts';
import { envelope } from '../../helpers/messages.ts';

const NOW = 1_800_000_000_000;

interface Item {
  id: string;
  body: string | undefined;
  group: string | undefined;
}

/** `group` null: a standard queue's message (no group). */
const item = (id: string, over: Partial<MessageEnvelope>, group: string | null = 'g'): Item => ({
  id,
  body: JSON.stringify(envelope(over)),
  group: group ?? undefined,
});

const cases: { name: string; batch: Item[]; superseded: string[] }[] = [
  {
    name: 'two messages of one key in one group: the earlier',
    batch: [item('a1', { name: 'a', resourceVersion: '1' }), item('a2', { name: 'a', resourceVersion: '2' })],
    superseded: ['a1'],
  },
  {
    name: 'three of one key, another key between them: all but the last of the key',
    batch: [
      item('a1', { name: 'a', reason: 'added' }),
      item('b1', { name: 'b' }),
      item('a2', { name: 'a', reason: 'related', cause: 'Machine/metal3/a@7' }),
      item('a3', { name: 'a', reason: 'deleted' }),
    ],
    superseded: ['a1', 'a2'],
  },
  {
    name: 'different keys of one group (allocateIndex claims of one template): none',
    batch: [item('a', { name: 'a' }), item('b', { name: 'b' }), item('c', { name: 'c' })],
    superseded: [],
  },
  {
    name: 'one object for two functions: different keys',
    batch: [item('s', { name: 'a' }), item('r', { name: 'a', function: 'resolveProviderID' })],
    superseded: [],
  },
  {
    name: 'one name in a workload cluster and in the management cluster: different keys',
    batch: [item('w', { name: 'a', cluster: 'metal3/c1' }), item('m', { name: 'a' })],
    superseded: [],
  },
  {
    name: 'one key in two groups: no order between them, none',
    batch: [item('a1', { name: 'a' }, 'g1'), item('a2', { name: 'a' }, 'g2')],
    superseded: [],
  },
  {
    name: 'a standard queue (no group): none',
    batch: [item('a1', { name: 'a' }, null), item('a2', { name: 'a' }, null)],
    superseded: [],
  },
  {
    name: 'an operator replay is never superseded',
    batch: [item('r', { name: 'a', reason: 'replay', attempt: 0 }), item('a', { name: 'a' })],
    superseded: [],
  },
  {
    name: 'nor does it supersede',
    batch: [item('a', { name: 'a' }), item('r', { name: 'a', reason: 'replay', attempt: 0 })],
    superseded: [],
  },
  {
    name: 'a later message not yet due does not supersede (its time is what it carries)',
    batch: [
      item('a', { name: 'a' }),
      item('later', { name: 'a', reason: 'requeue', attempt: 1, notBefore: NOW + 60_000 }),
    ],
    superseded: [],
  },
  {
    name: 'an earlier message not yet due is not superseded',
    batch: [
      item('later', { name: 'a', reason: 'requeue', attempt: 1, notBefore: NOW + 60_000 }),
      item('a', { name: 'a' }),
    ],
    superseded: [],
  },
  {
    name: 'a requeue that is due is superseded like any message',
    batch: [
      item('due', { name: 'a', reason: 'requeue', attempt: 1, notBefore: NOW - 5_000 }),
      item('a', { name: 'a' }),
    ],
    superseded: ['due'],
  },
  {
    name: 'a message that does not parse is left to dispatch (dead-lettered with its reason)',
    batch: [
      { id: 'bad', body: '{"function":"selectHost"', group: 'g' },
      { id: 'bad2', body: undefined, group: 'g' },
      item('a', { name: 'a' }),
    ],
    superseded: [],
  },
];

describe('supersededInBatch', () => {
  it.each(cases)('$name', ({ batch, superseded }) => {
    const out = supersededInBatch(batch, NOW);
    expect([...out].map((i) => i.id).sort()).toEqual([...superseded].sort());
  });
});
