/**
 * The fleet-scale run (issue 21): `npm run bench -- --scale N [--clusters K] [--vmetal-claims C]`
 * (or `node test/bench/scale.ts --scale N …`). Not part of `.ci/run`.
 *
 * N machines over 1.5 N hosts to Ready on the embedded stack, then scaled down with the release
 * check. The management API server runs in its own process (`metal3fn apiserver --port 0 --crds`,
 * the defaults: history window and field ownership on), so its memory is its own: VmRSS sampled
 * every second for the curve and VmHWM (peak) read before it is stopped. `metal3fn dev --kubeconfig
 * … --simulators` runs everything else in a second process: the relay (dev has no external relay),
 * the queue workers, the embedded SQS server, the simulators and the workload clusters' embedded
 * API servers; its peak is getrusage's maxRSS at exit (./peak-rss-on-exit.ts) and VmRSS is sampled
 * the same way. The relay's memory is therefore inside the dev figure, not apart.
 *
 * - `--clusters K`: the same N spread over K clusters, one namespace and one sample each
 *   (./fleet-manifests.ts), through `dev --manifests`.
 * - `--apiserver-args="A"` (with `=`, as A starts with a dash): more arguments for `metal3fn
 *   apiserver`, split on spaces (its history and heap flags: `--history-bytes 64Mi`, …).
 * - `--dev-args="A"`: more arguments for `metal3fn dev`, the same way (`--concurrency 48`, `--lambda`).
 * - `--vmetal-claims C`: afterwards, a vMetal-only run of C NodeClaims over 1.5 C hosts (the vMetal
 *   sample's provider and two tenants, counts scaled), with writes per claim against the NodeClaim
 *   write floor (./write-floor.ts).
 *
 * Each run keeps its files in a folder it prints (kubeconfig, manifests, dev.log, summary.json,
 * memory.json with both curves).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { assetPath } from '../../infra/local/assets.ts';
import type { RunSummary } from '../../infra/local/dev/summary.ts';
import { SAMPLE_VMETAL_DIR } from '../../infra/local/dev/vmetal.ts';
import { loadManifests } from '../../infra/local/manifests.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { fleetClusters, hostsFor, vmetalFleet } from './fleet-manifests.ts';
import { type MemoryCurve, mib, sampleMemory } from './proc-memory.ts';
import { parseScaleArgs, SCALE_ARG_OPTIONS, type ScaleOptions } from './scale-args.ts';
import { WRITE_FLOOR_PER_CLAIM, WRITE_FLOOR_PER_MACHINE } from './write-floor.ts';

const CLI = fileURLToPath(new URL('../../bin/metal3fn.ts', import.meta.url));
const PEAK_HOOK = new URL('./peak-rss-on-exit.ts', import.meta.url).href;

interface FleetRun {
  summary: RunSummary & {
    releaseFindings?: { object: string; problem: string }[];
    /** `<verb> <resource>` -> requests, the run's whole (scale-down included). */
    requestsByResource?: Record<string, number>;
  };
  exitCode: number;
  apiServer: MemoryCurve;
  dev: MemoryCurve;
  dir: string;
}

function waitExit(child: ChildProcess): Promise<number> {
  return new Promise((done) => {
    if (child.exitCode !== null) return done(child.exitCode);
    child.once('exit', (code, signal) => done(code ?? (signal ? 128 : 1)));
  });
}

/** Starts `metal3fn apiserver` and resolves once it listens (its kubeconfig written). */
async function startApiServerProcess(kubeconfig: string, extra: string[]): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [CLI, 'apiserver', '--port', '0', '--crds', '--kubeconfig-out', kubeconfig, ...extra],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! });
  const listening = new Promise<void>((ok, fail) => {
    lines.on('line', (line) => {
      if (line.startsWith('API server listening on')) ok();
    });
    child.once('exit', (code) => fail(new Error(`metal3fn apiserver exited (${code}) before listening`)));
  });
  await listening;
  return child;
}

