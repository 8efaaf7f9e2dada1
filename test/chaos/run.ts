/**
 * The chaos suite (`npm run chaos -- [--machines N] [--seed S] [--json FILE]`): the whole system as
 * `npm start` runs it (runDev), bent through its hooks:
 *
 *   - the embedded API servers answer 10% of the product's updates/patches/deletes with 409 and 5%
 *     of its writes with 500/503, add latency, drop watches after a few events, answer some watches
 *     410 Gone, and compact their watch history every few seconds (resumes from old RVs get 410);
 *   - the relay's messages are duplicated (20%), the duplicate arriving 0-3 s later, so it may
 *     overtake or trail what was sent after it;
 *   - 5% of function invocations "crash" right after their 1st, 2nd or 3rd successful write (the
 *     message is redelivered and must finish from the half-done state);
 *   - then every machine is scaled away.
 *
 * Checked continuously: no host held by two machines (by annotation and by consumerRef), no index
 * and no IP address handed out twice. At the end: every machine Ready within the bound, nothing
 * leaked after scale-down (runDev's release check: Metal3Data, data Secrets, IP claims/addresses,
 * consumerRefs, finalizers; every host available), nothing dead-lettered. Prints the figures.
 * Exit 0 when everything holds, 1 otherwise.
 *
 * `--runtime lambda`: the functions run behind the emulated SQS event source mappings
 * (infra/local/lambda-esm.ts, serverless.yml's settings) instead of the queue worker; the report
 * adds the Lambda figures (invocations, billed GB-s, cold starts, queue waits) and the added latency.
 */
import { writeFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import type { ApiServerHandle } from '../../infra/local/apiserver/index.ts';
import { listEverything } from '../../infra/local/dev/objects.ts';
import { checkRelease, type ReleaseFinding } from '../../infra/local/dev/release-check.ts';
import { type DevResult, runDev } from '../../infra/local/dev/run.ts';
import type { RunSummary } from '../../infra/local/dev/summary.ts';
import { vmetalScaleDown, vmetalScaleDownPlan } from '../../infra/local/dev/vmetal.ts';
import { TENANT_DECLARATION_LABEL } from '../../infra/local/sim/platform.ts';
import { R, type Resource } from '../../shared/api/resources.ts';
import { KubeClient } from '../../shared/kube/client.ts';
import { recordHistory, violations } from '../helpers/host-history.ts';
import {
  type CrashStats,
  crashingTable,
  duplicatePlan,
  type FaultPlan,
  type FaultPlanOptions,
  faultRules,
  InvariantChecker,
  listSnapshot,
  PRODUCT_WRITES,
  stream,
  sumHits,
  type Violation,
  WORKLOAD_WRITES,
} from './plan.ts';

export interface ChaosOptions {
  machines: number;
  seed: number;
  /** Give up when machines are not all Ready (and again when not all released) in this time. */
  timeoutSeconds?: number;
  simDelayMs?: number;
  concurrency?: number;
  faults?: FaultPlanOptions;
  /** Share of relay messages sent twice (default 0.2). */
  duplicate?: number;
  /** Share of invocations that crash after a write (default 0.05). */
  crash?: number;
  /** Forced compaction period of both API servers (default 3000 ms; 0 = none). */
  compactEveryMs?: number;
  /** Print runDev's progress lines and the product's logs as they come. */
  verbose?: boolean;
  /** When the release check fails: write every object of the management cluster here (JSON). */
  dumpOnLeak?: string | undefined;
  /** The functions on emulated Lambda (runDev's `lambda`). */
  lambda?: boolean | undefined;
  /**
   * The vMetal sample beside the machines (dev --vmetal): its NodeClaims on the same hosts, under
   * the same faults; the invariants cover both models, and the hosts' and addresses' whole history.
   */
  vmetal?: boolean | undefined;
}

/** NodeClaims of the vMetal sample (infra/local/sample-vmetal/20-tenants.yaml). */
const VMETAL_SAMPLE_CLAIMS = 5;

export interface ChaosReport {
  ok: boolean;
  message: string;
  seed: number;
  machines: number;
  ready: number;
  /** vMetal NodeClaims followed and Available (0 without `vmetal`). */
  claims: number;
  claimsAvailable: number;
  /** Host and address changes watched, and history violations (consumerRef moves, addresses held twice). */
  historyEvents: number;
  historyViolations: string[];
  timeToReadySeconds: number | undefined;
  scaleDownSeconds: number | undefined;
  /** From the last Metal3Machine gone until the release check was clean (the data cascade). */
  releaseSettleSeconds: number | undefined;
  wallSeconds: number;
  faults: Record<string, number>;
  duplicatesSent: number;
  relayMessages: number;
  crashes: CrashStats;
  retries: number;
  conflictsSeenByProduct: number;
  deadLettered: number;
  invariantChecks: number;
  violations: Violation[];
  releaseFindings: ReleaseFinding[];
  /** The product's log lines by level and message (captured, not printed). */
  logs: Record<string, number>;
  /** Up to five whole lines of each warning/error message. */
  logSamples: Record<string, string[]>;
  /** The tail of runDev's output when the run failed. */
  outputTail?: string[];
  /** Per machine, total (queueing included), simulated hardware excluded. */
  addedLatencyP50Ms: number | undefined;
  addedLatencyP99Ms: number | undefined;
  /** With `lambda`: invocations, billed GB-s, cold starts, processing vs queue wait. */
  lambda?: RunSummary['lambda'];
}

/** Captures the JSON log lines written to stderr (runDev's logger) while `fn` runs. */
async function capturingLogs<T>(
  verbose: boolean,
  counts: Record<string, number>,
  samples: Record<string, string[]>,
  fn: () => Promise<T>,
): Promise<T> {
  const original = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    for (const line of text.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        const e = JSON.parse(line) as { level?: string; msg?: string };
        const k = `${e.level} ${e.msg}`;
        counts[k] = (counts[k] ?? 0) + 1;
        // A few whole lines of each warning/error kind, for the report (already redacted).
        if ((e.level === 'warn' || e.level === 'error') && (samples[k]?.length ?? 0) < 5) {
          const list = samples[k] ?? [];
          list.push(line.slice(0, 600));
          samples[k] = list;
        }
      } catch {
        // not a log line
      }
    }
    if (verbose || !text.startsWith('{')) return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
    return true;
  }) as typeof process.stderr.write;
  try {
    return await fn();
  } finally {
    process.stderr.write = original;
  }
}

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const seed = o.seed;
  const timeoutSeconds = o.timeoutSeconds ?? Math.round(60 + o.machines * 1.5);
  const mgmtPlan: FaultPlan = faultRules(PRODUCT_WRITES, o.faults);
  const workloadPlan: FaultPlan = faultRules(WORKLOAD_WRITES, { ...o.faults, watchGone: 0 });
  const crashes: CrashStats = { invocations: 0, armed: 0, crashed: 0 };
  const crashRandom = stream(seed, 'crash');
  const nextDuplicate = duplicatePlan(o.duplicate ?? 0.2, stream(seed, 'duplicate'));
  let duplicatesSent = 0;
  let relayMessages = 0;
  let compactions = 0;
  // The management server, and each workload cluster's (started when its Cluster's infrastructure is ready).
  const servers: { mgmt?: ApiServerHandle | undefined; workloads: ApiServerHandle[] } = { workloads: [] };
  let active = false;
  let compactTimer: NodeJS.Timeout | undefined;
  let checker: InvariantChecker | undefined;
  let history: ReturnType<typeof recordHistory> | undefined;
  let readyAt: number | undefined;
  let goneAt: number | undefined;
  let cleanAt: number | undefined;
  let releaseFindings: ReleaseFinding[] = [];
  let scaleDown: Promise<void> | undefined;
  let finished = false;
  const lines: string[] = [];
  const say = (l: string) => {
    lines.push(l);
    if (o.verbose) process.stdout.write(`${l}\n`);
  };
  const logs: Record<string, number> = {};
  const logSamples: Record<string, string[]> = {};

  const activate = () => {
    active = true;
    for (const r of mgmtPlan.rules) servers.mgmt?.faults.add(r);
    for (const w of servers.workloads) for (const r of workloadPlan.rules) w.faults.add(r);
    const every = o.compactEveryMs ?? 3000;
    if (every > 0) {
      compactTimer = setInterval(() => {
        servers.mgmt?.faults.compact();
        for (const w of servers.workloads) w.faults.compact();
        compactions++;
      }, every);
      compactTimer.unref();
    }
  };

  /**
   * runDev keeps serving after Ready (serve: true) while this scales every machine away, waits for
   * the last Metal3Machine to go, then re-runs the release check until it is clean (the claim ->
   * Metal3Data -> IPClaim -> IPAddress cascade and the host deprovisioning take a moment after the
   * machine is gone) or the time runs out; then it lets runDev finish.
   */
  const scaleDownAndCheck = async (admin: KubeClient): Promise<void> => {
    try {
      say('chaos: every machine Ready; scaling to zero');
      const kinds: Resource[] = [R.KubeadmControlPlane, R.MachineDeployment];
      for (const t of kinds) {
        for (const obj of (await admin.list(t)).items) {
          await admin.patch(t, obj.metadata.namespace, obj.metadata.name!, { spec: { replicas: 0 } });
        }
      }
      if (o.vmetal) {
        const declared = (
          await admin.list(R.ConfigMap, undefined, { labelSelector: TENANT_DECLARATION_LABEL })
        ).items;
        await vmetalScaleDown(admin, vmetalScaleDownPlan(declared.map((d) => ({ ...d, kind: 'ConfigMap' }))));
      }
      const deadline = Date.now() + timeoutSeconds * 1000;
      while (!finished && Date.now() < deadline) {
        const left =
          (await admin.list(R.Metal3Machine)).items.length +
          (o.vmetal ? (await admin.list(R.NodeClaim)).items.length : 0);
        if (left === 0) break;
        await sleep(250);
      }
      goneAt = Date.now();
      while (!finished) {
        releaseFindings = checkRelease(await listEverything(admin));
        if (releaseFindings.length === 0) {
          cleanAt = Date.now();
          break;
        }
        if (Date.now() > deadline) break;
        await sleep(250);
      }
      if (releaseFindings.length && o.dumpOnLeak) {
        await writeFile(o.dumpOnLeak, `${JSON.stringify(await listEverything(admin), null, 2)}\n`);
      }
      if ((await admin.list(R.Metal3Machine)).items.length > 0) {
        releaseFindings.unshift({ object: 'Metal3Machines', problem: 'not all deleted in time' });
      }
      if (o.vmetal && (await admin.list(R.NodeClaim)).items.length > 0) {
        releaseFindings.unshift({ object: 'NodeClaims', problem: 'not all deleted in time' });
      }
      checker?.poke();
      await checker?.settle();
      say(
        releaseFindings.length
          ? `chaos: release check FAILED (${releaseFindings.length})`
          : 'chaos: release clean',
      );
    } finally {
      releaseServe();
    }
  };
  // runDev waits for SIGINT/SIGTERM in serve mode: call its own listeners (only those it added).
  const before = {
    SIGINT: new Set(process.listeners('SIGINT')),
    SIGTERM: new Set(process.listeners('SIGTERM')),
  };
  const releaseListeners = () => {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      for (const l of process.listeners(sig)) {
        if (before[sig].has(l)) continue;
        process.removeListener(sig, l);
        (l as () => void)();
      }
    }
  };
  // Until runDev returns: it may not be waiting yet (it prints its summary first).
  const releaseServe = () => {
    releaseListeners();
    const t = setInterval(() => (finished ? clearInterval(t) : releaseListeners()), 100);
  };

  const out = new Writable({
    write(chunk, _enc, cb) {
      const text = String(chunk);
      for (const l of text.split('\n')) if (l.trim()) lines.push(l);
      if (lines.length > 400) lines.splice(0, lines.length - 400);
      if (o.verbose) process.stdout.write(text);
      cb();
    },
  }) as unknown as NodeJS.WriteStream;

  let result: DevResult;
  try {
    result = await capturingLogs(Boolean(o.verbose), logs, logSamples, () =>
      runDev({
        machines: o.machines,
        vmetal: o.vmetal,
        // The scale-down is ours (scaleDownAndCheck): runDev serves until it is done.
        scaleDown: false,
        serve: true,
        simDelayMs: o.simDelayMs ?? 50,
        timeoutSeconds,
        concurrency: o.concurrency ?? 16,
        legacyProviderIds: 'accept',
        out,
        lambda: o.lambda,
        queuePrefix: `chaos${process.pid}-${seed}-`,
        hooks: {
          onServers(mgmt) {
            servers.mgmt = mgmt;
            mgmt?.faults.seed(seed);
            // Its own client (not the product's: no fault rule matches it), from before anything exists.
            if (mgmt) history = recordHistory(KubeClient.fromString(mgmt.kubeconfig()));
          },
          onWorkloadCluster({ server }) {
            server.faults.seed(seed + 1 + servers.workloads.length);
            servers.workloads.push(server);
            if (active) for (const r of workloadPlan.rules) server.faults.add(r);
          },
          wrapFunctions: (fns) => crashingTable(fns, o.crash ?? 0.05, crashRandom, crashes),
          onRelayMessages(msgs, resend) {
            for (const m of msgs) {
              relayMessages++;
              const d = nextDuplicate();
              if (!d.duplicate) continue;
              duplicatesSent++;
              resend(m, d.delaySeconds);
            }
          },
          onProgress(observer, admin) {
            // The first change is seen once the sample is applied: the faults start here, so the
            // setup (CRDs, hosts, manifests) is not what is being tested.
            if (!active) activate();
            checker ??= new InvariantChecker(() => listSnapshot(admin, R));
            checker.poke();
            const tls = [...observer.timelines.values()];
            const claims = tls.filter((t) => t.model === 'vmetal').length;
            const wanted = o.vmetal ? VMETAL_SAMPLE_CLAIMS : 0;
            if (
              readyAt === undefined &&
              tls.length - claims >= o.machines &&
              claims >= wanted &&
              tls.every((t) => t.phase === 'Ready')
            ) {
              readyAt = Date.now();
              scaleDown = scaleDownAndCheck(admin).catch((e: unknown) => {
                releaseFindings.unshift({ object: 'scale-down', problem: (e as Error).message });
              });
            }
          },
        },
      }),
    );
  } finally {
    finished = true;
    if (compactTimer) clearInterval(compactTimer);
    history?.stop();
  }
  const historyViolations = history ? violations(history.events) : [];
  await scaleDown;
  await checker?.settle();

  const summary = result.summary;
  const faults = {
    ...Object.fromEntries(
      Object.entries(sumHits(mgmtPlan, servers.mgmt?.faults.hits() ?? [])).map(([k, v]) => [k, v]),
    ),
    compactions,
  } as Record<string, number>;
  for (const [k, v] of servers.workloads.flatMap((w) =>
    Object.entries(sumHits(workloadPlan, w.faults.hits())),
  )) {
    faults[k] = (faults[k] ?? 0) + v;
  }
  const invariantViolations = checker?.violations ?? [];
  if (readyAt !== undefined && cleanAt === undefined && releaseFindings.length === 0) {
    releaseFindings.push({ object: 'release check', problem: 'did not run to the end' });
  }
  const deadLettered = summary?.deadLettered ?? 0;
  const problems: string[] = [];
  if (!result.ok) problems.push(result.message);
  if (releaseFindings.length) problems.push(`${releaseFindings.length} release finding(s)`);
  if (invariantViolations.length) problems.push(`${invariantViolations.length} invariant violation(s)`);
  if (historyViolations.length) problems.push(`${historyViolations.length} history violation(s)`);
  if (deadLettered > 0) problems.push(`${deadLettered} message(s) dead-lettered`);
  if (!checker || checker.checks === 0) problems.push('no invariant check ran');
  const ok = problems.length === 0;
  return {
    ok,
    message: ok
      ? `every machine Ready${o.vmetal ? ' and every NodeClaim Available' : ''}, released cleanly, no invariant violated`
      : problems.join('; '),
    seed,
    machines: o.machines,
    ready: summary?.ready ?? 0,
    claims: summary?.claims ?? 0,
    claimsAvailable: summary?.claimsAvailable ?? 0,
    historyEvents: history?.events.length ?? 0,
    historyViolations,
    timeToReadySeconds: readyAt === undefined ? undefined : round((readyAt - started) / 1000),
    scaleDownSeconds:
      readyAt === undefined || goneAt === undefined ? undefined : round((goneAt - readyAt) / 1000),
    releaseSettleSeconds:
      goneAt === undefined || cleanAt === undefined ? undefined : round((cleanAt - goneAt) / 1000),
    wallSeconds: round((Date.now() - started) / 1000),
    faults,
    duplicatesSent,
    relayMessages,
    crashes,
    retries: summary?.retries ?? 0,
    conflictsSeenByProduct: summary?.conflicts ?? 0,
    deadLettered,
    invariantChecks: checker?.checks ?? 0,
    violations: invariantViolations,
    releaseFindings,
    logs,
    logSamples,
    addedLatencyP50Ms: summary?.addedLatencyP50Ms,
    addedLatencyP99Ms: summary?.addedLatencyP99Ms,
    ...(summary?.lambda ? { lambda: summary.lambda } : {}),
    ...(ok ? {} : { outputTail: lines.slice(-60) }),
  };
}

