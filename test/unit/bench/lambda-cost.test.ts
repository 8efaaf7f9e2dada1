/** The monthly cost model of a fleet on Lambda (test/bench/lambda-cost.ts): its arithmetic, by hand. */
import { describe, expect, it } from 'vitest';
import { type LambdaFigures, lambdaFigures } from '../../../infra/local/lambda-esm.ts';
import { type CostInputs, monthlyCost, PRICES } from '../../bench/lambda-cost.ts';

const figures = (o: {
  invocations: number;
  perMachine: number;
  gbs: number;
  sqs: number;
  records: number;
}): LambdaFigures => ({
  ...lambdaFigures([], 1, 512),
  invocations: o.invocations,
  invocationsPerReadyMachine: o.perMachine,
  billedGbSeconds: o.gbs,
  sqsRequests: { total: o.sqs, perReadyMachine: 0, emptyReceives: 0, byCommand: {} },
  byFunction: {
    selectHost: { invocations: o.invocations, coldStarts: 0, records: o.records, billedGbSeconds: o.gbs },
  },
});

const inputs: CostInputs = {
  fleet: 1000,
  churnPerDay: 0.1,
  // 10 machines: 20 invocations, 10 GB-s, 50 SQS requests each to Ready; half that to release.
  provision: figures({ invocations: 200, perMachine: 20, gbs: 100, sqs: 500, records: 200 }),
  release: figures({ invocations: 100, perMachine: 10, gbs: 50, sqs: 250, records: 100 }),
  resyncRecordsPerMachine: 10,
  // Two records per invocation, 0.01 GB-s and 1 SQS request per record.
  resync: figures({ invocations: 50, perMachine: 5, gbs: 1, sqs: 100, records: 100 }),
  resyncSeconds: 600,
  memoryMb: 512,
  coldStartsPerReplacement: 0,
  initSeconds: 0,
  idlePollersPerMapping: 5,
  mappings: 7,
};

describe('monthlyCost', () => {
  it('adds churn, resync and idle polls from the per-machine and per-record figures', () => {
    const c = monthlyCost(inputs);
    expect(c.replacementsPerMonth).toBe(3000);
    expect(c.churn).toMatchObject({ invocations: 3000 * 30, gbSeconds: 3000 * 15, sqsRequests: 3000 * 75 });
    // 1,000 machines × 10 records × 4,320 resyncs a month.
    expect(c.resync.records).toBe(43_200_000);
    expect(c.resync.invocations).toBe(21_600_000);
    expect(c.resync.gbSeconds).toBeCloseTo(432_000, 6);
    expect(c.resync.usd.sqs).toBeCloseTo(43.2 * PRICES.sqsFifoRequestPerMillion, 6);
    expect(c.idlePolls.requests).toBe(7 * 5 * 129_600);
    expect(c.fargateSmallestTask.arm64).toBeCloseTo(730 * (0.25 * 0.03238 + 0.5 * 0.00356), 6);
  });

  it('bills every invocation a fixed time when asked, and INIT per cold start', () => {
    const c = monthlyCost({
      ...inputs,
      secondsPerInvocation: 0.1,
      coldStartsPerReplacement: 2,
      initSeconds: 0.5,
    });
    // 30 invocations × 0.1 s × 0.5 GB + 2 × 0.5 s × 0.5 GB per replacement.
    expect(c.churn.gbSeconds).toBeCloseTo(3000 * (1.5 + 0.5), 6);
  });
});
