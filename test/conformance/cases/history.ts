/**
 * The window of history: watches, continue tokens and exact lists are served from it, 410 Expired
 * outside it. Upstream: staging/src/k8s.io/apiserver/pkg/storage/etcd3/compact.go (compaction
 * every --etcd-compaction-interval, 5 min, to the revision seen one interval earlier),
 * storage/cacher/watch_cache.go getAllEventsSinceLocked ("too old resource version"),
 * storage/etcd3/store.go GetList + resolveGetListRev (exact and continued reads at a revision),
 * storage/etcd3/errors.go interpretListError / handleCompactedErrorForPaging (410 texts),
 * storage/cacher/cacher.go shouldDelegateList + watch_cache.go waitUntilFreshAndBlock ("not older
 * than" reads), apimachinery metainternalversion/validation ValidateListOptions.
 *
 * On the embedded server, time passes through its clock (advanceClock), never by sleeping; on a
 * real cluster resourceVersion 1 has been compacted long ago.
 */
import { expect } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { failure } from '../http.ts';
import { type CaseContext, type ConformanceCase, record } from '../suite.ts';
import { page } from './list.ts';

/** The embedded server's default compaction interval (etcd's default). */
const INTERVAL_MS = 5 * 60_000;

/** Lets two compaction intervals pass on the embedded server: everything before now is compacted. */
function compactEverything(ctx: CaseContext): void {
  ctx.advanceClock?.(2 * INTERVAL_MS + 1000);
}

const cm = (ns: string, name: string, v: string, labels: Record<string, string> = { set: 'h' }) => ({
  metadata: { name, namespace: ns, labels },
  data: { v },
});

const names = (list: any) => list.items.map((i: any) => i.metadata.name);

