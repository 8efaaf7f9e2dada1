/**
 * Who holds the embedded API server's heap, from a V8 heap snapshot of it (as
 * apiserver-fleet-memory.ts `--snapshot DIR` writes):
 *
 *   node --max-old-space-size=8192 test/bench/heap-attribution.ts FILE.heapsnapshot
 *
 * The snapshot is read as a stream (one of a fleet's server is larger than a string may be).
 * Bytes are attributed by reachability in a fixed order, each node to the first category that
 * reaches it (what two share goes to the earlier one): the store's current objects (without their
 * managedFields), their managedFields, the store's indexes, the history window (what the current
 * objects do not share), the text caches, the parsed-field-set cache, then everything else
 * reachable from the roots. Weak edges are not followed, but V8 reports a WeakMap's entry as an edge
 * from its key to its value: a value of the caches keyed weakly by a stored object (lru.ts) counts
 * with that object's category. A snapshot is taken after a full
 * collection, so it shows live bytes only.
 */
import { closeSync, openSync, readSync } from 'node:fs';

class Reader {
  private readonly fd: number;
  private buf = Buffer.alloc(1 << 24);
  private pos = 0;
  private len = 0;
  constructor(file: string) {
    this.fd = openSync(file, 'r');
  }
  /** The next byte, or -1 at the end. */
  byte(): number {
    if (this.pos === this.len) {
      this.len = readSync(this.fd, this.buf, 0, this.buf.length, null);
      this.pos = 0;
      if (this.len === 0) return -1;
    }
    return this.buf[this.pos++]!;
  }
  /** Reads up to and including `text`; returns what came before it. */
  until(text: string): string {
    const want = Buffer.from(text);
    const out: number[] = [];
    let m = 0;
    for (;;) {
      const b = this.byte();
      if (b < 0) throw new Error(`no ${text}`);
      out.push(b);
      if (b === want[m]) {
        m++;
        if (m === want.length) return Buffer.from(out.slice(0, out.length - want.length)).toString('utf8');
      } else m = b === want[0] ? 1 : 0;
    }
  }
  /** Numbers of a JSON array whose `[` was read, into `into`; returns how many. */
  numbers(into: Uint32Array | Float64Array): number {
    let n = 0;
    let cur = 0;
    let inNum = false;
    for (;;) {
      const b = this.byte();
      if (b >= 48 && b <= 57) {
        cur = cur * 10 + (b - 48);
        inNum = true;
      } else {
        if (inNum) into[n++] = cur;
        cur = 0;
        inNum = false;
        if (b === 93 || b < 0) return n;
      }
    }
  }
  /** The strings of a JSON array whose `[` was read. */
  strings(): string[] {
    const out: string[] = [];
    let bytes: number[] = [];
    for (;;) {
      let b = this.byte();
      while (b !== 34 && b !== 93 && b >= 0) b = this.byte();
      if (b !== 34) return out;
      bytes = [34];
      for (;;) {
        b = this.byte();
        bytes.push(b);
        if (b === 92) bytes.push(this.byte());
        else if (b === 34) break;
      }
      // Long strings are cut to their first 200 bytes (only their size and start matter here).
      try {
        out.push(JSON.parse(Buffer.from(bytes).toString('utf8')) as string);
      } catch {
        out.push('');
      }
    }
  }
  close(): void {
    closeSync(this.fd);
  }
}

export interface Snapshot {
  nodeFields: string[];
  nodeTypes: string[];
  edgeFields: string[];
  edgeTypes: string[];
  nodes: Float64Array;
  edges: Uint32Array;
  strings: string[];
}

export function readSnapshot(file: string): Snapshot {
  const r = new Reader(file);
  const head = `${r.until('"nodes":[').trim().replace(/,$/, '')}}`;
  const meta = JSON.parse(head).snapshot;
  const nf: string[] = meta.meta.node_fields;
  const ef: string[] = meta.meta.edge_fields;
  const nodes = new Float64Array(meta.node_count * nf.length);
  r.numbers(nodes);
  r.until('"edges":[');
  const edges = new Uint32Array(meta.edge_count * ef.length);
  r.numbers(edges);
  r.until('"strings":[');
  const strings = r.strings();
  r.close();
  return {
    nodeFields: nf,
    nodeTypes: meta.meta.node_types[0],
    edgeFields: ef,
    edgeTypes: meta.meta.edge_types[0],
    nodes,
    edges,
    strings,
  };
}

