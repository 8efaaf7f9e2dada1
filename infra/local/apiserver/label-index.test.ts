/**
 * Lists whose label selector requires a value read through the store's label index: the answer is
 * the same as a scan's (namespace, order, pages, updates and deletes followed), and a paged list
 * with a selector stops filtering once it has its page and knows whether more follow.
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
  const nsKind = kinds.get('', 'v1', 'namespaces')!;
  for (const name of ['a', 'b']) rest.create(nsKind, undefined, { metadata: { name } });
  const cm = kinds.get('', 'v1', 'configmaps')!;
  return { store, rest, cm };
}

const names = (r: { items: any[] }) => r.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);

describe('label index', () => {
  it('answers eq and in selectors as a scan would, across namespaces and in key order', () => {
    const { rest, cm } = setup();
    for (const [ns, name, tier] of [
      ['b', 'z', 'web'],
      ['a', 'y', 'db'],
      ['a', 'x', 'web'],
      ['b', 'c', 'cache'],
      ['a', 'n', undefined],
    ] as const)
      rest.create(cm, ns, { metadata: { name, labels: tier ? { tier } : {} } });
    expect(names(rest.list(cm, undefined, { labelSelector: 'tier=web' }))).toEqual(['a/x', 'b/z']);
    expect(names(rest.list(cm, 'a', { labelSelector: 'tier==web' }))).toEqual(['a/x']);
    expect(names(rest.list(cm, undefined, { labelSelector: 'tier in (db,cache)' }))).toEqual(['a/y', 'b/c']);
    expect(names(rest.list(cm, undefined, { labelSelector: 'tier in (web),tier!=web' }))).toEqual([]);
    expect(names(rest.list(cm, undefined, { labelSelector: 'tier=none' }))).toEqual([]);
    expect(names(rest.list(cm, undefined, { labelSelector: '!tier' }))).toEqual(['a/n']);
  });

  it('follows label changes and deletions', () => {
    const { rest, cm } = setup();
    rest.create(cm, 'a', { metadata: { name: 'm', labels: { tier: 'web' } } });
    rest.patch(cm, 'a', 'm', 'application/merge-patch+json', { metadata: { labels: { tier: 'db' } } });
    expect(names(rest.list(cm, undefined, { labelSelector: 'tier=web' }))).toEqual([]);
    expect(names(rest.list(cm, undefined, { labelSelector: 'tier=db' }))).toEqual(['a/m']);
    rest.delete(cm, 'a', 'm', {});
    expect(names(rest.list(cm, undefined, { labelSelector: 'tier=db' }))).toEqual([]);
    rest.create(cm, 'a', { metadata: { name: 'm', labels: { tier: 'db' } } });
    expect(names(rest.list(cm, undefined, { labelSelector: 'tier=db' }))).toEqual(['a/m']);
  });

  it('pages a selector list with continue tokens, without remainingItemCount', () => {
    const { rest, cm } = setup();
    for (let i = 0; i < 7; i++)
      rest.create(cm, 'a', { metadata: { name: `c${i}`, labels: { tier: i % 2 ? 'odd' : 'even' } } });
    const seen: string[] = [];
    for (const selector of ['tier=even', 'tier!=odd']) {
      seen.length = 0;
      let page = rest.list(cm, 'a', { labelSelector: selector, limit: 2 });
      seen.push(...names(page));
      while (page.continue) {
        expect(page.remainingItemCount).toBeUndefined();
        page = rest.list(cm, 'a', { labelSelector: selector, limit: 2, continue: page.continue });
        seen.push(...names(page));
      }
      expect(seen).toEqual(['a/c0', 'a/c2', 'a/c4', 'a/c6']);
    }
    // Exactly a page's worth: no continuation.
    expect(rest.list(cm, 'a', { labelSelector: 'tier=odd', limit: 3 }).continue).toBeUndefined();
  });
});