export const HISTORY_CASES: ConformanceCase[] = [
  {
    name: 'a watch from resourceVersion=1 on compacted history is ERROR 410 "too old resource version", not a replay',
    async run(ctx) {
      const { client, ns } = ctx;
      await client.create(R.ConfigMap, cm(ns, 'old', '1'));
      compactEverything(ctx);
      const w = await record(client, R.ConfigMap, ns, { resourceVersion: '1' });
      try {
        const err = await w.waitFor((e) => e.type === 'ERROR', 'ERROR event');
        expect(err.object).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
        expect((err.object as any).message).toMatch(/^too old resource version: 1 \(\d+\)$/);
        expect(w.events.filter((e) => e.type !== 'ERROR')).toEqual([]);
        await w.ended;
      } finally {
        w.stop();
      }
    },
  },
  {
    name: 'a list at resourceVersion=1 with resourceVersionMatch=Exact, or with limit (legacy exact), on compacted history is 410',
    async run(ctx) {
      const { client, ns } = ctx;
      await client.create(R.ConfigMap, cm(ns, 'a', '1'));
      compactEverything(ctx);
      const path = client.path(R.ConfigMap, ns);
      const queries: Record<string, string>[] = [
        { resourceVersion: '1', resourceVersionMatch: 'Exact' },
        { resourceVersion: '1', limit: '10' },
      ];
      for (const q of queries) {
        const e = await failure(page(client, path, q));
        expect(e.code).toBe(410);
        expect(e.status).toMatchObject({
          reason: 'Expired',
          message: 'The resourceVersion for the provided list is too old.',
        });
      }
    },
  },
  {
    name: 'resourceVersionMatch=Exact (and the legacy limit + resourceVersion) read the state at that revision, not the current one',
    async run({ client, ns }) {
      const path = client.path(R.ConfigMap, ns);
      await client.create(R.ConfigMap, cm(ns, 'a', 'before'));
      const at = (await page(client, path, { labelSelector: 'set=h' })).metadata.resourceVersion;
      await client.patch(R.ConfigMap, ns, 'a', { data: { v: 'after' } });
      await client.create(R.ConfigMap, cm(ns, 'b', 'new'));
      const queries: Record<string, string>[] = [
        { resourceVersion: at, resourceVersionMatch: 'Exact', labelSelector: 'set=h' },
        { resourceVersion: at, limit: '10', labelSelector: 'set=h' },
      ];
      for (const q of queries) {
        const l = await page(client, path, q);
        expect(l.metadata.resourceVersion).toBe(at);
        expect(l.items.map((i: any) => [i.metadata.name, i.data.v])).toEqual([['a', 'before']]);
      }
      const now = await page(client, path, { labelSelector: 'set=h' });
      expect(now.items.map((i: any) => [i.metadata.name, i.data.v])).toEqual([
        ['a', 'after'],
        ['b', 'new'],
      ]);
    },
  },
  {
    name: "continue pages show the first page's snapshot (deleted, created and modified objects as they were)",
    async run({ client, ns }) {
      const path = client.path(R.ConfigMap, ns);
      for (const n of ['a', 'b', 'c', 'd', 'e']) await client.create(R.ConfigMap, cm(ns, n, `${n}0`));
      const first = await page(client, path, { limit: '2', labelSelector: 'set=h' });
      expect(names(first)).toEqual(['a', 'b']);
      await client.delete(R.ConfigMap, ns, 'c');
      await client.patch(R.ConfigMap, ns, 'd', { data: { v: 'd1' } });
      await client.create(R.ConfigMap, cm(ns, 'cc', 'new'));
      const second = await page(client, path, {
        limit: '2',
        labelSelector: 'set=h',
        continue: first.metadata.continue,
      });
      expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
      expect(second.items.map((i: any) => [i.metadata.name, i.data.v])).toEqual([
        ['c', 'c0'],
        ['d', 'd0'],
      ]);
      const third = await page(client, path, {
        limit: '2',
        labelSelector: 'set=h',
        continue: second.metadata.continue,
      });
      expect(names(third)).toEqual(['e']);
      expect(third.metadata.continue ?? '').toBe('');
    },
  },
  {
    name: 'a continue token older than the window is 410, with a token that continues at the current state',
    embeddedOnly: 'needs the window to pass (the embedded clock); a real server compacts every 5 minutes',
    async run(ctx) {
      const { client, ns } = ctx;
      const path = client.path(R.ConfigMap, ns);
      for (const n of ['a', 'b', 'c']) await client.create(R.ConfigMap, cm(ns, n, `${n}0`));
      const first = await page(client, path, { limit: '1', labelSelector: 'set=h' });
      await client.delete(R.ConfigMap, ns, 'b');
      compactEverything(ctx);
      const e = await failure(
        page(client, path, { limit: '1', labelSelector: 'set=h', continue: first.metadata.continue }),
      );
      expect(e.code).toBe(410);
      expect(e.status.reason).toBe('Expired');
      expect(e.status.message).toMatch(
        /^The provided continue parameter is too old to display a consistent list result\. You can start a new list without the continue parameter, or use the continue token in this response/,
      );
      const token = (e.status as any).metadata?.continue;
      expect(typeof token).toBe('string');
      // The inconsistent continuation: the rest of the list as it is now ('b' is gone).
      const rest = await page(client, path, { labelSelector: 'set=h', continue: token });
      expect(names(rest)).toEqual(['c']);
    },
  },
  {
    name: 'compaction every interval to the revision of the previous tick: a resume from before it is 410, from it resumes',
    embeddedOnly: 'needs compaction intervals to pass (the embedded clock)',
    async run(ctx) {
      const { client, ns } = ctx;
      const a = await client.create<any>(R.ConfigMap, cm(ns, 'a', '0'));
      const beforeA = String(BigInt(a.metadata.resourceVersion) - 1n);
      ctx.advanceClock!(INTERVAL_MS + 1000);
      // One interval later the compactor has only recorded the revision (a's): nothing is compacted yet.
      await client.create(R.ConfigMap, cm(ns, 'b', '0'));
      const w1 = await record(client, R.ConfigMap, ns, { resourceVersion: beforeA });
      try {
        await w1.waitFor((e) => e.object.metadata.name === 'b', 'b ADDED');
        expect(w1.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED a', 'ADDED b']);
      } finally {
        w1.stop();
      }
      ctx.advanceClock!(INTERVAL_MS + 1000);
      // Two intervals: compacted to a's revision. Before it: 410; from it: the events after it.
      const w2 = await record(client, R.ConfigMap, ns, { resourceVersion: beforeA });
      const err = await w2.waitFor((e) => e.type === 'ERROR', 'ERROR event');
      expect(err.object).toMatchObject({
        reason: 'Expired',
        code: 410,
        message: `too old resource version: ${beforeA} (${a.metadata.resourceVersion})`,
      });
      w2.stop();
      const w3 = await record(client, R.ConfigMap, ns, { resourceVersion: a.metadata.resourceVersion });
      try {
        await w3.waitFor((e) => e.object.metadata.name === 'b', 'b ADDED');
        expect(w3.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED b']);
      } finally {
        w3.stop();
      }
    },
  },
  {
    name: 'NotOlderThan: an old resourceVersion reads the current state; one not reached yet is 504 after the server waited',
    async run({ client, ns }) {
      const path = client.path(R.ConfigMap, ns);
      await client.create(R.ConfigMap, cm(ns, 'a', '0'));
      const now = await page(client, path, { labelSelector: 'set=h' });
      await client.patch(R.ConfigMap, ns, 'a', { data: { v: '1' } });
      const l = await page(client, path, {
        resourceVersion: now.metadata.resourceVersion,
        resourceVersionMatch: 'NotOlderThan',
        labelSelector: 'set=h',
      });
      expect(l.items.map((i: any) => i.data.v)).toEqual(['1']);
      expect(BigInt(l.metadata.resourceVersion) > BigInt(now.metadata.resourceVersion)).toBe(true);
      const future = String(BigInt(l.metadata.resourceVersion) + 1_000_000n);
      const t0 = Date.now();
      const e = await failure(
        page(client, path, { resourceVersion: future, resourceVersionMatch: 'NotOlderThan' }),
      );
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2500);
      expect(e.code).toBe(504);
      expect(e.status.reason).toBe('Timeout');
      expect(e.status.message).toMatch(
        new RegExp(`^Timeout: Too large resource version: ${future}, current: \\d+$`),
      );
      expect(e.status.details?.causes).toEqual([
        { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
      ]);
    },
  },
  {
    name: 'an exact list at a revision not reached yet is the storage error; contradictory list options are 422 ListOptions',
    async run({ client, ns }) {
      const path = client.path(R.ConfigMap, ns);
      const now = await page(client, path, {});
      const future = String(BigInt(now.metadata.resourceVersion) + 1_000_000n);
      const e = await failure(page(client, path, { resourceVersion: future, resourceVersionMatch: 'Exact' }));
      expect(e.code).toBe(500);
      expect(e.status.message).toBe('etcdserver: mvcc: required revision is a future revision');
      const cases: [Record<string, string>, string][] = [
        [
          { resourceVersionMatch: 'Exact' },
          'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
        ],
        [
          { resourceVersion: '0', resourceVersionMatch: 'Exact' },
          'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ],
        [
          { resourceVersion: '5', resourceVersionMatch: 'Newest' },
          'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
        ],
      ];
      for (const [q, message] of cases) {
        const err = await failure(page(client, path, q));
        expect(err.code).toBe(422);
        expect(err.status.message).toBe(message);
      }
      for (const n of ['a', 'b']) await client.create(R.ConfigMap, cm(ns, n, '0'));
      const first = await page(client, path, { limit: '1', labelSelector: 'set=h' });
      const err = await failure(
        page(client, path, { continue: first.metadata.continue, resourceVersion: '7' }),
      );
      expect(err.code).toBe(400);
      expect(err.status.message).toBe('specifying resource version is not allowed when using continue');
    },
  },
];
