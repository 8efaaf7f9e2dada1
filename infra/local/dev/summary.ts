/** The end-of-run summary: a table for people, JSON (`--summary-json`) for scripts and benchmarks. */
import type { LambdaFigures } from '../lambda-esm.ts';
import { addedLatencyMs, type MachineTimeline, timeToReadyMs } from './observer.ts';

export interface RunSummary {
  /** CAPM3 machines followed, and how many reached Ready. */
  machines: number;
  ready: number;
  /** vMetal NodeClaims followed, and how many reached Available (0 and 0 in a CAPM3-only run). */
  claims: number;
  claimsAvailable: number;
  hostsUsed: number;
  hosts: number;
  wallSeconds: number;
  /** From the sample applied to every machine Ready: the system's throughput (machines / this). */
  convergeSeconds: number;
  addedLatencyP50Ms: number;
  addedLatencyP99Ms: number;
  /** The whole span per machine, simulated hardware and controllers included. */
  timeToReadyP50Ms: number;
  timeToReadyP99Ms: number;
  requestsPerMachine: number;
  /** Objects the product's list calls returned, per machine (flat when list cost is linear). */
  listedItemsPerMachine: number;
  /** The same per resource (plural), largest first: where list cost goes. */
  listedPerMachineByResource: Record<string, number>;
  /**
   * Object writes per machine: creates, updates, patches and deletes of the objects the data model
   * is made of — what the write floor (test/bench/write-floor.ts, 22 writes; docs/write-floor.md)
   * counts. Kubernetes Events are not among them (a record of transitions for people, never read
   * back by any step): they are `eventWritesPerMachine`.
   */
  writesPerMachine: number;
  /** Event writes per machine (recorded on transitions only), apart from the object writes. */
  eventWritesPerMachine: number;
  conflicts: number;
  /**
   * The 409s by `<function> <verb> <resource>` (`relay` for the relay's own requests), largest
   * first: which writes lose races.
   */
  conflictsBy?: Record<string, number>;
  /** The 422s the same way: a guarded JSON patch whose `test` failed, or a write refused as invalid. */
  refusedBy?: Record<string, number>;
  retries: number;
  deadLettered: number;
  /**
   * The queued runtimes (worker, Lambda): messages acknowledged without running, a later message of
   * the same receive, group and object having run in their place (ADR 027).
   */
  coalesced?: number;
  requests: number;
  /** Object writes (Events excluded). */
  writes: number;
  eventWrites: number;
  /**
   * The relay's LISTs by cause over the run (every kind, workload Node watches included): start,
   * gone (410), error. Their objects are in listedItemsPerMachine. Resyncs list nothing (ADR 023):
   * `relayResyncs` counts them (per watch).
   */
  relayRelists?: { start: number; gone: number; error: number };
  relayResyncs?: number;
  /** With the functions on emulated Lambda (`--runtime lambda`): invocations, cost, queue waits. */
  lambda?: LambdaFigures;
  /** The same for the scale-down and release after Ready (`--scale-down`), per machine released. */
  lambdaRelease?: LambdaFigures;
  /** With `serve` and no scale-down: from Ready until the serving ended (resyncs), per Ready machine. */
  lambdaServing?: LambdaFigures;
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
  /** From the sample applied to every machine Ready (default wallMs). */
  convergeMs?: number;
  requests: number;
  /** Objects returned by the product's list calls (default 0). */
  listedItems?: number;
  /** The same per resource plural (default none). */
  listedByResource?: Record<string, number>;
  /** Every write the product made, Events included. */
  writes: number;
  /** Of which writes of Events (default 0). */
  eventWrites?: number;
  conflicts: number;
  retries: number;
  deadLettered: number;
}

