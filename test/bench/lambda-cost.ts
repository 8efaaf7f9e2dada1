/**
 * What a fleet costs per month on Lambda, from the emulated run's figures (test/bench/lambda.ts),
 * next to an always-on pod. Pure: the prices and every assumption are inputs, printed with the
 * result, so the table in docs/benchmarks.md can be recomputed.
 *
 *   node test/bench/lambda-cost.ts FILE.json [--fleet 1000] [--churn 0.1] [--seconds-per-invocation S]
 *     [--resync-seconds S]   (default the relay's, 36,000: ADR 023)
 *
 * Prices: AWS's published us-east-1 list prices as the author knew them (2025); NOT fetched live
 * (this machine has no internet). Check them before quoting.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { RESYNC_DEFAULT_MS } from '../../functions/relay/watcher.ts';
import type { LambdaFigures } from '../../infra/local/lambda-esm.ts';

export const PRICES = {
  source:
    'aws.amazon.com/lambda/pricing, /sqs/pricing, /fargate/pricing (us-east-1), as known in 2025; not fetched live',
  lambdaRequestPerMillion: 0.2,
  lambdaGbSecondArm64: 0.0000133334,
  lambdaGbSecondX86: 0.0000166667,
  sqsFifoRequestPerMillion: 0.5,
  sqsStandardRequestPerMillion: 0.4,
  fargateVcpuHourArm64: 0.03238,
  fargateGbHourArm64: 0.00356,
  fargateVcpuHourX86: 0.04048,
  fargateGbHourX86: 0.004445,
} as const;

export interface CostInputs {
  fleet: number;
  /** Share of the fleet replaced per day (each replacement: one release and one provisioning). */
  churnPerDay: number;
  provision: LambdaFigures;
  release: LambdaFigures;
  /** Records a relay resync sends per machine (each one runs: a resync period is past the 5-minute deduplication window). */
  resyncRecordsPerMachine: number;
  /** A resync record's billed GB-s and SQS requests (from the serving window's invocations). */
  resync: LambdaFigures;
  /** Relay resync period (s). */
  resyncSeconds: number;
  memoryMb: number;
  /**
   * Instead of the measured durations (inflated by this machine's CPU contention): every
   * invocation billed this long. Undefined: as measured.
   */
  secondsPerInvocation?: number | undefined;
  /** Cold starts per replacement and the INIT time each is billed (AWS bills INIT since 2025-08-01). */
  coldStartsPerReplacement: number;
  initSeconds: number;
  /** Idle long polls of the event source mappings: pollers per mapping, mappings. */
  idlePollersPerMapping: number;
  mappings: number;
}

const HOURS_PER_MONTH = 730;
const DAYS_PER_MONTH = 30;

