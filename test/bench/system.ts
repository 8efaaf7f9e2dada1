/**
 * The whole system under load: `runDev` (relay -> SQS -> workers, simulators, embedded API
 * servers) at 50, 200 and 1,000 machines, so that cost growth is visible, with requests and writes
 * per Ready machine against the documented write floor (docs/write-floor.md) and our added latency
 * per machine (simulated hardware time excluded).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runDev } from '../../infra/local/dev/run.ts';
import { WRITE_FLOOR_PER_MACHINE } from './write-floor.ts';

const sink = new (await import('node:stream')).Writable({
  write: (_c, _e, cb) => cb(),
}) as unknown as NodeJS.WriteStream;

export async function runScenario(machines: number, opts: { simDelayMs?: number } = {}) {
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
  } as Parameters<typeof runDev>[0]);
  if (!r.ok || !r.summary) throw new Error(`${machines} machines: ${r.message}`);
  return { ...r.summary, seconds: (performance.now() - started) / 1000 };
}

export async function benchSystem(opts: { quick?: boolean } = {}): Promise<Record<string, number>> {
  const sizes = opts.quick ? [20, 50] : [50, 200, 1000];
  const out: Record<string, number> = {};
  let base: Awaited<ReturnType<typeof runScenario>> | undefined;
  for (const n of sizes) {
    const s = await runScenario(n);
    base ??= s;
    out[`scale.${n}.wallSeconds`] = s.wallSeconds;
    out[`scale.${n}.requestsPerMachine`] = s.requestsPerMachine;
    out[`scale.${n}.writesPerMachine`] = s.writesPerMachine;
    out[`scale.${n}.eventWritesPerMachine`] = s.eventWritesPerMachine;
    out[`scale.${n}.addedLatencyP50Ms`] = s.addedLatencyP50Ms;
    out[`scale.${n}.addedLatencyP99Ms`] = s.addedLatencyP99Ms;
    out[`scale.${n}.conflictsPerMachine`] = Math.round((s.conflicts / n) * 1000) / 1000;
    // Cost growth: requests per machine at this size relative to the smallest (1.0 = linear total cost).
    out[`scale.${n}.requestsPerMachineVsSmallest`] =
      Math.round((s.requestsPerMachine / base.requestsPerMachine) * 100) / 100;
  }
  const headline = sizes.includes(200) ? 200 : sizes[sizes.length - 1]!;
  out.requestsPerMachine = out[`scale.${headline}.requestsPerMachine`]!;
  // Object writes (what the floor counts); Event writes apart.
  out.writesPerMachine = out[`scale.${headline}.writesPerMachine`]!;
  out.eventWritesPerMachine = out[`scale.${headline}.eventWritesPerMachine`]!;
  out.writeFloorPerMachine = WRITE_FLOOR_PER_MACHINE;
  out.writesVsFloor = Math.round((out.writesPerMachine / WRITE_FLOOR_PER_MACHINE) * 100) / 100;
  out.addedLatencyP50Ms = out[`scale.${headline}.addedLatencyP50Ms`]!;
  out.addedLatencyP99Ms = out[`scale.${headline}.addedLatencyP99Ms`]!;
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const r = await benchSystem({ quick: process.argv.includes('--quick') });
  for (const [k, v] of Object.entries(r)) process.stdout.write(`${k.padEnd(44)} ${v}\n`);
}
