/**
 * The history window's memory design: versions kept in the window share every subtree a write did
 * not change, so a status update does not copy the spec, and managedFields entries of managers a
 * write did not touch are the previous version's own.
 */
import { describe, expect, it } from 'vitest';
import { admit } from './admission.ts';
import { deterministicClock } from './clock.ts';
import { KindRegistry } from './kinds.ts';
import { Rest } from './rest.ts';
import { Store } from './store.ts';

function setup() {
  const store = new Store({});
  const kinds = new KindRegistry();
  const rest = new Rest(store, kinds, deterministicClock(), admit);
  rest.create(kinds.get('', 'v1', 'namespaces')!, undefined, {
    metadata: { name: 'n', labels: { team: 'a' } },
  });
  return { store, rest, cm: kinds.get('', 'v1', 'configmaps')!, ns: kinds.get('', 'v1', 'namespaces')! };
}

describe('versions in the history window', () => {
  it('a write shares what it did not change with the version before it', () => {
    const { store, rest, cm } = setup();
    const big = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'x'.repeat(100)]));
    rest.create(cm, 'n', { metadata: { name: 'c', labels: { a: '1' } }, data: big }, { fieldManager: 'one' });
    const from = store.rv;
    rest.patch(
      cm,
      'n',
      'c',
      'application/merge-patch+json',
      { metadata: { labels: { a: '2' } } },
      { fieldManager: 'two' },
    );
    const [ev] = store.eventsSince('/configmaps', from);
    expect(ev!.type).toBe('MODIFIED');
    expect(ev!.obj.metadata.labels).toEqual({ a: '2' });
    // The data (5 KB) is the previous version's object, not a copy.
    expect(ev!.obj.data).toBe(ev!.prev.data);
    // So is the managedFields entry of the manager the write did not touch.
    const one = (o: any) => o.metadata.managedFields.find((m: any) => m.manager === 'one');
    expect(one(ev!.obj).fieldsV1['f:data']).toBe(one(ev!.prev).fieldsV1['f:data']);
  });

  it('a status write shares metadata and spec; an unchanged write stores nothing', () => {
    const { store, rest, ns } = setup();
    const before = rest.get(ns, undefined, 'n');
    const from = store.rv;
    rest.update(ns, undefined, 'n', { ...before, status: { phase: 'Active' } }, { subresource: 'status' });
    expect(store.rv).toBe(from);
    rest.update(
      ns,
      undefined,
      'n',
      { ...before, status: { phase: 'Terminating' } },
      { subresource: 'status' },
    );
    const [ev] = store.eventsSince('/namespaces', from);
    expect(ev!.obj.spec).toBe(ev!.prev.spec);
    expect(ev!.obj.metadata.labels).toBe(ev!.prev.metadata.labels);
  });
});
