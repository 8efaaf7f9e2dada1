/**
 * The embedded API server's memory at a fleet's end state, without running the fleet:
 *
 *   nice -n 15 node test/bench/apiserver-fleet-memory.ts [--machines 10000] [--sample 50]
 *       [--capture FILE] [--churn 2] [--map-churn 100] [--concurrency 16] [--snapshot DIR]
 *       [--apiserver-args="--history-bytes 64Mi"] [--json FILE] [--dump FILE] [--trace-gc FILE]
 *
 * 1. Capture (skipped when `--capture FILE` exists; written there otherwise): a `metal3fn
 *    apiserver` and `metal3fn dev --simulators --machines S --hosts 1.5 S` as the fleet bench runs
 *    them (test/bench/scale.ts, without the scale-down), then every object the server holds at
 *    Ready, managedFields included.
 * 2. Load, into a fresh `metal3fn apiserver --port 0 --crds [apiserver-args]` process: the shared
 *    objects once (cluster, templates, pool, …), then the per-machine objects (those whose name
 *    carries a machine's, a host's, a data index's or an address's token) copied
 *    machines / S times with those tokens rewritten, owners first, owner uids mapped to the new
 *    ones. Each object is written as its managers wrote it: a create, then one PUT (or status PUT)
 *    per managedFields entry in order, each carrying the fields its manager owns on top of the
 *    earlier ones', so the server derives the same ownership. The IPPool's and the
 *    Metal3DataTemplates' status maps grow with the copies (one status PUT per copy, as
 *    allocateIndex's PUTs with more entries each), ending with an entry per machine.
 * 3. Churn, so the history window holds what a running fleet leaves in it: `--churn` rounds of a
 *    status PUT of every Machine, Metal3Machine and BareMetalHost (a condition's time changes), and
 *    `--map-churn` status PUTs of each map object that move one entry (one allocation released,
 *    one made), the objects whose versions cost O(fleet).
 * 4. Measure: the server's VmHWM (peak over the whole load) and VmRSS from /proc, outside the
 *    process, and its CPU seconds (/proc/<pid>/stat); its process.memoryUsage() and V8 heap spaces through its inspector (`--inspect` on a
 *    free port, idle until then), before and after a full collection; then, with `--snapshot DIR`, a heap snapshot (SIGUSR2, `--heapsnapshot-signal`)
 *    written into DIR, after the figures are read (writing it costs memory of its own); with
 *    `--dump FILE`, every object loaded, in the capture's format (to compare the two); with
 *    `--trace-gc FILE`, the server's V8 `--trace-gc` lines (each collection's heap before and
 *    after, and the pages V8 keeps pooled after it: `pooled: N MB`) in FILE.
 *
 * Control-plane machines are copied as the workers are (the sample's 3 among 50): the objects
 * are of the same kinds and sizes, so this shifts nothing the memory depends on.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { hostsFor } from './fleet-manifests.ts';
import { mib, readProcMemory, sampleMemory } from './proc-memory.ts';

const CLI = fileURLToPath(new URL('../../bin/metal3fn.ts', import.meta.url));

type Obj = Record<string, any>;
interface CapturedResource {
  /** `/api/v1` or `/apis/<group>/<version>`. */
  base: string;
  name: string;
  namespaced: boolean;
  items: Obj[];
}
interface Capture {
  machines: number;
  resources: CapturedResource[];
}

// --- HTTP -----------------------------------------------------------------------------------

let agent = new Agent({ keepAlive: true, maxSockets: 16 });
let server = '';
let requests = 0;
const failures = new Map<string, number>();