function main(file: string): void {
  const s = readSnapshot(file);
  const NF = s.nodeFields.length;
  const EF = s.edgeFields.length;
  const N = s.nodes.length / NF;
  const TYPE = s.nodeFields.indexOf('type');
  const NAME = s.nodeFields.indexOf('name');
  const SIZE = s.nodeFields.indexOf('self_size');
  const ECOUNT = s.nodeFields.indexOf('edge_count');
  const ETYPE = s.edgeFields.indexOf('type');
  const ENAME = s.edgeFields.indexOf('name_or_index');
  const ETO = s.edgeFields.indexOf('to_node');
  const firstEdge = new Uint32Array(N + 1);
  for (let i = 0, e = 0; i < N; i++) {
    firstEdge[i] = e;
    e += s.nodes[i * NF + ECOUNT]! * EF;
  }
  firstEdge[N] = s.edges.length;
  const weak = s.edgeTypes.indexOf('weak');
  const elementT = s.edgeTypes.indexOf('element');
  const hiddenT = s.edgeTypes.indexOf('hidden');
  const name = (i: number) => s.strings[s.nodes[i * NF + NAME]!] ?? '';
  const type = (i: number) => s.nodeTypes[s.nodes[i * NF + TYPE]!] ?? '';
  const size = (i: number) => s.nodes[i * NF + SIZE]!;
  const edgeName = (e: number) => {
    const t = s.edges[e + ETYPE]!;
    return t === elementT || t === hiddenT
      ? String(s.edges[e + ENAME])
      : (s.strings[s.edges[e + ENAME]!] ?? '');
  };
  // Data only: not an object's hidden class, prototype or constructor, nor code, closures and
  // shapes (shared by every object of a kind; they go to "everything else").
  const notData = new Set(
    ['closure', 'code', 'object shape', 'synthetic', 'regexp'].map((t) => s.nodeTypes.indexOf(t)),
  );
  const skipEdge = new Set(['map', '__proto__', 'constructor', 'prototype', 'context']);
  let dataOnly = true;
  function* out(i: number): Generator<[string, number, number]> {
    for (let e = firstEdge[i]!; e < firstEdge[i + 1]!; e += EF) {
      if (s.edges[e + ETYPE] === weak) continue;
      const to = s.edges[e + ETO]! / NF;
      const n = edgeName(e);
      if (dataOnly && (skipEdge.has(n) || notData.has(s.nodes[to * NF + TYPE]!))) continue;
      yield [n, to, s.edges[e + ETYPE]!];
    }
  }
  const child = (i: number, prop: string): number | undefined => {
    for (const [n, to] of out(i)) if (n === prop) return to;
    return undefined;
  };
  let total = 0;
  for (let i = 0; i < N; i++) total += size(i);

  const owner = new Int8Array(N).fill(-1);
  const cats: string[] = [];
  const bytes: number[] = [];
  const counts: number[] = [];
  /** Marks what `roots` reach and no earlier category did; `stop` edges are not followed (their targets returned). */
  const mark = (cat: string, roots: number[], stop?: (edge: string, to: number) => boolean): number[] => {
    const c = cats.length;
    cats.push(cat);
    bytes.push(0);
    counts.push(0);
    const stopped: number[] = [];
    const stack = roots.filter((x) => owner[x] === -1);
    for (const x of stack) owner[x] = c;
    while (stack.length) {
      const i = stack.pop()!;
      bytes[c] = bytes[c]! + size(i);
      counts[c] = counts[c]! + 1;
      for (const [n, to] of out(i)) {
        if (owner[to] !== -1) continue;
        if (stop?.(n, to)) {
          stopped.push(to);
          continue;
        }
        owner[to] = c;
        stack.push(to);
      }
    }
    return stopped;
  };

  const byName = (n: string) => {
    const xs: number[] = [];
    for (let i = 0; i < N; i++) if (type(i) === 'object' && name(i) === n) xs.push(i);
    return xs;
  };
  const stores = byName('Store');
  if (stores.length !== 1) throw new Error(`${stores.length} Store objects`);
  const store = stores[0]!;
  const field = (i: number, f: string) => {
    const x = child(i, f);
    if (x === undefined) throw new Error(`no ${f} on ${name(i)}`);
    return x;
  };
  // The store's buckets map, its entries, the Bucket objects and their `objects` maps: the
  // containers are "indexes" too (marked first so the objects behind them are reached once).
  const buckets = field(store, 'buckets');
  // Stop at whatever a `managedFields` property holds, however it is reached (a PropertyArray's
  // element edge reaches the same array as the property edge does).
  const mfTargets = new Set<number>();
  for (let i = 0; i < N; i++) for (const [n, to] of out(i)) if (n === 'managedFields') mfTargets.add(to);
  const mfRoots = mark('store: current objects (without managedFields)', [buckets], (_n, to) =>
    mfTargets.has(to),
  );
  mark('store: managedFields of current objects', mfRoots);
  mark('store: list indexes, uids, dependents', [
    // `labelIndex` before the list indexes (list-index.ts) replaced it.
    child(store, 'listIndexes') ?? field(store, 'labelIndex'),
    field(store, 'uids'),
    field(store, 'dependents'),
  ]);
  mark('history window (beyond the current objects)', [field(store, 'history')]);
  mark('text caches (object JSON, watch lines)', byName('TextCache'));
  mark('parsed field-set cache and other LRUs', byName('LruCache'));
  // Everything else: from the synthetic roots, every edge.
  dataOnly = false;
  const roots: number[] = [];
  for (let i = 0; i < N; i++) if (type(i) === 'synthetic') roots.push(i);
  mark('everything else reachable (code, schemas, CRDs, sockets, …)', roots);
  const unreached = N - counts.reduce((a, b) => a + b, 0);

  const MB = (b: number) => (b / 1024 / 1024).toFixed(1);
  console.log(`snapshot: ${N} nodes, ${MB(total)} MiB self sizes`);
  console.log('| category | MiB | nodes |\n|---|---:|---:|');
  cats.forEach((c, i) => {
    console.log(`| ${c} | ${MB(bytes[i]!)} | ${counts[i]} |`);
  });
  let rest = 0;
  for (let i = 0; i < N; i++) if (owner[i] === -1) rest += size(i);
  console.log(`| not reached by a strong edge | ${MB(rest)} | ${unreached} |`);

  // Inside the current objects and the history: by node type, and the largest strings.
  for (const cat of [0, 1, 3]) {
    const byType = new Map<string, number>();
    for (let i = 0; i < N; i++)
      if (owner[i] === cat) byType.set(type(i), (byType.get(type(i)) ?? 0) + size(i));
    console.log(
      `${cats[cat]}: ${[...byType]
        .sort((a, b) => b[1] - a[1])
        .map(([t, b]) => `${t} ${MB(b)}`)
        .join(', ')}`,
    );
  }
  // Large objects (V8 keeps each above ~128 KiB in a space of its own): by category and kind.
  {
    const large = new Map<string, [number, number]>();
    for (let i = 0; i < N; i++)
      if (size(i) >= 128 * 1024) {
        const k = `${owner[i] === -1 ? 'not reached' : cats[owner[i]!]} / ${type(i)}:${name(i).slice(0, 30)}`;
        const x = large.get(k) ?? [0, 0];
        x[0]++;
        x[1] += size(i);
        large.set(k, x);
      }
    console.log(
      `large objects (>= 128 KiB): ${[...large]
        .sort((a, b) => b[1][1] - a[1][1])
        .slice(0, 12)
        .map(([k, [n, b]]) => `${k} ×${n} ${MB(b)}`)
        .join('; ')}`,
    );
  }
  // Strings of the current objects and their managedFields by content: what repeats.
  {
    const byText = new Map<string, [number, number]>();
    let all = 0;
    for (let i = 0; i < N; i++)
      if ((owner[i] === 0 || owner[i] === 1) && type(i) === 'string') {
        const t = name(i).slice(0, 60);
        const x = byText.get(t) ?? [0, 0];
        x[0]++;
        x[1] += size(i);
        all += size(i);
        byText.set(t, x);
      }
    const dup = [...byText].filter(([, [n]]) => n > 1);
    const dupBytes = dup.reduce((a, [, [n, b]]) => a + (b * (n - 1)) / n, 0);
    console.log(
      `strings of the current objects: ${MB(all)} MiB in ${byText.size} distinct texts; copies beyond the first: ${MB(dupBytes)} MiB; most repeated: ${dup
        .sort((a, b) => b[1][1] - a[1][1])
        .slice(0, 15)
        .map(([t, [n, b]]) => `${JSON.stringify(t)} ×${n} ${MB(b)}`)
        .join(', ')}`,
    );
  }
  for (const cat of [0, 1, 2, 3, 6]) {
    const byName = new Map<string, number>();
    for (let i = 0; i < N; i++)
      if (owner[i] === cat && type(i) !== 'string') {
        const n = `${type(i)}:${name(i).slice(0, 40)}`;
        byName.set(n, (byName.get(n) ?? 0) + size(i));
      }
    console.log(
      `${cats[cat]} by name: ${[...byName]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12)
        .map(([t, b]) => `${t} ${MB(b)}`)
        .join(', ')}`,
    );
  }
}

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node test/bench/heap-attribution.ts FILE.heapsnapshot\n');
  process.exit(2);
}
main(file);