async function runFleet(
  name: string,
  sizing: string[],
  timeoutSeconds: number,
  write: (dir: string) => Promise<void>,
  log: (line: string) => void,
  extra: Pick<ScaleOptions, 'apiServerArgs' | 'devArgs'>,
): Promise<FleetRun> {
  const dir = await mkdtemp(join(tmpdir(), `metal3fn-scale-${name}-`));
  await write(dir);
  const kubeconfig = join(dir, 'kubeconfig');
  const summaryFile = join(dir, 'summary.json');
  const peakFile = join(dir, 'dev-peak-rss-kib');
  log(`scale: ${name}: files in ${dir}`);
  const apiServerArgs = extra.apiServerArgs ?? [];
  if (apiServerArgs.length) log(`scale: ${name}: metal3fn apiserver ${apiServerArgs.join(' ')}`);
  const api = await startApiServerProcess(kubeconfig, apiServerArgs);
  const apiMemory = sampleMemory(api.pid!);
  let apiCurve: MemoryCurve | undefined;
  try {
    const devLog = createWriteStream(join(dir, 'dev.log'));
    const args = [
      '--import',
      PEAK_HOOK,
      CLI,
      'dev',
      '--kubeconfig',
      kubeconfig,
      '--simulators',
      ...sizing,
      '--scale-down',
      '--timeout',
      String(timeoutSeconds),
      '--summary-json',
      summaryFile,
      ...(extra.devArgs ?? []),
    ];
    log(`scale: ${name}: metal3fn dev ${args.slice(4).join(' ')}`);
    const dev = spawn(process.execPath, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, METAL3FN_PEAK_RSS_FILE: peakFile },
    });
    dev.stdout!.pipe(devLog);
    dev.stderr!.pipe(devLog);
    const devMemory = sampleMemory(dev.pid!);
    const exitCode = await waitExit(dev);
    const devCurve = devMemory.finish();
    // The peak measured inside at exit (the sampling can miss the last second).
    const inside = Number((await readFile(peakFile, 'utf8').catch(() => '0')).trim());
    devCurve.peakMiB = Math.max(devCurve.peakMiB, mib(inside));
    apiCurve = apiMemory.finish();
    await writeFile(join(dir, 'memory.json'), `${JSON.stringify({ apiServer: apiCurve, dev: devCurve })}\n`);
    const text = await readFile(summaryFile, 'utf8').catch(() => undefined);
    if (!text)
      throw new Error(`${name}: dev wrote no summary (exit ${exitCode}); see ${join(dir, 'dev.log')}`);
    return {
      summary: JSON.parse(text) as FleetRun['summary'],
      exitCode,
      apiServer: apiCurve,
      dev: devCurve,
      dir,
    };
  } finally {
    apiCurve ??= apiMemory.finish();
    api.kill('SIGTERM');
    await waitExit(api);
  }
}

const r2 = (x: number) => Math.round(x * 100) / 100;

/** The figures of one run under `prefix`; `unit` names what the per-unit figures are per. */
export function fleetFigures(
  prefix: string,
  run: Pick<FleetRun, 'summary' | 'exitCode' | 'apiServer' | 'dev'>,
  unit: 'Machine' | 'Claim',
  floor: number,
): Record<string, number> {
  const s = run.summary;
  const units = unit === 'Machine' ? s.machines : s.claims;
  const ready = unit === 'Machine' ? s.ready : s.claimsAvailable;
  const release = s.releaseFindings;
  const out: Record<string, number> = {
    [`${prefix}.${unit === 'Machine' ? 'machines' : 'claims'}`]: units,
    [`${prefix}.${unit === 'Machine' ? 'ready' : 'available'}`]: ready,
    [`${prefix}.hosts`]: s.hosts,
    [`${prefix}.convergeSeconds`]: s.convergeSeconds,
    [`${prefix}.wallSeconds`]: s.wallSeconds,
    [`${prefix}.${unit === 'Machine' ? 'machinesReadyPerSecond' : 'claimsAvailablePerSecond'}`]:
      s.convergeSeconds ? r2(ready / s.convergeSeconds) : 0,
    [`${prefix}.convergeSecondsPer${unit}`]: units
      ? Math.round((s.convergeSeconds / units) * 1000) / 1000
      : 0,
    [`${prefix}.requestsPer${unit}`]: s.requestsPerMachine,
    [`${prefix}.requestsVsWriteFloor`]: r2(s.requestsPerMachine / floor),
    [`${prefix}.writesPer${unit}`]: s.writesPerMachine,
    [`${prefix}.writeFloorPer${unit}`]: floor,
    [`${prefix}.writesVsFloor`]: r2(s.writesPerMachine / floor),
    [`${prefix}.eventWritesPer${unit}`]: s.eventWritesPerMachine,
    [`${prefix}.listedPer${unit}`]: s.listedItemsPerMachine,
    [`${prefix}.conflicts`]: s.conflicts,
    [`${prefix}.retries`]: s.retries,
    [`${prefix}.deadLettered`]: s.deadLettered,
    [`${prefix}.addedLatencyP50Ms`]: s.addedLatencyP50Ms,
    [`${prefix}.addedLatencyP99Ms`]: s.addedLatencyP99Ms,
    [`${prefix}.apiServerPeakRssMiB`]: run.apiServer.peakMiB,
    [`${prefix}.devPeakRssMiB`]: run.dev.peakMiB,
    // 1 clean, 0 findings (or no release check: not every unit was Ready).
    [`${prefix}.releaseClean`]: release !== undefined && release.length === 0 ? 1 : 0,
    [`${prefix}.releaseFindings`]: release?.length ?? -1,
    [`${prefix}.ok`]: run.exitCode === 0 ? 1 : 0,
  };
  for (const [resource, n] of Object.entries(s.listedPerMachineByResource))
    out[`${prefix}.listedPer${unit}.${resource}`] = n;
  return out;
}

/**
 * Requests per unit by `<verb> <resource>` over the whole run, scale-down included (dev counts the
 * scale-up's in requestsPerMachine; this split is for finding where they go), largest first.
 */