export function summarize(i: SummaryInputs): RunSummary {
  const claimTls = i.timelines.filter((t) => t.model === 'vmetal');
  const machineTls = i.timelines.filter((t) => t.model !== 'vmetal');
  const reached = (tls: MachineTimeline[]) => tls.filter((t) => t.at.Ready !== undefined).length;
  const latencies = i.timelines.map(addedLatencyMs).filter((v): v is number => v !== undefined);
  const spans = i.timelines.map(timeToReadyMs).filter((v): v is number => v !== undefined);
  // Per machine: a claim is one machine of the other model (one host, one node).
  const units = i.timelines.length;
  const per = (n: number) => (units ? Math.round((n / units) * 100) / 100 : 0);
  return {
    machines: machineTls.length,
    ready: reached(machineTls),
    claims: claimTls.length,
    claimsAvailable: reached(claimTls),
    hostsUsed: new Set(i.timelines.map((t) => t.host).filter(Boolean)).size,
    hosts: i.hosts,
    wallSeconds: Math.round(i.wallMs / 10) / 100,
    convergeSeconds: Math.round((i.convergeMs ?? i.wallMs) / 10) / 100,
    addedLatencyP50Ms: Math.round(percentile(latencies, 50)),
    addedLatencyP99Ms: Math.round(percentile(latencies, 99)),
    timeToReadyP50Ms: Math.round(percentile(spans, 50)),
    timeToReadyP99Ms: Math.round(percentile(spans, 99)),
    requestsPerMachine: per(i.requests),
    listedItemsPerMachine: per(i.listedItems ?? 0),
    listedPerMachineByResource: Object.fromEntries(
      Object.entries(i.listedByResource ?? {})
        .filter(([, n]) => n > 0)
        .sort((a, b) => b[1] - a[1])
        .map(([r, n]) => [r, per(n)]),
    ),
    writesPerMachine: per(i.writes - (i.eventWrites ?? 0)),
    eventWritesPerMachine: per(i.eventWrites ?? 0),
    conflicts: i.conflicts,
    retries: i.retries,
    deadLettered: i.deadLettered,
    requests: i.requests,
    writes: i.writes - (i.eventWrites ?? 0),
    eventWrites: i.eventWrites ?? 0,
  };
}

/** The total, then the three largest resources. */
function listedRow(s: RunSummary): string {
  const top = Object.entries(s.listedPerMachineByResource)
    .slice(0, 3)
    .map(([r, n]) => `${r} ${n}`);
  return top.length ? `${s.listedItemsPerMachine} (${top.join(', ')})` : String(s.listedItemsPerMachine);
}

/** The total, then the three writes that lost most races. */
function conflictsRow(s: RunSummary): string {
  const top = Object.entries(s.conflictsBy ?? {})
    .slice(0, 3)
    .map(([k, n]) => `${k} ${n}`);
  return top.length ? `${s.conflicts} (${top.join(', ')})` : String(s.conflicts);
}

function lambdaRows(l: LambdaFigures | undefined): [string, string][] {
  if (!l) return [];
  return [
    [
      'Lambda invocations',
      `${l.invocations} (${l.invocationsPerReadyMachine} per Ready machine, ${l.recordsPerInvocation} records each; ${l.coldStarts} cold starts)`,
    ],
    [
      'Lambda billed',
      `${l.billedGbSeconds} GB-s at ${l.memoryMb} MB (${l.billedGbSecondsPerReadyMachine} per Ready machine)`,
    ],
    [
      'per machine: processing / queued',
      `${l.processingMsPerMachine} ms / ${l.queueWaitMsPerMachine} ms (a record waits p50 ${l.queueWaitP50Ms} ms, p99 ${l.queueWaitP99Ms} ms)`,
    ],
  ];
}

export function formatSummary(s: RunSummary): string {
  const rows: [string, string][] = [
    ['machines Ready', `${s.ready} / ${s.machines}`],
    ...(s.claims ? [['NodeClaims Available', `${s.claimsAvailable} / ${s.claims}`] as [string, string]] : []),
    ['hosts used', `${s.hostsUsed} of ${s.hosts}`],
    [
      'wall time',
      `${s.wallSeconds.toFixed(2)} s (${s.convergeSeconds.toFixed(2)} s from the objects applied)`,
    ],
    [
      'our added latency per machine',
      `p50 ${s.addedLatencyP50Ms} ms, p99 ${s.addedLatencyP99Ms} ms (simulated BMO, kubelet and CAPI excluded)`,
    ],
    ['time to Ready per machine', `p50 ${s.timeToReadyP50Ms} ms, p99 ${s.timeToReadyP99Ms} ms (everything)`],
    ['API requests per machine', `${s.requestsPerMachine} (${s.requests} total)`],
    ['objects listed per machine', listedRow(s)],
    ['API writes per machine', `${s.writesPerMachine} (${s.writes} total; Events apart)`],
    ['Event writes per machine', `${s.eventWritesPerMachine} (${s.eventWrites} total)`],
    ...(s.relayRelists
      ? [
          [
            'relay re-lists',
            `start ${s.relayRelists.start}, gone (410) ${s.relayRelists.gone}, error ${s.relayRelists.error}; resyncs (no LIST) ${s.relayResyncs ?? 0}`,
          ] as [string, string],
        ]
      : []),
    ['conflicts (409)', conflictsRow(s)],
    ['retries', String(s.retries)],
    ['dead-lettered messages', String(s.deadLettered)],
    ...(s.coalesced === undefined
      ? []
      : [['coalesced messages', `${s.coalesced} (a later one of their receive ran)`] as [string, string]]),
    ...lambdaRows(s.lambda),
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`).join('\n');
}