function runtimeIsLambda(v: string | undefined): boolean {
  if (v === undefined || v === 'worker') return false;
  if (v === 'lambda') return true;
  throw new Error(`--runtime must be worker or lambda, not '${v}'`);
}

const round = (n: number) => Math.round(n * 100) / 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function formatReport(r: ChaosReport): string {
  const rows: [string, string][] = [
    ['result', `${r.ok ? 'OK' : 'FAILED'}: ${r.message}`],
    ['seed', String(r.seed)],
    ['machines Ready', `${r.ready} / ${r.machines}`],
    ...(r.claims ? [['NodeClaims Available', `${r.claimsAvailable} / ${r.claims}`] as [string, string]] : []),
    ['time to all Ready', r.timeToReadySeconds === undefined ? 'not reached' : `${r.timeToReadySeconds} s`],
    [
      'scale-down: machines gone',
      r.scaleDownSeconds === undefined ? 'not reached' : `${r.scaleDownSeconds} s`,
    ],
    [
      '  then release clean',
      r.releaseSettleSeconds === undefined ? 'not reached' : `${r.releaseSettleSeconds} s`,
    ],
    ['wall time', `${r.wallSeconds} s`],
    [
      'API faults injected',
      Object.entries(r.faults)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
    ],
    ['relay messages / duplicated', `${r.relayMessages} / ${r.duplicatesSent}`],
    ['invocations / crashes', `${r.crashes.invocations} / ${r.crashes.crashed} (armed ${r.crashes.armed})`],
    ['retries (redeliveries)', String(r.retries)],
    ['409s seen by the product', String(r.conflictsSeenByProduct)],
    ['dead-lettered', String(r.deadLettered)],
    ['invariant checks / violations', `${r.invariantChecks} / ${r.violations.length}`],
    ['history events / violations', `${r.historyEvents} / ${r.historyViolations.length}`],
    ['release findings', String(r.releaseFindings.length)],
    [
      'added latency per machine',
      `p50 ${r.addedLatencyP50Ms ?? '-'} ms, p99 ${r.addedLatencyP99Ms ?? '-'} ms`,
    ],
    ...(r.lambda
      ? ([
          [
            'Lambda invocations',
            `${r.lambda.invocations} (${r.lambda.invocationsPerReadyMachine} per Ready machine; ${r.lambda.coldStarts} cold starts)`,
          ],
          [
            'Lambda billed',
            `${r.lambda.billedGbSeconds} GB-s (${r.lambda.billedGbSecondsPerReadyMachine} per Ready machine)`,
          ],
          [
            'per machine: processing / queued',
            `${r.lambda.processingMsPerMachine} ms / ${r.lambda.queueWaitMsPerMachine} ms (record wait p99 ${r.lambda.queueWaitP99Ms} ms)`,
          ],
        ] as [string, string][])
      : []),
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  const text = rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`);
  for (const v of r.violations) text.push(`  VIOLATION ${v.invariant}: ${v.detail}`);
  for (const v of r.historyViolations) text.push(`  HISTORY ${v}`);
  for (const f of r.releaseFindings) text.push(`  LEAK ${f.object}: ${f.problem}`);
  if (r.outputTail) text.push('  --- last lines of the run ---', ...r.outputTail.map((l) => `  ${l}`));
  return text.join('\n');
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      machines: { type: 'string' },
      seed: { type: 'string' },
      json: { type: 'string' },
      timeout: { type: 'string' },
      'sim-delay': { type: 'string' },
      verbose: { type: 'boolean' },
      'dump-on-leak': { type: 'string' },
      runtime: { type: 'string' },
      vmetal: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(
      'usage: npm run chaos -- [--machines N (200)] [--seed S (1)] [--json FILE] [--timeout S] [--sim-delay MS] [--verbose] [--dump-on-leak FILE] [--runtime worker|lambda] [--vmetal]\n',
    );
    return 0;
  }
  const int = (v: string | undefined, d: number, name: string) => {
    if (v === undefined) return d;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer`);
    return n;
  };
  const machines = int(values.machines, 200, 'machines');
  const seed = int(values.seed, 1, 'seed');
  process.stdout.write(
    `chaos: ${machines} machines${values.vmetal ? ' and the vMetal sample' : ''}, seed ${seed} …\n`,
  );
  const report = await runChaos({
    machines,
    seed,
    timeoutSeconds: values.timeout === undefined ? undefined : int(values.timeout, 0, 'timeout'),
    simDelayMs: values['sim-delay'] === undefined ? undefined : int(values['sim-delay'], 0, 'sim-delay'),
    verbose: Boolean(values.verbose),
    dumpOnLeak: values['dump-on-leak'],
    lambda: runtimeIsLambda(values.runtime),
    vmetal: Boolean(values.vmetal),
  });
  process.stdout.write(`${formatReport(report)}\n`);
  if (values.json) await writeFile(values.json, `${JSON.stringify(report, null, 2)}\n`);
  return report.ok ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`chaos: ${(e as Error).message}\n`);
      process.exit(2);
    },
  );
}