export function requestsByResource(
  prefix: string,
  summary: FleetRun['summary'],
  unit: 'Machine' | 'Claim',
): Record<string, number> {
  const units = unit === 'Machine' ? summary.machines : summary.claims;
  const out: Record<string, number> = {};
  if (!units) return out;
  // The per-cluster and one-off requests (initial lists, finalizers) are noise here.
  for (const [key, n] of Object.entries(summary.requestsByResource ?? {}).sort((a, b) => b[1] - a[1]))
    if (n / units >= 0.1)
      out[`${prefix}.wholeRunRequestsPer${unit}.${key.replace(' ', '.')}`] = r2(n / units);
  return out;
}

async function writeManifests(dir: string, files: Record<string, KubeObject[]>): Promise<string> {
  const at = join(dir, 'manifests');
  await mkdir(at);
  for (const [file, objects] of Object.entries(files))
    await writeFile(join(at, file), objects.map((o) => stringify(o)).join('---\n'));
  return at;
}

function releaseLine(run: FleetRun): string {
  const f = run.summary.releaseFindings;
  if (f === undefined) return 'no release check (not every unit was Ready)';
  if (f.length === 0) return 'release check clean';
  return `release check FAILED: ${f
    .slice(0, 5)
    .map((x) => `${x.object}: ${x.problem}`)
    .join('; ')}${f.length > 5 ? ` (+${f.length - 5})` : ''}`;
}

export async function benchScale(o: ScaleOptions): Promise<Record<string, number>> {
  const log = o.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const clusters = o.clusters ?? 1;
  const timeout = (units: number) => o.timeoutSeconds ?? Math.max(600, 2 * units);
  const out: Record<string, number> = {};

  const prefix = clusters > 1 ? `fleet.${o.machines}.clusters${clusters}` : `fleet.${o.machines}`;
  let sizing: string[];
  let write = async (_dir: string) => {};
  if (clusters > 1) {
    const sample = await loadManifests(assetPath('infra/local/sample'));
    const fleet = fleetClusters(sample, o.machines, clusters);
    sizing = ['--manifests', ''];
    write = async (dir) => {
      sizing[1] = await writeManifests(
        dir,
        Object.fromEntries(fleet.map((c) => [`${c.namespace}.yaml`, c.objects])),
      );
    };
  } else {
    sizing = ['--machines', String(o.machines), '--hosts', String(hostsFor(o.machines))];
  }
  const run = await runFleet(
    clusters > 1 ? `${o.machines}x${clusters}` : String(o.machines),
    sizing,
    timeout(o.machines),
    write,
    log,
    o,
  );
  Object.assign(out, fleetFigures(prefix, run, 'Machine', WRITE_FLOOR_PER_MACHINE));
  Object.assign(out, requestsByResource(prefix, run.summary, 'Machine'));
  log(
    `scale: ${o.machines} machines${clusters > 1 ? ` over ${clusters} clusters` : ''}: ${run.summary.ready} Ready in ${run.summary.convergeSeconds} s; API server peak ${run.apiServer.peakMiB} MiB, dev (relay inside) peak ${run.dev.peakMiB} MiB; ${releaseLine(run)}`,
  );

  if (o.vmetalClaims) {
    const fleet = vmetalFleet(await loadManifests(SAMPLE_VMETAL_DIR), o.vmetalClaims);
    const vsizing = ['--manifests', ''];
    const vrun = await runFleet(
      `vmetal-${o.vmetalClaims}`,
      vsizing,
      timeout(o.vmetalClaims),
      async (dir) => {
        vsizing[1] = await writeManifests(dir, { 'vmetal-fleet.yaml': fleet.objects });
      },
      log,
      o,
    );
    const vprefix = `fleet.vmetal.${o.vmetalClaims}`;
    Object.assign(out, fleetFigures(vprefix, vrun, 'Claim', WRITE_FLOOR_PER_CLAIM));
    Object.assign(out, requestsByResource(vprefix, vrun.summary, 'Claim'));
    log(
      `scale: ${o.vmetalClaims} NodeClaims: ${vrun.summary.claimsAvailable} Available in ${vrun.summary.convergeSeconds} s; writes per claim ${vrun.summary.writesPerMachine} (floor ${WRITE_FLOOR_PER_CLAIM}); ${releaseLine(vrun)}`,
    );
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({ options: { ...SCALE_ARG_OPTIONS, json: { type: 'string' } } });
  const opts = parseScaleArgs(values);
  if (!opts)
    throw new Error(
      'usage: node test/bench/scale.ts --scale N [--clusters K] [--vmetal-claims C] [--timeout S] [--apiserver-args="A"] [--dev-args="A"] [--json F]',
    );
  const r = await benchScale(opts);
  for (const [k, v] of Object.entries(r)) process.stdout.write(`${k.padEnd(56)} ${v}\n`);
  if (values.json) await writeFile(values.json, `${JSON.stringify(r, null, 2)}\n`);
}
