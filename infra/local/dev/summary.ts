/** The end-of-run summary: a table for people, JSON (`--summary-json`) for scripts and benchmarks. */
import { addedLatencyMs, type MachineTimeline } from './observer.ts';

export interface RunSummary {
  machines: number;
  ready: number;
  hostsUsed: number;
  hosts: number;
  wallSeconds: number;
  addedLatencyP50Ms: number;
  addedLatencyP99Ms: number;
  requestsPerMachine: number;
  writesPerMachine: number;
  conflicts: number;
  retries: number;
  deadLettered: number;
  requests: number;
  writes: number;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export interface SummaryInputs {
  timelines: MachineTimeline[];
  hosts: number;
  wallMs: number;
  requests: number;
  writes: number;
  conflicts: number;
  retries: number;
  deadLettered: number;
}

export function summarize(i: SummaryInputs): RunSummary {
  const machines = i.timelines.length;
  const ready = i.timelines.filter((t) => t.at.Ready !== undefined).length;
  const latencies = i.timelines.map(addedLatencyMs).filter((v): v is number => v !== undefined);
  const per = (n: number) => (machines ? Math.round((n / machines) * 100) / 100 : 0);
  return {
    machines,
    ready,
    hostsUsed: new Set(i.timelines.map((t) => t.host).filter(Boolean)).size,
    hosts: i.hosts,
    wallSeconds: Math.round(i.wallMs / 10) / 100,
    addedLatencyP50Ms: Math.round(percentile(latencies, 50)),
    addedLatencyP99Ms: Math.round(percentile(latencies, 99)),
    requestsPerMachine: per(i.requests),
    writesPerMachine: per(i.writes),
    conflicts: i.conflicts,
    retries: i.retries,
    deadLettered: i.deadLettered,
    requests: i.requests,
    writes: i.writes,
  };
}

export function formatSummary(s: RunSummary): string {
  const rows: [string, string][] = [
    ['machines Ready', `${s.ready} / ${s.machines}`],
    ['hosts used', `${s.hostsUsed} of ${s.hosts}`],
    ['wall time', `${s.wallSeconds.toFixed(2)} s`],
    [
      'our added latency per machine',
      `p50 ${s.addedLatencyP50Ms} ms, p99 ${s.addedLatencyP99Ms} ms (simulated hardware excluded)`,
    ],
    ['API requests per machine', `${s.requestsPerMachine} (${s.requests} total)`],
    ['API writes per machine', `${s.writesPerMachine} (${s.writes} total)`],
    ['conflicts (409)', String(s.conflicts)],
    ['retries', String(s.retries)],
    ['dead-lettered messages', String(s.deadLettered)],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`).join('\n');
}
