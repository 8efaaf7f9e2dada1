/**
 * `npm run bench [-- --json FILE] [--quick]`: every benchmark of the project in one run, printing a
 * table of figures and ratios measured in that run (the machines are shared and noisy: compare
 * ratios, not absolute times) and writing them as JSON.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

type Bench = { name: string; module: string; fn: string; args?: unknown[] };

const { values } = parseArgs({
  options: { json: { type: 'string' }, quick: { type: 'boolean' }, only: { type: 'string' } },
  allowPositionals: true,
});
const quick = Boolean(values.quick);

const BENCHES: Bench[] = [
  { name: 'system', module: './system.ts', fn: 'benchSystem', args: [{ quick }] },
  {
    name: 'host claim',
    module: './host-claim.ts',
    fn: 'benchHostClaim',
    args: quick ? [{ machines: 50, hosts: 2000 }] : [],
  },
  { name: 'allocation', module: './allocation.ts', fn: 'benchAllocation' },
  { name: 'render', module: './render.ts', fn: 'benchRender' },
  { name: 'client', module: './client.ts', fn: 'benchClient' },
  { name: 'pipeline', module: './pipeline.ts', fn: 'benchPipeline' },
  { name: 'cold start', module: './coldstart.ts', fn: 'benchColdStart' },
  { name: 'API server', module: './apiserver.ts', fn: 'benchApiServer' },
];

/**
 * The figures the issue names, each under its top-level name: aliases of what the benches report
 * in their own words (the bench's own name stays in the JSON too).
 */
const HEADLINE_ALIASES: Record<string, string> = {
  relayVsRawSqsRatio: 'relay_vs_raw_send_ratio',
  allocationConflictsPerAllocation: 'indexConflictsPerAllocation',
  hostClaimConflictsPerMachine: 'claimConflictsPerMachine',
};
const REQUIRED = [
  'requestsPerMachine',
  'writesPerMachine',
  'writeFloorPerMachine',
  'pipelineVsDirectRatio',
  'addedLatencyP50Ms',
  'addedLatencyP99Ms',
  'allocationConflictsPerAllocation',
  'hostClaimConflictsPerMachine',
  'relayVsRawSqsRatio',
  'coldStartRatioMax',
  'bundleBytesMax',
];

const results: Record<string, number> = {};
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
    Object.assign(results, r);
    process.stderr.write(`bench: ${b.name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  } catch (e) {
    failures[b.name] = e instanceof Error ? e.message : String(e);
    process.stderr.write(`bench: ${b.name} FAILED: ${failures[b.name]}\n`);
  }
}

for (const [alias, name] of Object.entries(HEADLINE_ALIASES))
  if (typeof results[name] === 'number') results[alias] = results[name];
// A full run must yield every headline figure as a number; a partial one (--only) says what it lacks.
const missing = REQUIRED.filter((k) => typeof results[k] !== 'number' || !Number.isFinite(results[k]));
if (missing.length > 0 && !values.only) failures.headline = `missing figures: ${missing.join(', ')}`;

const w = Math.max(...Object.keys(results).map((k) => k.length), 10);
process.stdout.write(`\n${'figure'.padEnd(w)}  value\n${'-'.repeat(w)}  -----\n`);
for (const [k, v] of Object.entries(results)) process.stdout.write(`${k.padEnd(w)}  ${v}\n`);
for (const [k, v] of Object.entries(failures)) process.stdout.write(`${`FAILED ${k}`.padEnd(w)}  ${v}\n`);
if (values.json) await writeFile(values.json, `${JSON.stringify({ ...results, failures }, null, 2)}\n`);
process.exitCode = Object.keys(failures).length ? 1 : 0;
