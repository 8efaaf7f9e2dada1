/**
 * The embedded API server's performance, measured against baselines in the same run:
 *
 *   node test/bench/apiserver.ts [--objects N]
 *
 * - GET p50 of one object vs a bare hono handler (@hono/node-server) returning the same JSON,
 *   both over keep-alive HTTP from the same process, interleaved rounds. Goal: ratio <= 2.
 * - 1,000 writes/s for 3 s fanned out to 50 watchers: events lost (goal 0), achieved write rate,
 *   and delivery lag p99 (time from a write's response to the last watcher seeing it).
 * - N (default 100,000) stored objects: heap after GC (goal < 1 GiB), bulk create rate, a
 *   selector LIST over them, GET p50 among them.
 * - Creates per second with durable state (SQLite) vs in memory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { startApiServer } from '../../infra/local/apiserver/index.ts';

const round = (x: number, digits = 3) => Number(x.toFixed(digits));
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function http(
  agent: Agent,
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      url,
      {
        method,
        agent,
        headers: data
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }
          : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

async function timeGets(agent: Agent, url: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await http(agent, 'GET', url);
    out.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`GET ${url}: ${r.status}`);
  }
  return out;
}

export async function benchApiServer(opts: { objects?: number } = {}): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const server = await startApiServer({ bookmarkIntervalMs: 0, historySize: 200_000 });
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  try {
    const base = `${server.url}/api/v1/namespaces/default/configmaps`;
    // 1. GET p50 vs bare hono
    const cm = {
      metadata: { name: 'bench', namespace: 'default', labels: { app: 'bench' } },
      data: Object.fromEntries(
        Array.from({ length: 20 }, (_, i) => [`key${i}`, `value-${i}-${'x'.repeat(20)}`]),
      ),
    };
    await http(agent, 'POST', base, cm);
    const json = (await http(agent, 'GET', `${base}/bench`)).text;
    const app = new Hono();
    app.get('/obj', (c) => c.body(json, 200, { 'content-type': 'application/json' }));
    const hono = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => hono.once('listening', r));
    const honoUrl = `http://127.0.0.1:${(hono.address() as { port: number }).port}/obj`;
    const ours: number[] = [];
    const theirs: number[] = [];
    await timeGets(agent, `${base}/bench`, 300);
    await timeGets(agent, honoUrl, 300);
    for (let round = 0; round < 6; round++) {
      ours.push(...(await timeGets(agent, `${base}/bench`, 500)));
      theirs.push(...(await timeGets(agent, honoUrl, 500)));
    }
    await new Promise((r) => hono.close(r));
    out.apiserverGetP50Ms = round(pct(ours, 0.5));
    out.bareHonoGetP50Ms = round(pct(theirs, 0.5));
    out.ratioGetP50VsBareHono = round(pct(ours, 0.5) / pct(theirs, 0.5));

    // 2. 1,000 writes/s for 3 s, fanned out to 50 watchers
    const watchers = 50;
    const writes = 3000;
    await http(agent, 'POST', `${server.url}/api/v1/namespaces`, { metadata: { name: 'fan' } });
    const counts = new Array<number>(watchers).fill(0);
    const lastSeen = new Map<string, number>();
    const streams: import('node:http').ClientRequest[] = [];
    for (let w = 0; w < watchers; w++) {
      await new Promise<void>((resolve) => {
        const req = request(
          `${server.url}/api/v1/namespaces/fan/configmaps?watch=true&resourceVersion=${server.resourceVersion()}`,
          (res) => {
            let buf = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => {
              buf += d;
              let nl = buf.indexOf('\n');
              while (nl >= 0) {
                const line = buf.slice(0, nl);
                buf = buf.slice(nl + 1);
                counts[w]!++;
                const m = /"name":"(f-\d+)"/.exec(line);
                if (m) lastSeen.set(m[1]!, performance.now());
                nl = buf.indexOf('\n');
              }
            });
            resolve();
          },
        );
        req.end();
        streams.push(req);
      });
    }
    const acked = new Map<string, number>();
    const t0 = performance.now();
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < writes; i++) {
      const due = t0 + i; // 1 per ms = 1,000/s
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      const name = `f-${i}`;
      pending.push(
        http(agent, 'POST', `${server.url}/api/v1/namespaces/fan/configmaps`, {
          metadata: { name },
          data: { i: String(i) },
        }).then(() => acked.set(name, performance.now())),
      );
    }
    await Promise.all(pending);
    const elapsed = (performance.now() - t0) / 1000;
    const deadline = Date.now() + 10_000;
    while (counts.some((c) => c < writes) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    for (const s of streams) s.destroy();
    const lags = [...acked].map(([n, t]) => Math.max(0, (lastSeen.get(n) ?? Number.POSITIVE_INFINITY) - t));
    out.fanoutWatchers = watchers;
    out.fanoutWritesPerSecond = Math.round(writes / elapsed);
    out.fanoutEventsLost = watchers * writes - counts.reduce((a, b) => a + b, 0);
    out.fanoutDeliveryLagP99Ms = round(pct(lags, 0.99));

    // 3. N stored objects under 1 GiB
    const n = opts.objects ?? 100_000;
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const tBulk = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < n) {
        const i = next++;
        const r = await http(agent, 'POST', `${server.url}/api/v1/namespaces/default/configmaps`, {
          metadata: { name: `obj-${i}`, labels: { shard: String(i % 16) } },
          data: { payload: `value-${i}`, owner: 'bench' },
        });
        if (r.status !== 201) throw new Error(`create obj-${i}: ${r.status} ${r.text}`);
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    out.bulkCreatesPerSecond = Math.round(n / ((performance.now() - tBulk) / 1000));
    gc();
    const heap = process.memoryUsage().heapUsed;
    out.storedObjects = n;
    out.heapUsedMiBWithObjects = Math.round(heap / 2 ** 20);
    out.heapGrowthMiBForObjects = Math.round((heap - heapBefore) / 2 ** 20);
    const tList = performance.now();
    const list = await http(agent, 'GET', `${base}?labelSelector=shard%3D3`);
    out.listSelector1of16Ms = round(performance.now() - tList, 1);
    if (list.status !== 200) throw new Error(`list: ${list.status}`);
    out.getP50MsWithObjectsStored = round(pct(await timeGets(agent, `${base}/obj-${n >> 1}`, 500), 0.5));
  } finally {
    agent.destroy();
    await server.stop();
  }

  // 4. Durable writes (SQLite, synchronous=FULL, committed before each response) vs in memory.
  const rate = async (dataFile?: string) => {
    const srv = await startApiServer({ dataFile, bookmarkIntervalMs: 0 });
    const ag = new Agent({ keepAlive: true, maxSockets: 16 });
    try {
      const n = 2000;
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < n) {
            const i = next++;
            await http(ag, 'POST', `${srv.url}/api/v1/namespaces/default/configmaps`, {
              metadata: { name: `d-${i}` },
            });
          }
        }),
      );
      return n / ((performance.now() - t0) / 1000);
    } finally {
      ag.destroy();
      await srv.stop();
    }
  };
  const mem = await rate();
  const dir = mkdtempSync(join(tmpdir(), 'm3fn-bench-'));
  const durable = await rate(join(dir, 'state.db'));
  rmSync(dir, { recursive: true, force: true });
  out.createsPerSecondInMemory = Math.round(mem);
  out.createsPerSecondDurable = Math.round(durable);
  out.ratioDurableToInMemoryCreates = round(durable / mem);
  return out;
}

if (import.meta.main) {
  const i = process.argv.indexOf('--objects');
  const r = await benchApiServer(i > 0 ? { objects: Number(process.argv[i + 1]) } : {});
  const w = Math.max(...Object.keys(r).map((k) => k.length));
  for (const [k, v] of Object.entries(r)) process.stdout.write(`${k.padEnd(w)}  ${v}\n`);
}
