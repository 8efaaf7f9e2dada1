/**
 * The whole system under load: `runDev` (relay -> SQS -> workers, simulators, embedded API
 * servers) at 50, 200 and 1,000 machines, so that cost growth is visible, with requests and writes
 * per Ready machine against the documented write floor (docs/write-floor.md) and our added latency
 * per machine (simulated hardware time excluded).
 *
 * Pipeline vs direct: at each size the same system runs a second time with the functions invoked
 * in the relay's process without queues (`direct`, shared/runtimes/direct.ts); the ratio is the
 * pipeline's throughput (machines Ready per second from the sample applied) over the direct run's.
 * The order alternates between sizes so a drift in machine load does not favour one side, and a
 * discarded warm-up of both runs first (the JIT's first pass would otherwise count against one).
 *
 * Added latency at scale: every machine of a size arrives at once and one process on a shared
 * 2-core machine serves them all (both API servers, the simulators, the relay, the workers), so at
 * 200 and 1,000 machines the latency is mostly waiting for CPU. `latencyMachines` (default 5, the
 * `npm start` sample) runs a small system where a machine's latency is the steps' own: the
 * headline `addedLatencyP50Ms`/`P99Ms` come from it, and the per-size figures stay visible.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runDev } from '../../infra/local/dev/run.ts';
import { median } from './median.ts';
import { WRITE_FLOOR_PER_MACHINE } from './write-floor.ts';

const sink = new (await import('node:stream')).Writable({
  write: (_c, _e, cb) => cb(),
}) as unknown as NodeJS.WriteStream;

export async function runScenario(machines: number, opts: { simDelayMs?: number; direct?: boolean } = {}) {
  const started = performance.now();
  const r = await runDev({
    machines,
    hosts: Math.ceil(machines * 1.2) + 3,
    scaleDown: false,
    serve: false,
    simDelayMs: opts.simDelayMs ?? 50,
    timeoutSeconds: Math.max(120, machines),
    concurrency: 32,
    legacyProviderIds: 'accept',
    out: sink,
    direct: opts.direct ?? false,
  } as Parameters<typeof runDev>[0]);
  if (!r.ok || !r.summary) throw new Error(`${machines} machines: ${r.message}`);
  return { ...r.summary, seconds: (performance.now() - started) / 1000 };
}

const r2 = (x: number) => Math.round(x * 100) / 100;

export async function benchSystem(
  opts: { quick?: boolean; sizes?: number[]; latencyMachines?: number } = {},
): Promise<Record<string, number>> {
  const sizes = opts.sizes ?? (opts.quick ? [20, 50] : [50, 200, 1000]);
  const out: Record<string, number> = {};
  // Warm-up, discarded: the first run in a process also compiles and optimizes every module, which
  // would count against whichever side ran first.
  await runScenario(10);
  await runScenario(10, { direct: true });
  let base: Awaited<ReturnType<typeof runScenario>> | undefined;
  for (const [i, n] of sizes.entries()) {
    // Alternate which side runs first, so a drift in machine load does not favour one.
    const directFirst = i % 2 === 1;
    const d0 = directFirst ? await runScenario(n, { direct: true }) : undefined;
    const s = await runScenario(n);
    const d = d0 ?? (await runScenario(n, { direct: true }));
    base ??= s;
    out[`scale.${n}.wallSeconds`] = s.wallSeconds;
    out[`scale.${n}.convergeSeconds`] = s.convergeSeconds;
    out[`scale.${n}.machinesReadyPerSecond`] = r2(n / s.convergeSeconds);
    out[`scale.${n}.requestsPerMachine`] = s.requestsPerMachine;
    out[`scale.${n}.writesPerMachine`] = s.writesPerMachine;
    out[`scale.${n}.listedItemsPerMachine`] = s.listedItemsPerMachine;
    for (const [resource, perMachine] of Object.entries(s.listedPerMachineByResource))
      out[`scale.${n}.listedPerMachine.${resource}`] = perMachine;
    out[`scale.${n}.eventWritesPerMachine`] = s.eventWritesPerMachine;
    out[`scale.${n}.addedLatencyP50Ms`] = s.addedLatencyP50Ms;
    out[`scale.${n}.addedLatencyP99Ms`] = s.addedLatencyP99Ms;
    out[`scale.${n}.timeToReadyP50Ms`] = s.timeToReadyP50Ms;
    out[`scale.${n}.conflictsPerMachine`] = Math.round((s.conflicts / n) * 1000) / 1000;
    // Cost growth: requests per machine at this size relative to the smallest (1.0 = linear total cost).
    out[`scale.${n}.requestsPerMachineVsSmallest`] = r2(s.requestsPerMachine / base.requestsPerMachine);
    out[`scale.${n}.direct.convergeSeconds`] = d.convergeSeconds;
    out[`scale.${n}.direct.requestsPerMachine`] = d.requestsPerMachine;
    out[`scale.${n}.direct.addedLatencyP50Ms`] = d.addedLatencyP50Ms;
    // Throughput ratio: (n / pipeline time) / (n / direct time).
    out[`scale.${n}.pipelineVsDirectRatio`] = r2(d.convergeSeconds / s.convergeSeconds);
  }
  const headline = sizes.includes(200) ? 200 : sizes[sizes.length - 1]!;
  out.requestsPerMachine = out[`scale.${headline}.requestsPerMachine`]!;
  // Object writes (what the floor counts); Event writes apart.
  out.writesPerMachine = out[`scale.${headline}.writesPerMachine`]!;
  out.eventWritesPerMachine = out[`scale.${headline}.eventWritesPerMachine`]!;
  out.writeFloorPerMachine = WRITE_FLOOR_PER_MACHINE;
  out.writesVsFloor = r2(out.writesPerMachine / WRITE_FLOOR_PER_MACHINE);
  out.pipelineVsDirectRatio = out[`scale.${headline}.pipelineVsDirectRatio`]!;
  // Latency: a small system (see the file comment), the median of three runs' p50 and p99.
  const small = opts.latencyMachines ?? 5;
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await runScenario(small));
  out.latencyMachines = small;
  out.addedLatencyP50Ms = median(runs.map((r) => r.addedLatencyP50Ms));
  out.addedLatencyP99Ms = median(runs.map((r) => r.addedLatencyP99Ms));
  out.timeToReadyP50Ms = median(runs.map((r) => r.timeToReadyP50Ms));
  out.timeToReadyP99Ms = median(runs.map((r) => r.timeToReadyP99Ms));
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const r = await benchSystem({ quick: process.argv.includes('--quick') });
  for (const [k, v] of Object.entries(r)) process.stdout.write(`${k.padEnd(44)} ${v}\n`);
}
