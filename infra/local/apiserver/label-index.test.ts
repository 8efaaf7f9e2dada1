/**
 * Lists whose label selector requires a value, or requires a label absent, or whose field selector
 * names a value (`=` or `!=`), read through the store's indexes (list-index.ts): the answer is the same as a scan's (namespace, order, pages, updates and
 * deletes followed), and a paged list with a selector stops filtering once it has its page and
 * knows whether more follow.
 */
import { describe, expect, it } from 'vitest';
import { admit } from './admission.ts';
import { deterministicClock } from './clock.ts';
import { KindRegistry } from './kinds.ts';
import { matchesLabels, parseLabelSelector } from './labels.ts';
import { Rest } from './rest.ts';
import { SortedKeys } from './sorted-keys.ts';
import { Store } from './store.ts';

function setup() {
  const store = new Store({});
  const kinds = new KindRegistry();
  const rest = new Rest(store, kinds, deterministicClock(), admit);
  const nsKind = kinds.get('', 'v1', 'namespaces')!;
  for (const name of ['a', 'b']) rest.create(nsKind, undefined, { metadata: { name } });
  const cm = kinds.get('', 'v1', 'configmaps')!;
  return { store, rest, cm, kinds };
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

  it('answers `!key` as a scan would while labels come and go, whichever term narrows', () => {
    const { rest, cm } = setup();
    // The oracle: every object of the list without a selector, tested one by one.
    const scan = (ns: string | undefined, selector: string) =>
      names({
        items: rest
          .list(cm, ns, {})
          .items.filter((o) => matchesLabels(parseLabelSelector(selector), o.metadata.labels)),
      });
    for (let i = 0; i < 12; i++)
      rest.create(cm, i % 3 ? 'a' : 'b', {
        metadata: { name: `h${String(i).padStart(2, '0')}`, ...(i % 2 ? { labels: { role: 'w' } } : {}) },
      });
    const selectors = ['!consumer', 'role=w,!consumer', '!consumer,!role', 'role=w,!consumer,!owner'];
    const check = () => {
      for (const sel of selectors)
        for (const ns of [undefined, 'a', 'b'])
          expect(names(rest.list(cm, ns, { labelSelector: sel })), `${ns ?? 'all'} ${sel}`).toEqual(
            scan(ns, sel),
          );
    };
    check();
    // Claims come in name order (the free hosts are the later names) and go again.
    for (const [ns, name] of [
      ['b', 'h00'],
      ['a', 'h01'],
      ['a', 'h02'],
      ['b', 'h03'],
    ] as const)
      rest.patch(cm, ns, name, 'application/merge-patch+json', { metadata: { labels: { consumer: 'm' } } });
    check();
    expect(names(rest.list(cm, 'a', { labelSelector: 'role=w,!consumer', limit: 1 }))).toEqual(['a/h05']);
    rest.patch(cm, 'a', 'h01', 'application/merge-patch+json', { metadata: { labels: { consumer: null } } });
    rest.delete(cm, 'a', 'h05', {});
    rest.create(cm, 'a', { metadata: { name: 'h99' } });
    check();
    // Pages of a `!key` list follow on from their continue token.
    const seen: string[] = [];
    let page = rest.list(cm, undefined, { labelSelector: '!consumer', limit: 2 });
    seen.push(...names(page));
    while (page.continue) {
      page = rest.list(cm, undefined, { labelSelector: '!consumer', limit: 2, continue: page.continue });
      seen.push(...names(page));
    }
    expect(seen).toEqual(scan(undefined, '!consumer'));
    // Beyond the indexes kept per resource, a `!key` list is a scan: the same answers.
    for (let i = 0; i < 20; i++) {
      expect(names(rest.list(cm, 'a', { labelSelector: `!k${i}` }))).toEqual(scan('a', `!k${i}`));
      expect(names(rest.list(cm, 'a', { labelSelector: `!k${i},!consumer` }))).toEqual(
        scan('a', '!consumer'),
      );
    }
  });
});

