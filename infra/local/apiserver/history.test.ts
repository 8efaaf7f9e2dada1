/**
 * The history window's memory design: versions kept in the window share every subtree a write did
 * not change, so a status update does not copy the spec, and managedFields entries of managers a
 * write did not touch are the previous version's own. The window is bounded by time, by a count
 * of events and by a budget of the bytes its versions do not share.
 */
import { describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { KubeClient, type WatchEvent } from '../../../shared/kube/client.ts';
import { admit } from './admission.ts';
import { deterministicClock } from './clock.ts';
import { History } from './history.ts';
import { startApiServer } from './index.ts';
import { KindRegistry } from './kinds.ts';
import { Rest } from './rest.ts';
import { unsharedBytes } from './share.ts';
import { Store, type StoredEvent } from './store.ts';

function setup(historyBytes?: number) {
  const store = new Store({ historyBytes });
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

const ev = (rv: number): StoredEvent => ({
  rv,
  resource: '/configmaps',
  type: 'ADDED',
  obj: { metadata: { name: `o${rv}` } },
  prev: undefined,
});

describe('the byte budget of the history window', () => {
  it('drops the oldest events beyond the budget and advances compactedRv', () => {
    const h = new History({ maxBytes: 1000, compactionIntervalMs: 0, now: () => 0 });
    for (let rv = 1; rv <= 10; rv++) h.record(ev(rv), 300);
    expect(h.size).toBe(3);
    expect(h.bytes).toBe(900);
    expect(h.compactedRv).toBe(7);
    expect(h.covers(6)).toBe(false);
    expect(h.since('/configmaps', 7).map((e) => e.rv)).toEqual([8, 9, 10]);
  });

  it('keeps the newest event even when it alone is over the budget', () => {
    const h = new History({ maxBytes: 1000, compactionIntervalMs: 0, now: () => 0 });
    h.record(ev(1), 10);
    h.record(ev(2), 5000);
    expect(h.since('/configmaps', 1).map((e) => e.rv)).toEqual([2]);
    expect(h.compactedRv).toBe(1);
  });

  it('keeps its account across the ring wrapping and growing', () => {
    const h = new History({ maxBytes: 1000, compactionIntervalMs: 0, now: () => 0 });
    for (let rv = 1; rv <= 1500; rv++) h.record(ev(rv), 1);
    expect(h.size).toBe(1000);
    // Free events: the ring (1,024 slots, its start wrapped) grows past them.
    for (let rv = 1501; rv <= 1700; rv++) h.record(ev(rv), 0);
    expect(h.size).toBe(1200);
    h.record(ev(1701), 1);
    expect(h.bytes).toBe(1000);
    expect(h.compactedRv).toBe(501);
    expect(h.since('/configmaps', 501)[0]!.rv).toBe(502);
  });

  it('leaves the count cap and the time window as they were, and both release bytes', () => {
    const counted = new History({ maxEvents: 16, maxBytes: 1e9, compactionIntervalMs: 0, now: () => 0 });
    for (let rv = 1; rv <= 20; rv++) counted.record(ev(rv), 10);
    expect(counted.size).toBe(16);
    expect(counted.compactedRv).toBe(4);
    expect(counted.bytes).toBe(160);

    let now = 0;
    const timed = new History({ maxBytes: 1e9, compactionIntervalMs: 1000, now: () => now });
    for (let rv = 1; rv <= 5; rv++) timed.record(ev(rv), 10);
    now = 1000;
    timed.tick(5);
    expect(timed.compactedRv).toBe(0);
    for (let rv = 6; rv <= 8; rv++) timed.record(ev(rv), 10);
    now = 2000;
    timed.tick(8);
    expect(timed.compactedRv).toBe(5);
    expect(timed.size).toBe(3);
    expect(timed.bytes).toBe(30);
  });

  it('charges a version what it does not share with the previous one', () => {
    const spec = { data: 'x'.repeat(10_000) };
    const a = { spec, status: { n: 'one' } };
    const b = { spec, status: { n: 'two' } };
    expect(unsharedBytes(a, a)).toBe(0);
    expect(unsharedBytes(a, undefined)).toBeGreaterThan(10_000);
    expect(unsharedBytes(b, a)).toBeLessThan(200);
  });

  it('in the store: a resume from a dropped revision is 410 Expired, one inside the window is served', () => {
    const { store, rest, cm } = setup(100_000);
    const rvs: number[] = [];
    for (let i = 0; i < 30; i++) {
      rest.create(cm, 'n', { metadata: { name: `c${i}` }, data: { v: `${i}`.repeat(10_000) } });
      rvs.push(store.rv);
    }
    expect(store.history.bytes).toBeLessThanOrEqual(100_000);
    expect(() => store.eventsSince('/configmaps', rvs[0]!)).toThrow(/too old resource version/);
    expect(store.eventsSince('/configmaps', rvs[27]!).map((e) => e.obj.metadata.name)).toEqual([
      'c28',
      'c29',
    ]);
  });
});

describe('the byte budget at the server', () => {
  it('expires watch resumes, continue tokens and Exact lists older than the window', async () => {
    const server = await startApiServer({ historyBytes: 100_000 });
    const client = KubeClient.fromString(server.kubeconfig());
    const api = (client as any).api;
    const path = client.path(R.ConfigMap, 'default');
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 200,
        (e) => e.code,
      );
    try {
      const rvs: string[] = [];
      for (let i = 0; i < 3; i++) {
        const c = await client.create<any>(R.ConfigMap, {
          metadata: { name: `a${i}`, namespace: 'default' },
        });
        rvs.push(c.metadata.resourceVersion);
      }
      const { body: page } = await api.send('GET', path, { limit: '2' });
      for (let i = 0; i < 30; i++) {
        const c = await client.create<any>(R.ConfigMap, {
          metadata: { name: `b${i}`, namespace: 'default' },
          data: { v: 'x'.repeat(10_000) },
        });
        rvs.push(c.metadata.resourceVersion);
      }
      expect(await firstEvent(client, rvs[0]!)).toEqual({ type: 'ERROR', code: 410 });
      expect(await firstEvent(client, rvs.at(-2)!)).toEqual({ type: 'ADDED', code: undefined });
      expect(await code(api.send('GET', path, { limit: '2', continue: page.metadata.continue }))).toBe(410);
      const exact = (rv: string) =>
        api.send('GET', path, { resourceVersion: rv, resourceVersionMatch: 'Exact' });
      expect(await code(exact(rvs[0]!))).toBe(410);
      expect(await code(exact(rvs.at(-2)!))).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

/** How a watch from `resourceVersion` starts: its first event's type and Status code. */
function firstEvent(client: KubeClient, resourceVersion: string): Promise<{ type: string; code: unknown }> {
  return new Promise((resolve, reject) => {
    let ctl: AbortController | undefined;
    let first = true;
    const onEvent = (e: WatchEvent) => {
      if (!first) return;
      first = false;
      ctl?.abort();
      resolve({ type: e.type, code: (e.object as any).code });
    };
    client
      .watch(R.ConfigMap, 'default', { resourceVersion, timeoutSeconds: 1 }, onEvent, () => {
        if (first) resolve({ type: 'END', code: undefined });
      })
      .then((c) => {
        ctl = c;
        if (!first) c.abort();
      }, reject);
  });
}

/** A ConfigMap with an entry per "machine", written as a controller writes an IPPool's allocations. */
function perMachineWrites(write: (patch: any, manager: string) => void, writes: number): void {
  for (let i = 1; i <= writes; i++) {
    const data: Record<string, string | null> = { [`n${i}`]: `v${i}` };
    // Some writes release an entry, as a scale-down does.
    if (i % 7 === 0) data[`n${i - 3}`] = null;
    if (i % 9 === 0) data[`m${i}`] = null;
    const labels = i % 10 === 0 ? { team: i % 20 === 0 ? 'a' : 'b' } : undefined;
    write(labels ? { metadata: { labels }, data } : { data }, i % 3 === 0 ? 'two' : 'one');
  }
}

const bigData = () => Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`m${i}`, `machine-${i}`]));

describe('superseded versions of large objects in the window', () => {
  it('are kept as deltas: the old maps are freed, and every version and prev reads back as written', async () => {
    const v8 = await import('node:v8');
    const vm = await import('node:vm');
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const { store, rest, cm } = setup();
    rest.create(
      cm,
      'n',
      { metadata: { name: 'big', labels: { team: 'a' } }, data: bigData() },
      { fieldManager: 'one' },
    );
    const from = store.rv;
    const written = new Map<number, unknown>([[from, JSON.parse(JSON.stringify(rest.get(cm, 'n', 'big')))]]);
    const maps: WeakRef<object>[] = [];
    perMachineWrites((patch, manager) => {
      const o = rest.patch(cm, 'n', 'big', 'application/merge-patch+json', patch, {
        fieldManager: manager,
      }).obj;
      written.set(store.rv, JSON.parse(JSON.stringify(o)));
      maps.push(new WeakRef(o.data));
    }, 120);
    // What the window holds is about what the writes changed, not 120 maps of 1,000 entries.
    expect(store.history.bytes).toBeLessThan(2_000_000);
    gc();
    await new Promise((r) => setTimeout(r, 0));
    gc();
    const kept = maps.slice(0, -1).filter((w) => w.deref() !== undefined).length;
    expect(kept).toBeLessThanOrEqual(10);

    const events = store.eventsSince('/configmaps', from);
    expect(events.map((e) => e.rv)).toEqual([...written.keys()].slice(1));
    for (const e of events) {
      expect(e.obj).toEqual(written.get(e.rv));
      expect(e.prev).toEqual(written.get(e.rv - 1));
    }
    for (const rv of [from, from + 1, from + 50, from + 99, from + 119]) {
      const [big] = store.listAt('/configmaps', rv, 'n');
      expect(big).toEqual(written.get(rv));
    }
  });

  it('through the server: a watch resumed with a selector and Exact lists see each version as written', async () => {
    const server = await startApiServer();
    const client = KubeClient.fromString(server.kubeconfig());
    const api = (client as any).api;
    const path = client.path(R.ConfigMap, 'default');
    try {
      await client.create<any>(R.ConfigMap, {
        metadata: { name: 'big', namespace: 'default', labels: { team: 'a' } },
        data: bigData(),
      });
      const written: any[] = [];
      const writes: { patch: any; manager: string }[] = [];
      perMachineWrites((patch, manager) => writes.push({ patch, manager }), 40);
      for (const { patch, manager } of writes) {
        const { body } = await api.send(
          'PATCH',
          `${path}/big`,
          { fieldManager: manager },
          patch,
          'application/merge-patch+json',
        );
        written.push(body);
      }
      const from = written[0].metadata.resourceVersion;
      const seen = await resume(client, from, 'team=a', written.at(-1).metadata.resourceVersion);
      // Expected from what was written: in the selector while team=a (writes 2..9, 20..29, 40), out for 10..19 and 30..39.
      const expected: { type: string; rv: string }[] = [];
      for (let i = 1; i < written.length; i++) {
        const inNow = written[i].metadata.labels.team === 'a';
        const inBefore = written[i - 1].metadata.labels.team === 'a';
        const type = inNow && inBefore ? 'MODIFIED' : inNow ? 'ADDED' : inBefore ? 'DELETED' : undefined;
        if (type) expected.push({ type, rv: written[i].metadata.resourceVersion });
      }
      expect(seen.map((e) => ({ type: e.type, rv: e.object.metadata.resourceVersion }))).toEqual(expected);
      for (const e of seen) {
        const at = written.find((w) => w.metadata.resourceVersion === e.object.metadata.resourceVersion);
        expect(e.object).toEqual(at);
      }
      for (const w of [written[0], written[17], written[33]]) {
        const { body } = await api.send('GET', path, {
          resourceVersion: w.metadata.resourceVersion,
          resourceVersionMatch: 'Exact',
        });
        expect(body.items.find((o: any) => o.metadata.name === 'big')).toEqual(w);
      }
    } finally {
      await server.stop();
    }
  });
});

/** The events of a watch resumed from `resourceVersion` with a label selector, up to revision `until`. */
function resume(
  client: KubeClient,
  resourceVersion: string,
  labelSelector: string,
  until: string,
): Promise<any[]> {
  return new Promise((resolve, reject) => {
    const seen: any[] = [];
    let ctl: AbortController | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      ctl?.abort();
      resolve(seen);
    };
    client
      .watch(
        R.ConfigMap,
        'default',
        { resourceVersion, labelSelector, timeoutSeconds: 5 },
        (e: WatchEvent) => {
          seen.push(e);
          if ((e.object as any).metadata.resourceVersion === until) finish();
        },
        finish,
      )
      .then((c) => {
        ctl = c;
        if (done) c.abort();
      }, reject);
  });
}
