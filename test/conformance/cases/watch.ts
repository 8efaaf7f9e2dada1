/** Watch streams: initial state, resume, selectors, bookmarks, timeouts, 410, ordering, races. */
import { expect } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { eventually, Widget, widget } from '../fixtures.ts';
import { type ConformanceCase, record } from '../suite.ts';

const rvOf = (o: any) => BigInt(o.metadata.resourceVersion);

export const WATCH_CASES: ConformanceCase[] = [
  {
    name: 'RV unset: synthetic ADDED for current state, then live ADDED/MODIFIED/DELETED',
    async run({ client, ns }) {
      await client.create(Widget, widget(ns, 'pre'));
      const w = await record(client, Widget, ns, {});
      try {
        await w.waitFor((e) => e.type === 'ADDED' && e.object.metadata.name === 'pre', 'initial ADDED');
        const live = await client.create<any>(Widget, widget(ns, 'live'));
        await client.patch(Widget, ns, 'live', { spec: { size: 2 } });
        await client.delete(Widget, ns, 'live');
        const del = await w.waitFor(
          (e) => e.type === 'DELETED' && e.object.metadata.name === 'live',
          'DELETED',
        );
        const types = w.events.filter((e) => e.object.metadata.name === 'live').map((e) => e.type);
        expect(types).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
        // DELETED carries the last state with the deletion's resourceVersion.
        expect(rvOf(del.object) > rvOf(live)).toBe(true);
        expect((del.object as any).spec.size).toBe(2);
      } finally {
        w.stop();
      }
    },
  },
  {
    name: 'RV=N resumes with exactly the events after N',
    async run({ client, ns }) {
      const a = await client.create<any>(Widget, widget(ns, 'a'));
      const p1 = await client.patch<any>(Widget, ns, 'a', { spec: { size: 2 } });
      const p2 = await client.patch<any>(Widget, ns, 'a', { spec: { size: 3 } });
      const b = await client.create<any>(Widget, widget(ns, 'b'));
      const w = await record(client, Widget, ns, { resourceVersion: a.metadata.resourceVersion });
      try {
        await w.waitFor((e) => e.object.metadata.name === 'b', 'b ADDED');
        expect(w.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
          'MODIFIED a',
          'MODIFIED a',
          'ADDED b',
        ]);
        // Each replayed event carries the state and resourceVersion of its own write.
        expect(w.events.map((e) => e.object.metadata.resourceVersion)).toEqual(
          [p1, p2, b].map((o) => o.metadata.resourceVersion),
        );
        expect(w.events.map((e) => (e.object as any).spec.size)).toEqual([2, 3, 1]);
      } finally {
        w.stop();
      }
    },
  },
  {
    name: 'a label-selector watch sees objects leave as DELETED and enter as ADDED',
    async run({ client, ns }) {
      await client.create(Widget, widget(ns, 'x', { size: 1 }, { labels: { pick: 'yes' } }));
      const w = await record(client, Widget, ns, { labelSelector: 'pick=yes' });
      try {
        await w.waitFor((e) => e.type === 'ADDED', 'initial');
        await client.patch(Widget, ns, 'x', { metadata: { labels: { pick: 'no' } } });
        await w.waitFor((e) => e.type === 'DELETED', 'leave');
        await client.patch(Widget, ns, 'x', { spec: { size: 3 } });
        await client.patch(Widget, ns, 'x', { metadata: { labels: { pick: 'yes' } } });
        await w.waitFor((e) => e.type === 'ADDED' && (e.object as any).spec.size === 3, 'enter');
        expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'DELETED', 'ADDED']);
      } finally {
        w.stop();
      }
    },
  },
  {
    name: 'a field-selector watch sees only the named object',
    async run({ client, ns }) {
      const w = await record(client, R.ConfigMap, ns, { fieldSelector: 'metadata.name=wanted' });
      try {
        await client.create(R.ConfigMap, { metadata: { name: 'other', namespace: ns } });
        await client.create(R.ConfigMap, { metadata: { name: 'wanted', namespace: ns } });
        await w.waitFor((e) => e.object.metadata.name === 'wanted', 'wanted');
        expect(w.events.map((e) => e.object.metadata.name)).toEqual(['wanted']);
      } finally {
        w.stop();
      }
    },
  },
  {
    name: 'timeoutSeconds ends the stream cleanly',
    async run({ client, ns }) {
      const w = await record(client, Widget, ns, { timeoutSeconds: 1 });
      expect(await w.ended).toBe('clean');
    },
  },
  {
    name: 'bookmarks only with allowWatchBookmarks=true, carrying only the resourceVersion',
    embeddedOnly:
      'bookmarks are sent on request through the server hook (a real server sends them about once a minute)',
    async run({ client, ns, embedded }) {
      const withB = await record(client, Widget, ns, { allowWatchBookmarks: true });
      const without = await record(client, Widget, ns, { allowWatchBookmarks: false });
      try {
        await eventually(() => embedded!.watchCount() >= 2, 'watches open');
        await client.create(Widget, widget(ns, 'b1'));
        await withB.waitFor((e) => e.type === 'ADDED', 'added');
        await without.waitFor((e) => e.type === 'ADDED', 'added');
        embedded!.bookmarkNow();
        const bm = await withB.waitFor((e) => e.type === 'BOOKMARK', 'bookmark');
        expect(Object.keys(bm.object.metadata)).toEqual(['resourceVersion']);
        expect(bm.object.kind).toBe('Widget');
        await client.create(Widget, widget(ns, 'b2'));
        await without.waitFor((e) => e.object.metadata.name === 'b2', 'b2');
        expect(without.events.some((e) => e.type === 'BOOKMARK')).toBe(false);
      } finally {
        withB.stop();
        without.stop();
      }
    },
  },
  {
    name: 'sendInitialEvents=true: ADDED for all, then a BOOKMARK annotated initial-events-end',
    async run({ client, ns }) {
      await client.create(Widget, widget(ns, 'i1'));
      const w = await record(client, Widget, ns, {
        allowWatchBookmarks: true,
        sendInitialEvents: true,
        resourceVersionMatch: 'NotOlderThan',
      } as any);
      try {
        const bm = await w.waitFor((e) => e.type === 'BOOKMARK', 'initial-events-end bookmark');
        expect((bm.object.metadata as any).annotations?.['k8s.io/initial-events-end']).toBe('true');
        expect(w.events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'i1' } } });
      } finally {
        w.stop();
      }
    },
  },
  {
    name: 'resuming from a compacted resourceVersion gets ERROR 410 Expired',
    embeddedOnly: 'needs forced compaction',
    async run({ client, ns, embedded }) {
      const a = await client.create<any>(Widget, widget(ns, 'a'));
      await client.patch(Widget, ns, 'a', { spec: { size: 2 } });
      embedded!.faults.compact();
      const w = await record(client, Widget, ns, { resourceVersion: a.metadata.resourceVersion });
      const err = await w.waitFor((e) => e.type === 'ERROR', 'ERROR event');
      expect(err.object).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
      expect((err.object as any).message).toMatch(/^too old resource version: \d+ \(\d+\)$/);
      await w.ended;
    },
  },
  {
    name: 'concurrent writers: every write is seen once, in strictly increasing resourceVersion order',
    async run({ client, ns }) {
      // Selected by label: the namespace also holds the kube-root-ca.crt ConfigMap its controller publishes.
      const w = await record(client, R.ConfigMap, ns, { labelSelector: 'writer' });
      try {
        const writers = Array.from({ length: 5 }, (_, i) =>
          (async () => {
            for (let j = 0; j < 20; j++)
              await client.create(R.ConfigMap, {
                metadata: { name: `c-${i}-${j}`, namespace: ns, labels: { writer: String(i) } },
              });
          })(),
        );
        await Promise.all(writers);
        await eventually(() => w.events.length >= 100, '100 events');
        expect(w.events).toHaveLength(100);
        const rvs = w.events.map((e) => rvOf(e.object));
        for (let i = 1; i < rvs.length; i++) expect(rvs[i]! > rvs[i - 1]!).toBe(true);
        expect(new Set(w.events.map((e) => e.object.metadata.name)).size).toBe(100);
      } finally {
        w.stop();
      }
    },
  },
  {
    name: 'list-then-watch from the list resourceVersion misses nothing under concurrent writes',
    async run({ client, ns }) {
      let stop = false;
      let n = 0;
      const writer = (async () => {
        while (!stop && n < 200)
          await client.create(R.ConfigMap, { metadata: { name: `r-${n++}`, namespace: ns } });
      })();
      await eventually(() => n > 10, 'writes started');
      const list = await client.list(R.ConfigMap, ns);
      const seen = new Set(list.items.map((i) => i.metadata.name));
      const w = await record(client, R.ConfigMap, ns, { resourceVersion: list.resourceVersion });
      try {
        await eventually(() => n > 40, 'more writes');
        stop = true;
        await writer;
        const final = await client.list(R.ConfigMap, ns);
        await eventually(() => {
          for (const e of w.events) seen.add(e.object.metadata.name!);
          return seen.size >= final.items.length;
        }, 'watch caught up');
        expect([...seen].sort()).toEqual(final.items.map((i) => i.metadata.name).sort());
        // No event duplicates what the list already contained.
        const listed = new Set(list.items.map((i) => i.metadata.name));
        expect(w.events.filter((e) => listed.has(e.object.metadata.name))).toEqual([]);
      } finally {
        w.stop();
      }
    },
  },
  {
    name: 'a watch across all namespaces sees objects of every namespace',
    async run({ client, ns }) {
      const w = await record(client, Widget, undefined, {});
      try {
        await client.create(Widget, widget(ns, 'everywhere'));
        const ev = await w.waitFor((e) => e.object.metadata.name === 'everywhere', 'event');
        expect(ev.object.metadata.namespace).toBe(ns);
      } finally {
        w.stop();
      }
    },
  },
];