describe('SortedKeys', () => {
  it('iterates in order from a key within a prefix, as a sorted copy of a plain set would', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return (seed % 1000) / 1000;
    };
    const keys = new SortedKeys();
    const model = new Set<string>();
    for (let step = 0; step < 3000; step++) {
      const k = `${random() < 0.5 ? 'a' : 'b'}/${Math.floor(random() * 400)}`;
      // Bursts of adds (a sort) and trickles (inserts), deletes between, reads throughout.
      if (random() < 0.6) {
        keys.add(k);
        model.add(k);
      } else expect(keys.delete(k)).toBe(model.delete(k));
      if (step % (step < 1500 ? 97 : 3) === 0) {
        const start = `b/${Math.floor(random() * 400)}`;
        expect([...keys.from(start, 'b/')]).toEqual(
          [...model].filter((x) => x.startsWith('b/') && x >= start).sort(),
        );
        expect([...keys.from('')]).toEqual([...model].sort());
        expect(keys.size).toBe(model.size);
      }
    }
  });
});

describe('field index', () => {
  it('answers `=` and `!=` field selectors as a scan would while values change, alone or with labels', () => {
    const { rest, kinds } = setup();
    const ev = kinds.get('', 'v1', 'events')!;
    const scan = (ns: string | undefined, field: string, value: string, neq: boolean) =>
      names({
        items: rest.list(ev, ns, {}).items.filter((o) => (String(o[field] ?? '') === value) !== neq),
      });
    for (let i = 0; i < 12; i++)
      rest.create(ev, i % 3 ? 'a' : 'b', {
        metadata: { name: `e${String(i).padStart(2, '0')}`, labels: i % 2 ? { tier: 'x' } : {} },
        involvedObject: { kind: 'Pod', name: `p${i}`, namespace: i % 3 ? 'a' : 'b' },
        ...(i % 4 ? { reason: i % 4 === 1 ? 'Started' : 'Pulled' } : {}),
      });
    const check = () => {
      for (const ns of [undefined, 'a', 'b'])
        for (const value of ['Started', 'Pulled', '', 'None'])
          for (const neq of [false, true]) {
            const sel = `reason${neq ? '!=' : '='}${value}`;
            expect(names(rest.list(ev, ns, { fieldSelector: sel })), `${ns ?? 'all'} ${sel}`).toEqual(
              scan(ns, 'reason', value, neq),
            );
          }
      expect(names(rest.list(ev, undefined, { fieldSelector: 'involvedObject.name=p7' }))).toEqual(['a/e07']);
      expect(
        names(rest.list(ev, undefined, { fieldSelector: 'reason=Started', labelSelector: 'tier=x' })),
      ).toEqual(scan(undefined, 'reason', 'Started', false).filter((n) => Number(n.slice(3)) % 2));
    };
    check();
    rest.patch(ev, 'a', 'e01', 'application/merge-patch+json', { reason: 'Pulled' });
    rest.patch(ev, 'b', 'e03', 'application/merge-patch+json', { reason: null });
    rest.delete(ev, 'a', 'e02', {});
    rest.create(ev, 'b', {
      metadata: { name: 'e20' },
      involvedObject: { kind: 'Pod', namespace: 'b' },
      reason: 'Started',
    });
    check();
    // Many values: a `!=` is a scan, with the same answers.
    for (let i = 0; i < 12; i++)
      rest.create(ev, 'a', {
        metadata: { name: `r${i}` },
        involvedObject: { kind: 'Pod', namespace: 'a' },
        reason: `R${i}`,
      });
    check();
    let page = rest.list(ev, undefined, { fieldSelector: 'reason!=R3', limit: 5 });
    const seen = names(page);
    while (page.continue) {
      page = rest.list(ev, undefined, { fieldSelector: 'reason!=R3', limit: 5, continue: page.continue });
      seen.push(...names(page));
    }
    expect(seen).toEqual(scan(undefined, 'reason', 'R3', true));
  });
});
