/**
 * `metal3fn dev --runtime lambda`: the whole system with the functions behind the emulated SQS
 * event source mappings (serverless.yml's settings): every machine Ready through them, a clean
 * release, and the summary's Lambda figures (invocations, billed GB-s, cold starts, processing vs
 * queue wait). Then the same in process with one crafted failure: the failed record comes back
 * (the handler's backoff) and the machine still reaches Ready.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { runDev } from '../../infra/local/dev/run.ts';
import type { RunSummary } from '../../infra/local/dev/summary.ts';
import { TransientError } from '../../shared/reconcile/errors.ts';
import { runMetal3fn } from '../helpers/cli.ts';

it('runs every function on emulated Lambda to Ready and reports what it cost', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'metal3fn-lambda-'));
  const summaryFile = join(dir, 'summary.json');
  const { code, out } = await runMetal3fn([
    'dev',
    '--runtime',
    'lambda',
    '--machines',
    '3',
    '--sim-delay',
    '50',
    '--scale-down',
    '--summary-json',
    summaryFile,
    '--timeout',
    '120',
  ]);
  expect(out).toContain('(functions on emulated Lambda)');
  expect(out).toContain('release check: clean');
  expect(code).toBe(0);
  const summary = JSON.parse(await readFile(summaryFile, 'utf8')) as RunSummary;
  expect(summary).toMatchObject({ machines: 3, ready: 3, deadLettered: 0 });
  const l = summary.lambda!;
  expect(l.memoryMb).toBe(512);
  // At least one invocation per function step of a machine; each one billed in whole ms.
  expect(l.invocationsPerReadyMachine).toBeGreaterThanOrEqual(4);
  expect(l.invocations).toBe(Object.values(l.byFunction).reduce((n, f) => n + f.invocations, 0));
  expect(l.billedMs).toBeGreaterThanOrEqual(l.invocations);
  expect(l.billedGbSecondsPerReadyMachine).toBeCloseTo((l.billedMs / 1000 / 3) * 0.5, 4);
  // Every function that ran started cold once at least, and at most maximumConcurrency times.
  for (const [fn, f] of Object.entries(l.byFunction)) {
    expect(f.coldStarts, fn).toBeGreaterThanOrEqual(1);
    expect(f.coldStarts, fn).toBeLessThanOrEqual(10);
  }
  expect(l.coldStarts).toBeLessThan(l.invocations);
  expect(l.processingMsPerMachine).toBeGreaterThan(0);
  expect(l.queueWaitP99Ms).toBeGreaterThanOrEqual(l.queueWaitP50Ms);
  expect(l.sqsRequests?.byCommand).toMatchObject({
    ReceiveMessage: expect.any(Number),
    DeleteMessageBatch: expect.any(Number),
  });
  // The release ran on Lambda too (deprovision, the claims' cleanup).
  expect(summary.lambdaRelease?.invocations).toBeGreaterThan(0);
}, 200_000);

it('redelivers a record its function failed, and the machine still gets Ready', async () => {
  const failed: string[] = [];
  const sink = new Writable({ write: (_c, _e, cb) => cb() }) as unknown as NodeJS.WriteStream;
  const r = await runDev({
    machines: 2,
    scaleDown: false,
    serve: false,
    simDelayMs: 50,
    timeoutSeconds: 120,
    concurrency: 16,
    legacyProviderIds: 'accept',
    out: sink,
    lambda: true,
    hooks: {
      // The first renderData run of one object fails (a crafted transient error).
      wrapFunctions: (fns) => ({
        ...fns,
        renderData: async (ctx, msg) => {
          if (failed.length === 0) {
            failed.push(msg.name);
            throw new TransientError('crafted failure');
          }
          return fns.renderData!(ctx, msg);
        },
      }),
    },
  });
  expect(r.message).toBe('every machine Ready');
  expect(failed).toHaveLength(1);
  expect(r.summary?.retries).toBe(1);
  expect(r.summary?.lambda?.failedRecords).toBe(1);
  expect(r.summary?.deadLettered).toBe(0);
}, 200_000);