function call(method: string, path: string, body?: unknown): Promise<{ status: number; obj: any }> {
  requests++;
  return new Promise((ok, fail) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${server}${path}`,
      {
        method,
        agent,
        headers: {
          authorization: 'Bearer metal3fn-admin',
          accept: 'application/json',
          ...(data === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let obj: any;
          try {
            obj = text ? JSON.parse(text) : undefined;
          } catch {
            obj = text;
          }
          ok({ status: res.statusCode ?? 0, obj });
        });
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    if (data !== undefined) req.write(data);
    req.end();
  });
}

function noteFailure(what: string, r: { status: number; obj: any }): void {
  const key = `${what} ${r.status} ${r.obj?.reason ?? ''}`;
  failures.set(key, (failures.get(key) ?? 0) + 1);
  if (failures.get(key) === 1) process.stderr.write(`fleet-memory: ${key}: ${r.obj?.message ?? ''}\n`);
}

// --- processes ------------------------------------------------------------------------------

/** CPU seconds (user + system) a process has used: /proc/<pid>/stat utime and stime, in clock ticks (USER_HZ 100). */
function cpuOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return undefined;
  }
}

async function startApiServer(
  kubeconfig: string,
  extra: string[],
  nodeArgs: string[],
  stdoutFile?: string,
): Promise<{ child: ChildProcess; url: string; inspector: string | undefined }> {
  const child = spawn(
    process.execPath,
    [...nodeArgs, CLI, 'apiserver', '--port', '0', '--crds', '--kubeconfig-out', kubeconfig, ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let inspector: string | undefined;
  createInterface({ input: child.stderr! }).on('line', (line) => {
    const m = /^Debugger listening on (ws:\S+)/.exec(line);
    if (m) inspector = m[1];
    else if (!/^(For help, see|Debugger ending)/.test(line)) process.stderr.write(`${line}\n`);
  });
  const lines = createInterface({ input: child.stdout! });
  const out = stdoutFile ? createWriteStream(stdoutFile) : undefined;
  const url = await new Promise<string>((ok, fail) => {
    lines.on('line', (line) => {
      out?.write(`${line}\n`);
      const m = /^API server listening on (\S+)/.exec(line);
      if (m) ok(m[1]!);
    });
    child.once('exit', (code) => fail(new Error(`metal3fn apiserver exited (${code}) before listening`)));
  });
  return { child, url, inspector };
}

/** One DevTools-protocol call to the server process's inspector (`--inspect`: idle until used). */
async function cdp(url: string, method: string, params: Obj = {}): Promise<any> {
  const ws = new WebSocket(url);
  try {
    await new Promise((ok, fail) => {
      ws.onopen = ok;
      ws.onerror = fail;
    });
    return await new Promise((ok, fail) => {
      ws.onmessage = (m) => {
        const r = JSON.parse(String(m.data)) as Obj;
        if (r.id === 1) r.error ? fail(new Error(JSON.stringify(r.error))) : ok(r.result);
      };
      ws.send(JSON.stringify({ id: 1, method, params }));
    });
  } finally {
    ws.close();
  }
}

/** The server's own view of its memory (MiB): process.memoryUsage() and V8's heap spaces. */
async function heapFigures(url: string): Promise<Obj> {
  const expression = `JSON.stringify({ ...process.memoryUsage(), spaces: Object.fromEntries(
    process.getBuiltinModule('node:v8').getHeapSpaceStatistics().map((s) => [s.space_name, [s.space_size, s.space_used_size]])) })`;
  const r = await cdp(url, 'Runtime.evaluate', { expression, returnByValue: true });
  const m = JSON.parse(r.result.value) as Obj;
  const MiB = (b: number) => Math.round((b / 1048576) * 10) / 10;
  const out: Obj = {};
  for (const [k, v] of Object.entries(m))
    out[k] =
      typeof v === 'number'
        ? MiB(v)
        : Object.fromEntries(Object.entries(v as Obj).map(([s, [a, b]]) => [s, [MiB(a), MiB(b)]]));
  return out;
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

/** Every listable resource's objects, managedFields included. */
async function readAll(): Promise<CapturedResource[]> {
  const out: CapturedResource[] = [];
  const bases = ['/api/v1'];
  const groups = (await call('GET', '/apis')).obj;
  for (const g of groups.groups) bases.push(`/apis/${g.preferredVersion.groupVersion}`);
  for (const base of bases) {
    const list = (await call('GET', base)).obj;
    for (const r of list.resources) {
      if (r.name.includes('/') || !r.verbs.includes('list') || !r.verbs.includes('create')) continue;
      const items = (await call('GET', `${base}/${r.name}`)).obj.items ?? [];
      if (items.length) out.push({ base, name: r.name, namespaced: r.namespaced, items });
    }
  }
  return out;
}

async function capture(machines: number, file: string): Promise<Capture> {
  const dir = await mkdtemp(join(tmpdir(), 'metal3fn-fleet-memory-capture-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const api = await startApiServer(kubeconfig, [], []);
  server = api.url;
  try {
    process.stderr.write(`fleet-memory: capturing ${machines} machines (files in ${dir})\n`);
    const dev = spawn(
      process.execPath,
      [
        CLI,
        'dev',
        '--kubeconfig',
        kubeconfig,
        '--simulators',
        '--machines',
        String(machines),
        '--hosts',
        String(hostsFor(machines)),
        '--timeout',
        '600',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const code = await new Promise<number>((done) => dev.once('exit', (c) => done(c ?? 1)));
    if (code !== 0) throw new Error(`metal3fn dev exited ${code}`);
    const c: Capture = { machines, resources: await readAll() };
    await writeFile(file, JSON.stringify(c));
    return c;
  } finally {
    await stop(api.child);
    agent.destroy();
    agent = new Agent({ keepAlive: true, maxSockets: 16 });
  }
}

// --- rewriting names ------------------------------------------------------------------------

/**
 * The tokens that make a per-machine object's name unique, and their copy-`k` form: machine
 * names (a 5-character random suffix), hosts, data indexes and IP addresses.
 */
function rewriter(k: number): (s: string) => string {
  const tag = `x${k.toString(36)}`;
  return (s) =>
    s
      .replace(
        /\b(md-\d+|m3cluster-controlplane)-([bcdfghjklmnpqrstvwxz2456789]{5})(?![a-z0-9])/g,
        `$1-$2${tag}`,
      )
      .replace(/\b(md-\d+|m3cluster-controlplane)-template-(\d+)(?![0-9x])/g, `$1-template-$2${tag}`)
      .replace(/\bnode-(\d{4})(?![0-9])/g, `node-$1${tag}`)
      .replace(/\b192([.-])168\1(11\d)\1(\d{1,3})\b/g, (_m, sep: string, c: string, d: string) =>
        ['10', String(k >> 4), String(((k & 15) << 4) | (Number(c) - 110)), d].join(sep),
      );
}

const isPerMachine = (o: Obj): boolean => rewriter(1)(o.metadata.name) !== o.metadata.name;

/** Objects that every copy's objects refer to, and the status maps with an entry per machine. */
const MAP_RESOURCES = new Set(['ippools', 'metal3datatemplates']);

// --- writing as the managers wrote ----------------------------------------------------------

/** fieldsV1 trees merged (Update ownership is exclusive, so they never overlap but at containers). */
function mergeFields(a: Obj, b: Obj): Obj {
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = k in out ? mergeFields(out[k], v) : v;
  return out;
}

function itemMatches(item: any, key: string): boolean {
  if (key.startsWith('k:')) {
    const want = JSON.parse(key.slice(2)) as Obj;
    return Object.entries(want).every(([f, v]) => JSON.stringify(item?.[f]) === JSON.stringify(v));
  }
  if (key.startsWith('v:')) return JSON.stringify(item) === key.slice(2);
  return false;
}

/** The part of `v` a fieldsV1 tree names (a leaf: the whole value). */
function project(v: any, fs: Obj): any {
  const keys = Object.keys(fs).filter((k) => k !== '.');
  if (keys.length === 0 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const out: any[] = [];
    v.forEach((item, i) => {
      const k = keys.find((key) => key === `i:${i}` || itemMatches(item, key));
      if (k) out.push(project(item, fs[k]));
    });
    return out;
  }
  const out: Obj = {};
  for (const k of keys) {
    if (!k.startsWith('f:')) continue;
    const name = k.slice(2);
    if (Object.hasOwn(v, name)) out[name] = project(v[name], fs[k]);
  }
  return out;
}

function pathOf(r: CapturedResource, ns: string | undefined, name?: string, sub?: string): string {
  let p = r.base;
  if (r.namespaced) p += `/namespaces/${ns}`;
  p += `/${r.name}`;
  if (name) p += `/${encodeURIComponent(name)}`;
  if (sub) p += `/${sub}`;
  return p;
}

function bodyFor(o: Obj, fields: Obj, rv?: string): Obj {
  const b = project(o, fields);
  b.apiVersion = o.apiVersion;
  b.kind = o.kind;
  b.metadata = {
    ...(b.metadata ?? {}),
    name: o.metadata.name,
    ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
    ...(rv ? { resourceVersion: rv } : {}),
  };
  return b;
}

/**
 * Creates `o` (already renamed) as its managers did; returns the stored object (its new uid) or
 * undefined when the create failed. `skipStatus` leaves status writes out (the map objects).
 */
async function replay(r: CapturedResource, o: Obj, skipStatus = false): Promise<Obj | undefined> {
  const entries: Obj[] = (o.metadata.managedFields ?? []).filter(
    (e: Obj) => !(skipStatus && e.subresource === 'status'),
  );
  // The creator: the main-resource manager that set the most (a create must carry the spec).
  const size = (e: Obj) => JSON.stringify(e.fieldsV1 ?? {}).length;
  const main = entries.filter((e) => !e.subresource).sort((a, b) => size(b) - size(a))[0];
  const ns = o.metadata.namespace;
  const q = (m: string) => `?fieldManager=${encodeURIComponent(m)}`;
  let union: Obj = main?.fieldsV1 ?? {};
  const created = await call(
    'POST',
    pathOf(r, ns) + q(main?.manager ?? 'fleet-memory'),
    main
      ? bodyFor(o, union)
      : {
          ...o,
          metadata: { ...o.metadata, managedFields: undefined, uid: undefined, resourceVersion: undefined },
        },
  );
  if (created.status !== 201 && created.status !== 200) {
    noteFailure(`create ${r.name}`, created);
    return undefined;
  }
  let cur = created.obj;
  for (const e of entries) {
    if (e === main) continue;
    if (e.operation === 'Apply') {
      const b = bodyFor(o, e.fieldsV1);
      // An apply carries exactly its own fields (as JSON, which is YAML).
      const res = await call(
        'PATCH',
        `${pathOf(r, ns, o.metadata.name, e.subresource)}${q(e.manager)}&force=true`,
        b,
      );
      if (res.status === 200) cur = res.obj;
      else noteFailure(`apply ${r.name}`, res);
      continue;
    }
    union = mergeFields(union, e.fieldsV1 ?? {});
    const res = await call(
      'PUT',
      pathOf(r, ns, o.metadata.name, e.subresource) + q(e.manager),
      bodyFor(o, union, cur.metadata.resourceVersion),
    );
    if (res.status === 200) cur = res.obj;
    else noteFailure(`update${e.subresource ? ` ${e.subresource}` : ''} ${r.name}`, res);
  }
  return cur;
}

/** Renames, maps owner uids, and drops what the server sets. */
function prepare(o: Obj, rename: (s: string) => string, uids: Map<string, string>): Obj {
  let text = rename(JSON.stringify(o));
  text = text.replace(
    /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g,
    (u) => uids.get(u) ?? u,
  );
  const c = JSON.parse(text) as Obj;
  c.metadata.uid = undefined;
  c.metadata.resourceVersion = undefined;
  c.metadata.creationTimestamp = undefined;
  c.metadata.generation = undefined;
  return c;
}

/** Owners before dependents: depth in the ownerReferences graph among `objs`. */
function ownersFirst<T extends { o: Obj }>(objs: T[]): T[] {
  const byUid = new Map(objs.map((x) => [x.o.metadata.uid as string, x]));
  const depth = new Map<T, number>();
  const d = (x: T, seen = 0): number => {
    if (depth.has(x)) return depth.get(x)!;
    let n = 0;
    for (const ref of x.o.metadata.ownerReferences ?? []) {
      const owner = byUid.get(ref.uid);
      if (owner && seen < 20) n = Math.max(n, d(owner, seen + 1) + 1);
    }
    depth.set(x, n);
    return n;
  };
  return [...objs].sort((a, b) => d(a) - d(b));
}

async function pool<T>(items: T[], n: number, fn: (x: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (i < items.length) await fn(items[i++]!);
    }),
  );
}

// --- the map objects ------------------------------------------------------------------------

interface MapObject {
  r: CapturedResource;
  o: Obj;
  /** The captured status (its maps' entries are renamed per copy). */
  status: Obj;
  manager: string;
  /** The status maps as written so far. */
  maps: Record<string, Obj>;
  /** Serializes this object's writes. */
  chain: Promise<void>;
}

const mapsOf = (status: Obj): string[] =>
  Object.keys(status).filter((k) => status[k] && typeof status[k] === 'object' && !Array.isArray(status[k]));

/** One status PUT with the maps as they are now, as allocateIndex writes (a GET, then a PUT). */
function writeMaps(m: MapObject, change: (maps: Record<string, Obj>) => void): Promise<void> {
  m.chain = m.chain.then(async () => {
    const ns = m.o.metadata.namespace;
    const got = await call('GET', pathOf(m.r, ns, m.o.metadata.name));
    change(m.maps);
    const body = {
      ...got.obj,
      status: { ...m.status, ...m.maps, lastUpdated: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
    };
    const res = await call(
      'PUT',
      `${pathOf(m.r, ns, m.o.metadata.name, 'status')}?fieldManager=${encodeURIComponent(m.manager)}`,
      body,
    );
    if (res.status !== 200) noteFailure(`update status ${m.r.name}`, res);
  });
  return m.chain;
}

// --- main -----------------------------------------------------------------------------------

function opts() {
  return parseArgs({
    options: {
      machines: { type: 'string', default: '10000' },
      sample: { type: 'string', default: '50' },
      capture: { type: 'string' },
      churn: { type: 'string', default: '2' },
      'map-churn': { type: 'string', default: '100' },
      concurrency: { type: 'string', default: '16' },
      snapshot: { type: 'string' },
      'apiserver-args': { type: 'string', default: '' },
      json: { type: 'string' },
      dump: { type: 'string' },
      'trace-gc': { type: 'string' },
    },
    strict: true,
  }).values;
}

async function main(): Promise<void> {
  const o = opts();
  const machines = Number(o.machines);
  const sample = Number(o.sample);
  const conc = Number(o.concurrency);
  const captureFile = resolve(o.capture ?? join(tmpdir(), `metal3fn-fleet-memory-capture-${sample}.json`));
  const cap: Capture = existsSync(captureFile)
    ? (JSON.parse(await readFile(captureFile, 'utf8')) as Capture)
    : await capture(sample, captureFile);
  process.stderr.write(`fleet-memory: capture ${captureFile} (${cap.machines} machines)\n`);
  const copies = Math.ceil(machines / cap.machines);

  const dir = await mkdtemp(join(tmpdir(), 'metal3fn-fleet-memory-'));
  const nodeArgs: string[] = ['--inspect=127.0.0.1:0'];
  if (o.snapshot) {
    mkdirSync(o.snapshot, { recursive: true });
    nodeArgs.push('--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${resolve(o.snapshot)}`);
  }
  if (o['trace-gc']) nodeArgs.push('--trace-gc');
  const extra = o['apiserver-args'].split(' ').filter(Boolean);
  const api = await startApiServer(
    join(dir, 'kubeconfig'),
    extra,
    nodeArgs,
    o['trace-gc'] ? resolve(o['trace-gc']) : undefined,
  );
  server = api.url;
  agent = new Agent({ keepAlive: true, maxSockets: conc });
  const memory = sampleMemory(api.child.pid!, 1000);
  const t0 = performance.now();
  const secs = () => Math.round((performance.now() - t0) / 100) / 10;
  const log = (s: string) => {
    const m = readProcMemory(api.child.pid!);
    process.stderr.write(
      `fleet-memory: ${secs()} s: ${s} (RSS ${m ? mib(m.rssKiB) : '?'} MiB, HWM ${m ? mib(m.hwmKiB) : '?'} MiB, ${requests} requests)\n`,
    );
  };

  try {
    // Shared objects, once; CRDs exist already (--crds), as do the default namespaces.
    const shared: { r: CapturedResource; o: Obj }[] = [];
    const perMachine: { r: CapturedResource; o: Obj }[] = [];
    for (const r of cap.resources) {
      if (r.name === 'customresourcedefinitions') continue;
      for (const x of r.items) (isPerMachine(x) ? perMachine : shared).push({ r, o: x });
    }
    const sharedUids = new Map<string, string>();
    const maps: MapObject[] = [];
    const nsFirst = ownersFirst(shared).sort(
      (a, b) => Number(b.r.name === 'namespaces') - Number(a.r.name === 'namespaces'),
    );
    for (const { r, o: x } of nsFirst) {
      const isMap = MAP_RESOURCES.has(r.name);
      const got = await call('GET', pathOf(r, x.metadata.namespace, x.metadata.name));
      let stored: Obj | undefined = got.status === 200 ? got.obj : undefined;
      if (!stored)
        stored = await replay(
          r,
          prepare(x, (s) => s, sharedUids),
          isMap,
        );
      if (!stored) continue;
      sharedUids.set(x.metadata.uid, stored.metadata.uid);
      if (isMap && x.status) {
        const statusEntry = (x.metadata.managedFields ?? []).find((e: Obj) => e.subresource === 'status');
        maps.push({
          r,
          o: stored,
          status: x.status,
          manager: statusEntry?.manager ?? 'metal3-functions',
          maps: Object.fromEntries(mapsOf(x.status).map((k) => [k, {}])),
          chain: Promise.resolve(),
        });
      }
    }
    log(`${shared.length} shared objects`);

    // Per-machine objects, copy by copy (each copy owners first), `conc` copies at once.
    const ordered = ownersFirst(perMachine);
    const copyList = Array.from({ length: copies }, (_, k) => k);
    let done = 0;
    await pool(copyList, Math.max(1, Math.floor(conc / 2)), async (k) => {
      const rename = rewriter(k);
      const uids = new Map(sharedUids);
      for (const { r, o: x } of ordered) {
        const stored = await replay(r, prepare(x, rename, uids));
        if (stored) uids.set(x.metadata.uid, stored.metadata.uid);
      }
      await Promise.all(
        maps.map((m) =>
          writeMaps(m, (cur) => {
            for (const name of Object.keys(cur)) {
              const renamed = JSON.parse(rename(JSON.stringify(m.status[name]))) as Obj;
              Object.assign(cur[name]!, renamed);
            }
          }),
        ),
      );
      done++;
      if (done % 10 === 0 || done === copies) log(`${done}/${copies} copies`);
    });

    // Churn: status writes of the objects a running fleet writes most.
    const churned = new Set(['machines', 'metal3machines', 'baremetalhosts']);
    for (let round = 0; round < Number(o.churn); round++) {
      const keys: { r: CapturedResource; ns: string; name: string }[] = [];
      for (const r of cap.resources)
        if (churned.has(r.name))
          for (const x of r.items)
            if (isPerMachine(x))
              for (let k = 0; k < copies; k++)
                keys.push({ r, ns: x.metadata.namespace, name: rewriter(k)(x.metadata.name) });
      await pool(keys, conc, async ({ r, ns, name }) => {
        const got = await call('GET', pathOf(r, ns, name));
        if (got.status !== 200) return noteFailure(`churn get ${r.name}`, got);
        const obj = got.obj;
        const st = obj.status ?? {};
        const now = new Date(Date.now() + round * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
        if (Array.isArray(st.conditions) && st.conditions.length)
          st.conditions = st.conditions.map((c: Obj, i: number) =>
            i === 0 ? { ...c, lastTransitionTime: now } : c,
          );
        else st.lastUpdated = now;
        obj.status = st;
        const entry = (obj.metadata.managedFields ?? []).find((e: Obj) => e.subresource === 'status');
        const res = await call(
          'PUT',
          `${pathOf(r, ns, name, 'status')}?fieldManager=${encodeURIComponent(entry?.manager ?? 'metal3-functions')}`,
          obj,
        );
        if (res.status !== 200) noteFailure(`churn ${r.name}`, res);
      });
      log(`churn round ${round + 1}: ${keys.length} status writes`);
    }
    // The map objects: one allocation released and one made per write (a machine replaced).
    for (let i = 0; i < Number(o['map-churn']); i++) {
      await Promise.all(
        maps.map((m) =>
          writeMaps(m, (cur) => {
            for (const name of Object.keys(cur)) {
              const map = cur[name]!;
              const keys = Object.keys(map);
              const key = keys[(i * 7919) % keys.length]!;
              const v = map[key];
              delete map[key];
              map[`${key}r${i}`] = v;
            }
          }),
        ),
      );
      if ((i + 1) % 50 === 0) log(`map churn: ${i + 1} writes of each of ${maps.length} objects`);
    }
    log(`map churn: ${o['map-churn']} writes of each of ${maps.length} objects`);

    const peak = memory.finish();
    const now = readProcMemory(api.child.pid!);
    const cpuSeconds = cpuOf(api.child.pid!);
    const heapAtEnd = api.inspector ? await heapFigures(api.inspector) : undefined;
    // What is live: a full collection first (the heap's size stays as the collector set it).
    if (api.inspector) await cdp(api.inspector, 'HeapProfiler.collectGarbage');
    const heapAfterGc = api.inspector ? await heapFigures(api.inspector) : undefined;
    const afterGc = readProcMemory(api.child.pid!);
    const result = {
      machines: copies * cap.machines,
      copies,
      requests,
      seconds: secs(),
      failures: Object.fromEntries(failures),
      apiServerPeakMiB: peak.peakMiB,
      apiServerRssMiB: now ? mib(now.rssKiB) : undefined,
      apiServerCpuSeconds: cpuSeconds,
      heapAtEnd,
      apiServerRssAfterGcMiB: afterGc ? mib(afterGc.rssKiB) : undefined,
      heapAfterGc,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    if (o.json) await writeFile(o.json, `${JSON.stringify({ ...result, samples: peak.samples })}\n`);
    // What was loaded, to compare with the capture (small runs).
    if (o.dump)
      await writeFile(
        o.dump,
        JSON.stringify({ machines: copies * cap.machines, resources: await readAll() }),
      );
    if (o.snapshot) {
      const before = new Set(readdirSync(o.snapshot));
      api.child.kill('SIGUSR2');
      // The snapshot is written synchronously by the server; wait until its file is complete.
      for (;;) {
        await new Promise((r) => setTimeout(r, 2000));
        const f = readdirSync(o.snapshot).find((n) => !before.has(n) && n.endsWith('.heapsnapshot'));
        if (f) {
          const probe = await call('GET', '/healthz').catch(() => undefined);
          if (probe) {
            process.stderr.write(`fleet-memory: heap snapshot ${join(o.snapshot, f)}\n`);
            break;
          }
        }
      }
    }
  } finally {
    await stop(api.child);
    agent.destroy();
  }
}

await main();
