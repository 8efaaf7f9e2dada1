import { type IncomingMessage, request } from 'node:http';
import { Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { KubeClient, type WatchEvent } from '../../../shared/kube/client.ts';
import { ConflictError, type KubeApiError } from '../../../shared/kube/errors.ts';
import { eventually } from '../../../test/conformance/fixtures.ts';
import { type ApiServerHandle, deterministicClock, startApiServer } from './index.ts';

async function failure(p: Promise<unknown>): Promise<KubeApiError> {
  try {
    await p;
  } catch (e) {
    return e as KubeApiError;
  }
  throw new Error('expected the request to fail');
}

describe('fault injection and the request log', () => {
  let server: ApiServerHandle;
  let client: KubeClient;
  beforeAll(async () => {
    server = await startApiServer({ faults: true, seed: 42 });
    client = KubeClient.fromString(server.kubeconfig());
  });
  afterAll(() => server.stop());

  it('fails N matching requests with 409, then lets them through', async () => {
    await client.create(R.ConfigMap, { metadata: { name: 'c', namespace: 'default' } });
    const remove = server.faults.add({
      verb: 'patch',
      resource: 'configmaps',
      name: 'c',
      error: 409,
      times: 2,
    });
    expect(await failure(client.patch(R.ConfigMap, 'default', 'c', { data: { a: '1' } }))).toBeInstanceOf(
      ConflictError,
    );
    expect(await failure(client.patch(R.ConfigMap, 'default', 'c', { data: { a: '1' } }))).toBeInstanceOf(
      ConflictError,
    );
    const ok = await client.patch<any>(R.ConfigMap, 'default', 'c', { data: { a: '1' } });
    expect(ok.data.a).toBe('1');
    expect(server.faults.hits().at(-1)).toBe(2);
    remove();
  });

  it('429 and 503 carry Retry-After; 500 is an InternalError; wildcards match anything', async () => {
    const remove = server.faults.add({ verb: 'get', error: 429, retryAfterSeconds: 3, times: 1 });
    const e = await failure(
      client
        .patch(R.ConfigMap, 'default', 'c', {})
        .then(() => client.list(R.ConfigMap, 'default'))
        .then(() => client.get(R.ConfigMap, 'default', 'c')),
    );
    expect(e.code).toBe(429);
    expect(e.retryAfterSeconds).toBe(3);
    remove();
    const r2 = server.faults.add({
      resource: '*',
      namespace: 'default',
      error: 503,
      retryAfterSeconds: 1,
      times: 1,
    });
    const e2 = await failure(client.list(R.Secret, 'default'));
    expect(e2.code).toBe(503);
    expect(e2.retryAfterSeconds).toBe(1);
    r2();
    const r3 = server.faults.add({ verb: 'create', resource: 'secrets', error: 500, times: 1 });
    const e3 = await failure(client.create(R.Secret, { metadata: { name: 's', namespace: 'default' } }));
    expect(e3.code).toBe(500);
    expect(e3.status.reason).toBe('InternalError');
    r3();
  });

  it('probability with a seed is deterministic', async () => {
    const run = async () => {
      server.faults.seed(7);
      const remove = server.faults.add({
        verb: 'list',
        resource: 'configmaps',
        error: 500,
        probability: 0.5,
      });
      const outcomes: boolean[] = [];
      for (let i = 0; i < 12; i++)
        outcomes.push(
          await client.list(R.ConfigMap, 'default').then(
            () => true,
            () => false,
          ),
        );
      remove();
      return outcomes;
    };
    const a = await run();
    const b = await run();
    expect(a).toEqual(b);
    expect(a).toContain(true);
    expect(a).toContain(false);
  });

  it('latency is added to matching requests', async () => {
    const remove = server.faults.add({ verb: 'get', resource: 'configmaps', latencyMs: 150, times: 1 });
    server.log.reset();
    await client.get(R.ConfigMap, 'default', 'c');
    remove();
    const entry = server.log.entries.find((x) => x.verb === 'get' && x.resource === 'configmaps');
    expect(entry!.ms).toBeGreaterThanOrEqual(140);
  });

  it('drops a watch after K events', async () => {
    for (const n of ['d1', 'd2'])
      await client.create(R.ConfigMap, { metadata: { name: n, namespace: 'default' } });
    const remove = server.faults.add({ verb: 'watch', resource: 'configmaps', dropWatchAfter: 2, times: 1 });
    const events: string[] = [];
    const done = new Promise((resolve) => {
      void client.watch(
        R.ConfigMap,
        'default',
        { resourceVersion: '0' },
        (e) => events.push(e.type),
        resolve,
      );
    });
    await done;
    expect(events).toEqual(['ADDED', 'ADDED']);
    remove();
  });

  it('an injected 410 on a watch arrives as an ERROR event in a 200 stream', async () => {
    const remove = server.faults.add({ verb: 'watch', resource: 'configmaps', error: 410, times: 1 });
    const events: { type: string; code?: number }[] = [];
    await new Promise((resolve) => {
      void client.watch(
        R.ConfigMap,
        'default',
        {},
        (e) => events.push({ type: e.type, code: (e.object as any).code }),
        resolve,
      );
    });
    expect(events).toEqual([{ type: 'ERROR', code: 410 }]);
    remove();
  });

  it('forced compaction expires continue tokens (410)', async () => {
    for (let i = 0; i < 4; i++)
      await client.create(R.ConfigMap, { metadata: { name: `p${i}`, namespace: 'default' } });
    const { body: first } = await (client as any).api.send('GET', client.path(R.ConfigMap, 'default'), {
      limit: '2',
    });
    await client.create(R.ConfigMap, { metadata: { name: 'later', namespace: 'default' } });
    server.faults.compact();
    const e = await failure(
      (client as any).api.send('GET', client.path(R.ConfigMap, 'default'), {
        limit: '2',
        continue: first.metadata.continue,
      }),
    );
    expect((e as any).code).toBe(410);
  });

  it('the request log counts per verb and resource and resets', async () => {
    server.log.reset();
    await client.list(R.ConfigMap, 'default');
    await client.get(R.ConfigMap, 'default', 'c');
    await client.get(R.ConfigMap, 'default', 'c');
    expect(server.log.count('get', 'configmaps')).toBe(2);
    expect(server.log.count('list', 'configmaps')).toBe(1);
    expect(server.log.counts()).toEqual({ 'get configmaps': 2, 'list configmaps': 1 });
    const e = server.log.entries[0]!;
    expect(e).toMatchObject({
      verb: 'list',
      resource: 'configmaps',
      namespace: 'default',
      status: 200,
      user: 'admin',
      method: 'GET',
    });
    const w = await client.watch(
      R.ConfigMap,
      'default',
      {},
      () => undefined,
      () => undefined,
    );
    await eventually(() => server.log.count('watch', 'configmaps') === 1, 'watch logged when opened');
    w.abort();
    server.log.reset();
    expect(server.log.entries).toHaveLength(0);
  });
});

/** A raw watch whose reading the test controls: the events it got, and whether the stream ended. */
async function rawWatch(server: ApiServerHandle, query: string) {
  const url = new URL(`${server.url}/api/v1/namespaces/default/configmaps?watch=true&${query}`);
  const res = await new Promise<IncomingMessage>((resolve) => request(url, resolve).end());
  res.pause();
  const events: any[] = [];
  let partial = '';
  const waiters: { n: number; resolve: () => void }[] = [];
  res.setEncoding('utf8');
  res.on('data', (d: string) => {
    const parts = (partial + d).split('\n');
    partial = parts.pop()!;
    for (const l of parts) if (l !== '') events.push(JSON.parse(l));
    for (const w of waiters) if (events.length >= w.n) w.resolve();
  });
  const ended = new Promise<void>((resolve) => res.on('end', resolve));
  return {
    res,
    ended,
    events,
    /** Resolves once `n` events have arrived. */
    got: (n: number) =>
      new Promise<void>((resolve) => {
        if (events.length >= n) resolve();
        else waiters.push({ n, resolve });
      }),
  };
}

describe('watch flow control', () => {
  const big = 'x'.repeat(200 * 1024);

  it('a consumer that stops reading is ended cleanly after a bounded backlog, and resumes from its last RV with every event', async () => {
    const server = await startApiServer({ maxWatchPendingEvents: 20 });
    const client = KubeClient.fromString(server.kubeconfig());
    try {
      const w = await rawWatch(server, `resourceVersion=${server.resourceVersion()}`);
      await eventually(() => server.watchCount() === 1, 'watch open');
      const created: any[] = [];
      // Big objects fill the connection's buffers, then the server's pending queue, then it gives up.
      for (let i = 0; i < 400 && server.watchCount() > 0; i++) {
        created.push(
          await client.create<any>(R.ConfigMap, {
            metadata: { name: `big-${i}`, namespace: 'default' },
            data: { v: big },
          }),
        );
      }
      expect(server.watchCount()).toBe(0);
      w.res.resume();
      await w.ended;
      const got = w.events;
      // A clean end, as the cacher ends a watcher it terminates: no ERROR, no 410.
      expect(got.every((e) => e.type === 'ADDED')).toBe(true);
      // What was written went out in order; the server held no more than 20 events beyond it.
      const names = got.map((e) => e.object.metadata.name);
      expect(names).toEqual(created.slice(0, got.length).map((o) => o.metadata.name));
      expect(created.length).toBeLessThanOrEqual(got.length + 21);
      expect(got.length).toBeLessThan(created.length);

      // The consumer resumes from the last RV it got: the rest comes from the history, in order.
      const last =
        got.at(-1)?.object.metadata.resourceVersion ??
        String(Number(created[0].metadata.resourceVersion) - 1);
      const rest = await rawWatch(server, `resourceVersion=${last}&timeoutSeconds=1`);
      rest.res.resume();
      await rest.ended;
      expect(rest.events.map((e) => `${e.type} ${e.object.metadata.resourceVersion}`)).toEqual(
        created.slice(got.length).map((o) => `ADDED ${o.metadata.resourceVersion}`),
      );
    } finally {
      await server.stop();
    }
  });

  it('a resume backlog larger than the pending bound is written as the consumer reads, whole and in order', async () => {
    const server = await startApiServer({ maxWatchPendingEvents: 5 });
    const client = KubeClient.fromString(server.kubeconfig());
    try {
      const from = server.resourceVersion();
      const created: any[] = [];
      for (let i = 0; i < 100; i++)
        created.push(
          await client.create<any>(R.ConfigMap, {
            metadata: { name: `b-${i}`, namespace: 'default' },
            data: { v: big },
          }),
        );
      const w = await rawWatch(server, `resourceVersion=${from}`);
      await eventually(() => server.watchCount() === 1, 'watch open');
      // 20 MB of backlog against a consumer that does not read: the watch waits, it is not ended.
      w.res.resume();
      await w.got(created.length);
      const after = await client.create<any>(R.ConfigMap, {
        metadata: { name: 'after', namespace: 'default' },
      });
      await w.got(created.length + 1);
      expect(w.events.map((e) => `${e.type} ${e.object.metadata.resourceVersion}`)).toEqual(
        [...created, after].map((o) => `ADDED ${o.metadata.resourceVersion}`),
      );
      w.res.destroy();
    } finally {
      await server.stop();
    }
  });

  it('a consumer that keeps up sees every event of a burst, in order, on one stream', async () => {
    const server = await startApiServer({ maxWatchPendingEvents: 5 });
    const client = KubeClient.fromString(server.kubeconfig());
    try {
      const events: WatchEvent[] = [];
      let ended = false;
      const c = await client.watch(
        R.ConfigMap,
        'default',
        { resourceVersion: String(server.resourceVersion()) },
        (e) => events.push(e),
        () => {
          ended = true;
        },
      );
      await eventually(() => server.watchCount() === 1, 'watch open');
      const created = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          client.create<any>(R.ConfigMap, { metadata: { name: `f-${i}`, namespace: 'default' } }),
        ),
      );
      await eventually(() => events.length === 100, 'every event');
      const rvs = created.map((o) => Number(o.metadata.resourceVersion)).sort((a, b) => a - b);
      expect(events.map((e) => Number(e.object.metadata.resourceVersion))).toEqual(rvs);
      expect(ended).toBe(false);
      expect(server.watchCount()).toBe(1);
      c.abort();
    } finally {
      await server.stop();
    }
  });

  it('client-node Watch sees 410 as an ERROR event on a compacted resume', async () => {
    const server = await startApiServer({ historySize: 16 });
    const client = KubeClient.fromString(server.kubeconfig());
    try {
      const first = await client.create<any>(R.ConfigMap, { metadata: { name: 'a0', namespace: 'default' } });
      for (let i = 1; i < 40; i++)
        await client.create(R.ConfigMap, { metadata: { name: `a${i}`, namespace: 'default' } });
      const types: string[] = [];
      const codes: number[] = [];
      await new Promise((resolve) => {
        void new Watch(client.kc).watch(
          client.path(R.ConfigMap, 'default'),
          { resourceVersion: first.metadata.resourceVersion },
          (t, o) => {
            types.push(t);
            codes.push(o.code);
          },
          resolve,
        );
      });
      expect(types).toEqual(['ERROR']);
      expect(codes).toEqual([410]);
      await eventually(() => server.watchCount() === 0, 'watch closed');
    } finally {
      await server.stop();
    }
  });
});

describe('deterministic clock hook', () => {
  it('two servers with the same clock seed hand out the same uids, timestamps and generated names', async () => {
    const run = async () => {
      const server = await startApiServer({ clock: deterministicClock(5) });
      const client = KubeClient.fromString(server.kubeconfig());
      try {
        const a = await client.create<any>(R.ConfigMap, {
          metadata: { generateName: 'cm-', namespace: 'default' },
        });
        return [a.metadata.uid, a.metadata.creationTimestamp, a.metadata.name];
      } finally {
        await server.stop();
      }
    };
    const first = await run();
    expect(await run()).toEqual(first);
    expect(first[1]).toBe('2026-01-01T00:00:00Z');
    expect(first[2]).toMatch(/^cm-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });
});