export function monthlyCost(i: CostInputs) {
  const replacements = i.fleet * i.churnPerDay * DAYS_PER_MONTH;
  const gb = i.memoryMb / 1024;
  const gbsOf = (f: LambdaFigures) =>
    i.secondsPerInvocation === undefined ? f.billedGbSeconds : f.invocations * i.secondsPerInvocation * gb;
  const perMachine = (f: LambdaFigures, machines: number) => ({
    invocations: f.invocations / machines,
    gbSeconds: gbsOf(f) / machines,
    sqs: (f.sqsRequests?.total ?? 0) / machines,
  });
  // The figures are per Ready (released) machine of their run.
  const ready = (f: LambdaFigures) =>
    f.invocationsPerReadyMachine ? f.invocations / f.invocationsPerReadyMachine : 1;
  const p = perMachine(i.provision, ready(i.provision));
  const r = perMachine(i.release, ready(i.release));
  const resyncRecords = i.fleet * i.resyncRecordsPerMachine * ((DAYS_PER_MONTH * 86_400) / i.resyncSeconds);
  const resyncRecordsMeasured = Object.values(i.resync.byFunction).reduce((n, f) => n + f.records, 0) || 1;
  const perRecord = {
    invocations: i.resync.invocations / resyncRecordsMeasured,
    gbSeconds: gbsOf(i.resync) / resyncRecordsMeasured,
    sqs: (i.resync.sqsRequests?.total ?? 0) / resyncRecordsMeasured,
  };
  const churn = {
    invocations: replacements * (p.invocations + r.invocations),
    gbSeconds: replacements * (p.gbSeconds + r.gbSeconds + i.coldStartsPerReplacement * i.initSeconds * gb),
    sqsRequests: replacements * (p.sqs + r.sqs),
  };
  const resync = {
    invocations: resyncRecords * perRecord.invocations,
    gbSeconds: resyncRecords * perRecord.gbSeconds,
    sqsRequests: resyncRecords * perRecord.sqs,
  };
  const idlePolls = i.mappings * i.idlePollersPerMapping * ((DAYS_PER_MONTH * 86_400) / 20);
  const dollars = (x: { invocations: number; gbSeconds: number; sqsRequests: number }) => ({
    lambdaRequests: (x.invocations / 1e6) * PRICES.lambdaRequestPerMillion,
    lambdaArm64: x.gbSeconds * PRICES.lambdaGbSecondArm64,
    lambdaX86: x.gbSeconds * PRICES.lambdaGbSecondX86,
    sqs: (x.sqsRequests / 1e6) * PRICES.sqsFifoRequestPerMillion,
  });
  const pod = (vcpu: number, gbMem: number) => ({
    arm64: HOURS_PER_MONTH * (vcpu * PRICES.fargateVcpuHourArm64 + gbMem * PRICES.fargateGbHourArm64),
    x86: HOURS_PER_MONTH * (vcpu * PRICES.fargateVcpuHourX86 + gbMem * PRICES.fargateGbHourX86),
  });
  return {
    replacementsPerMonth: replacements,
    churn: { ...churn, usd: dollars(churn) },
    resync: { records: resyncRecords, ...resync, usd: dollars(resync) },
    idlePolls: { requests: idlePolls, usd: (idlePolls / 1e6) * PRICES.sqsFifoRequestPerMillion },
    // The smallest Fargate task (0.25 vCPU takes at least 0.5 GB): the relay on Lambda, or relay + worker.
    fargateSmallestTask: pod(0.25, 0.5),
  };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      fleet: { type: 'string' },
      churn: { type: 'string' },
      'seconds-per-invocation': { type: 'string' },
      'resync-seconds': { type: 'string' },
    },
  });
  const file = positionals[0];
  if (!file) throw new Error('usage: node test/bench/lambda-cost.ts BENCH.json [--fleet N] [--churn F]');
  const bench = JSON.parse(await readFile(file, 'utf8')) as {
    churn: { lambda: LambdaFigures; release: LambdaFigures };
    resync: { relayMessagesPerMachinePerResync: number; lambdaServing: LambdaFigures };
  };
  const inputs: CostInputs = {
    fleet: Number(values.fleet ?? 1000),
    churnPerDay: Number(values.churn ?? 0.1),
    provision: bench.churn.lambda,
    release: bench.churn.release,
    resyncRecordsPerMachine: bench.resync.relayMessagesPerMachinePerResync,
    resync: bench.resync.lambdaServing,
    resyncSeconds: Number(values['resync-seconds'] ?? RESYNC_DEFAULT_MS / 1000),
    memoryMb: bench.churn.lambda.memoryMb,
    secondsPerInvocation:
      values['seconds-per-invocation'] === undefined ? undefined : Number(values['seconds-per-invocation']),
    // Replacements ~14 min apart at 10 %/day: assume every function a replacement uses starts cold.
    coldStartsPerReplacement: 9,
    initSeconds: 0.3,
    idlePollersPerMapping: 5,
    mappings: 7,
  };
  process.stdout.write(
    `${JSON.stringify({ prices: PRICES, inputs: { ...inputs, provision: undefined, release: undefined, resync: undefined }, cost: monthlyCost(inputs) }, null, 2)}\n`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
