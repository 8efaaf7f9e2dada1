/**
 * `npm run bench [-- --json FILE] [--quick]`: every benchmark of the project in one run, printing a
 * table of figures and ratios measured in that run (the machines are shared and noisy: compare
 * ratios, not absolute times) and writing them as JSON.
 *
 * `npm run bench -- --scale N [--clusters K] [--vmetal-claims C] [--timeout S] [--apiserver-args="A"] [--dev-args="A"] [--json FILE]`: the
 * fleet-scale run alone (./scale.ts; hours at N = 10,000), its figures under `fleet.*`.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { withHeadlines } from './headline.ts';
import { parseScaleArgs, SCALE_ARG_OPTIONS } from './scale-args.ts';

type Bench = { name: string; module: string; fn: string; args?: unknown[] };

const { values } = parseArgs({
  options: {
    json: { type: 'string' },
    quick: { type: 'boolean' },
    only: { type: 'string' },
    ...SCALE_ARG_OPTIONS,
  },
  allowPositionals: true,
});
const quick = Boolean(values.quick);
let scale: ReturnType<typeof parseScaleArgs>;
try {
  scale = parseScaleArgs(values);
} catch (e) {
  process.stderr.write(`bench: ${(e as Error).message}\n`);
  process.exit(2);
}

const ALL: Bench[] = [
  { name: 'system', module: './system.ts', fn: 'benchSystem', args: [{ quick }] },
  {
    name: 'host claim',
    module: './host-claim.ts',
    fn: 'benchHostClaim',
    args: quick ? [{ machines: 50, hosts: 2000 }] : [],
  },
  { name: 'allocation', module: './allocation.ts', fn: 'benchAllocation' },
  { name: 'render', module: './render.ts', fn: 'benchRender' },
  { name: 'template', module: './template.ts', fn: 'benchTemplate' },
  { name: 'client', module: './client.ts', fn: 'benchClient' },
  { name: 'pipeline', module: './pipeline.ts', fn: 'benchPipeline' },
  { name: 'cold start', module: './coldstart.ts', fn: 'benchColdStart' },
  { name: 'API server', module: './apiserver.ts', fn: 'benchApiServer' },
  { name: 'apiserversource', module: './apiserversource.ts', fn: 'benchApiServerSource' },
];
const BENCHES: Bench[] = scale
  ? [{ name: 'fleet scale', module: './scale.ts', fn: 'benchScale', args: [scale] }]
  : ALL;

const measured: Record<string, number> = {};
const failures: Record<string, string> = {};
for (const b of BENCHES) {
  if (values.only && !values.only.split(',').includes(b.name)) continue;
  const t0 = performance.now();
  process.stderr.write(`bench: ${b.name} …\n`);
  try {
    const mod = (await import(b.module)) as Record<
      string,
      (...a: unknown[]) => Promise<Record<string, number>>
    >;
    const r = await mod[b.fn]!(...(b.args ?? []));
    Object.assign(measured, r);
    process.stderr.write(`bench: ${b.name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  } catch (e) {
    failures[b.name] = e instanceof Error ? e.message : String(e);
    process.stderr.write(`bench: ${b.name} FAILED: ${failures[b.name]}\n`);
  }
}

// A full run must yield every headline figure as a number; a partial one (--only) says what it lacks.
const { results, missing } = withHeadlines(measured);
if (missing.length > 0 && !values.only && !scale)
  failures.headline = `missing figures: ${missing.join(', ')}`;

const w = Math.max(...Object.keys(results).map((k) => k.length), 10);
process.stdout.write(`\n${'figure'.padEnd(w)}  value\n${'-'.repeat(w)}  -----\n`);
for (const [k, v] of Object.entries(results)) process.stdout.write(`${k.padEnd(w)}  ${v}\n`);
for (const [k, v] of Object.entries(failures)) process.stdout.write(`${`FAILED ${k}`.padEnd(w)}  ${v}\n`);
if (values.json) await writeFile(values.json, `${JSON.stringify({ ...results, failures }, null, 2)}\n`);
process.exitCode = Object.keys(failures).length ? 1 : 0;
