/**
 * Sums the self time of V8 CPU profiles (`node --cpu-prof --cpu-prof-dir DIR ...`) by source area
 * (the embedded API server, the simulators, functions, shared, each npm package, Node's internals,
 * GC) and lists the top functions, so two runs of different sizes can be compared by share: what
 * grows faster than the fleet shows as a share that rises with N.
 *
 *   node scripts/profile-summary.ts [--top 25] DIR_OR_FILE[=MACHINES] ...
 *
 * Builtins and Node's own modules (JSON.stringify, structuredClone, `node:` streams) are charged to
 * the nearest caller of ours or of a package, so "apiserver" includes the serialization and socket
 * writes it asks for; the top list names them `builtin ← caller`. What has no such caller (the event
 * loop, timers) stays "node internals". With `=MACHINES`, times are also given per machine (ms).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const SPECIAL = new Set(['(garbage collector)', '(program)', '(idle)', '(root)']);

/** The area a script belongs to; undefined for frames without a script. */
export function areaOf(url: string): string | undefined {
  if (!url) return undefined;
  if (url.startsWith('node:')) return 'node internals';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = path.slice(nm + '/node_modules/'.length).split('/');
    return `node_modules/${parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  const rel = relative(ROOT, path);
  if (rel.startsWith('..')) return 'other';
  const parts = rel.split('/');
  if (parts[0] === 'infra' && parts[1] === 'local') {
    if (parts[2] === 'apiserver') return 'infra/local/apiserver';
    if (parts[2] === 'sim') return 'infra/local/sim';
    return parts.length > 3 ? `infra/local/${parts[2]}` : 'infra/local (other)';
  }
  if (parts[0] === 'functions' || parts[0] === 'shared')
    return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0]!;
  return parts[0]!;
}

function shortUrl(url: string): string {
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  return path.startsWith(ROOT) ? relative(ROOT, path) : path.replace(/^.*\/node_modules\//, '');
}

export interface Summary {
  /** Non-idle sampled time, ms. */
  totalMs: number;
  byArea: Map<string, number>;
  byFunction: Map<string, number>;
  /** For functions matching `callersOf`: their self time by chain of callers (ours and packages'). */
  byChain: Map<string, number>;
}

export function summarize(profiles: CpuProfile[], callersOf?: RegExp, depth = 6): Summary {
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const byChain = new Map<string, number>();
  let totalMs = 0;
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  for (const p of profiles) {
    const byId = new Map<number, ProfileNode>();
    const parent = new Map<number, number>();
    for (const n of p.nodes) {
      byId.set(n.id, n);
      for (const c of n.children ?? []) parent.set(c, n.id);
    }
    // Each node's charged area and label, resolved once.
    const charged = new Map<number, { area: string; label: string }>();
    const resolveNode = (id: number): { area: string; label: string } => {
      const hit = charged.get(id);
      if (hit) return hit;
      const n = byId.get(id)!;
      const f = n.callFrame;
      const name = f.functionName || '(anonymous)';
      let out: { area: string; label: string };
      if (SPECIAL.has(f.functionName) && !f.url) {
        out = {
          area: f.functionName === '(garbage collector)' ? 'GC' : f.functionName,
          label: f.functionName,
        };
      } else {
        const area = f.url.startsWith('node:') ? undefined : areaOf(f.url);
        if (area) out = { area, label: `${name} ${shortUrl(f.url)}:${f.lineNumber + 1}` };
        else {
          // A builtin: charge it to the nearest caller with a script.
          let up = parent.get(id);
          let caller: ProfileNode | undefined;
          while (up !== undefined) {
            const u = byId.get(up)!;
            if (u.callFrame.url && !u.callFrame.url.startsWith('node:')) {
              caller = u;
              break;
            }
            up = parent.get(up);
          }
          out = caller
            ? {
                area: areaOf(caller.callFrame.url)!,
                label: `${name} ← ${caller.callFrame.functionName || '(anonymous)'} ${shortUrl(caller.callFrame.url)}:${caller.callFrame.lineNumber + 1}`,
              }
            : {
                area: f.url ? 'node internals' : 'native (no caller)',
                label: f.url ? `${name} ${f.url}` : name,
              };
        }
      }
      charged.set(id, out);
      return out;
    };
    for (let i = 0; i < p.samples.length; i++) {
      const ms = (p.timeDeltas[i] ?? 0) / 1000;
      const { area, label } = resolveNode(p.samples[i]!);
      if (area === '(idle)') continue;
      totalMs += ms;
      add(byArea, area, ms);
      add(byFunction, label, ms);
      if (callersOf?.test(label)) add(byChain, chainOf(p.samples[i]!, byId, parent, depth), ms);
    }
  }
  return { totalMs, byArea, byFunction, byChain };
}

/** `a ← b ← c`: the sampled frame and its nearest callers with a script outside Node. */
function chainOf(
  id: number,
  byId: Map<number, ProfileNode>,
  parent: Map<number, number>,
  depth: number,
): string {
  const out: string[] = [];
  let at: number | undefined = id;
  while (at !== undefined && out.length < depth) {
    const f = byId.get(at)!.callFrame;
    if (f.url && !f.url.startsWith('node:'))
      out.push(`${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`);
    at = parent.get(at);
  }
  return out.join(' ← ');
}

function load(target: string): CpuProfile[] {
  const files = statSync(target).isDirectory()
    ? readdirSync(target)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(target, f))
    : [target];
  return files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as CpuProfile);
}

const pct = (v: number, total: number) => `${((100 * v) / total).toFixed(1)} %`;

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      top: { type: 'string', default: '25' },
      /** A regular expression over the top list's labels: show where those functions are called from. */
      callers: { type: 'string' },
    },
  });
  if (!positionals.length) {
    console.error('usage: node scripts/profile-summary.ts [--top N] DIR_OR_FILE[=MACHINES] ...');
    process.exit(2);
  }
  const runs = positionals.map((arg) => {
    const [path, machines] = arg.split('=');
    return {
      name: path!,
      machines: machines ? Number(machines) : undefined,
      s: summarize(load(path!), values.callers ? new RegExp(values.callers) : undefined),
    };
  });
  const first = runs[0]!.s;
  const areas = [...first.byArea.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k);
  for (const r of runs.slice(1)) for (const k of r.s.byArea.keys()) if (!areas.includes(k)) areas.push(k);
  const cols = runs.map((r) => `${r.name}${r.machines ? ` (${r.machines})` : ''}`);
  console.log(`| area | ${cols.map((c) => `${c} share | ms/machine`).join(' | ')} |`);
  console.log(`|---|${runs.map(() => '---:|---:|').join('')}`);
  const row = (label: string, get: (s: Summary) => number) =>
    console.log(
      `| ${label} | ${runs
        .map((r) => {
          const v = get(r.s);
          return `${pct(v, r.s.totalMs)} | ${r.machines ? (v / r.machines).toFixed(1) : '-'}`;
        })
        .join(' | ')} |`,
    );
  for (const a of areas) row(a, (s) => s.byArea.get(a) ?? 0);
  row('**total (non-idle)**', (s) => s.totalMs);
  const top = Number(values.top);
  for (const r of runs) {
    console.log(
      `\nTop ${top} functions by self time, ${r.name} (${(r.s.totalMs / 1000).toFixed(1)} s non-idle):`,
    );
    const fns = [...r.s.byFunction.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
    for (const [label, ms] of fns)
      console.log(`  ${pct(ms, r.s.totalMs).padStart(7)}  ${(ms / 1000).toFixed(2).padStart(8)} s  ${label}`);
    if (!values.callers) continue;
    console.log(`\nCallers of /${values.callers}/, ${r.name}:`);
    const chains = [...r.s.byChain.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
    for (const [chain, ms] of chains) console.log(`  ${pct(ms, r.s.totalMs).padStart(7)}  ${chain}`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
