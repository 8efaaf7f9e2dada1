/**
 * The event source mapping emulator's pure parts: serverless.yml's settings read from the file
 * itself (so the emulated run follows a change to it), and the cost and latency figures of a run's
 * invocations.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FUNCTION_NAMES } from '../../../events/envelope.ts';
import { assetPath } from '../../../infra/local/assets.ts';
import { type Invocation, lambdaFigures } from '../../../infra/local/lambda-esm.ts';
import { lambdaSettingsOf, uniformQueueSetting } from '../../../infra/local/lambda-settings.ts';
import { MAX_RECEIVE_COUNT, REQUEUE_MAX_RECEIVE_COUNT } from '../../../shared/queue/redelivery.ts';

const serverless = readFileSync(assetPath('serverless.yml'), 'utf8');

describe('lambdaSettingsOf(serverless.yml)', () => {
  const settings = lambdaSettingsOf(serverless);

  it('reads every function queue with its event source, timeout and queue attributes', () => {
    expect(settings.memoryMb).toBe(512);
    expect(settings.architecture).toBe('arm64');
    for (const fn of FUNCTION_NAMES)
      expect(settings.functions[fn], fn).toEqual({
        batchSize: 10,
        maximumConcurrency: 10,
        timeoutSeconds: 30,
        visibilityTimeoutSeconds: 180,
        maxReceiveCount: MAX_RECEIVE_COUNT,
        fifo: true,
      });
    expect(settings.functions.requeueForwarder).toEqual({
      batchSize: 10,
      maximumConcurrency: 2,
      timeoutSeconds: 10,
      visibilityTimeoutSeconds: 60,
      maxReceiveCount: REQUEUE_MAX_RECEIVE_COUNT,
      fifo: false,
    });
    expect(uniformQueueSetting(settings, FUNCTION_NAMES, 'visibilityTimeoutSeconds')).toBe(180);
  });

  it('follows a change of serverless.yml', () => {
    const changed = lambdaSettingsOf(
      serverless
        .replace('maximumConcurrency: 10', 'maximumConcurrency: 3')
        .replace('memorySize: 512', 'memorySize: 1024'),
    );
    expect(changed.functions.selectHost?.maximumConcurrency).toBe(3);
    expect(changed.memoryMb).toBe(1024);
  });

  it.each([
    ['a function without an sqs event', 'functions:\n  f:\n    handler: x\n', 'function f has no sqs event'],
    [
      'an event on a queue it does not declare',
      'provider:\n  memorySize: 128\nfunctions:\n  f:\n    events:\n      - sqs:\n          arn: !GetAtt NoQueue.Arn\n',
      'no queue resource NoQueue',
    ],
    [
      'a setting that is not a number',
      'provider:\n  memorySize: lots\nfunctions: {}\n',
      'provider.memorySize is not a number',
    ],
  ])('refuses %s', (_, text, message) => {
    expect(() => lambdaSettingsOf(text)).toThrow(message);
  });

  it('refuses queues that differ where one value is set for all', () => {
    const differing = lambdaSettingsOf(
      serverless.replace(/VisibilityTimeout: \$\{self:custom.visibilityTimeout\}/, 'VisibilityTimeout: 90'),
    );
    expect(() => uniformQueueSetting(differing, FUNCTION_NAMES, 'visibilityTimeoutSeconds')).toThrow(
      'the function queues differ in visibilityTimeoutSeconds',
    );
  });
});

const inv = (over: Partial<Invocation>): Invocation => ({
  fn: 'selectHost',
  records: 1,
  durationMs: 10,
  billedMs: 10,
  cold: false,
  failed: 0,
  threw: false,
  queueWaitMs: [0],
  countsWait: true,
  ...over,
});

describe('lambdaFigures', () => {
  it('bills whole milliseconds at the memory size, per Ready machine', () => {
    const f = lambdaFigures(
      [
        inv({ cold: true, durationMs: 1000.2, billedMs: 1001, records: 2, queueWaitMs: [100, 300] }),
        inv({ fn: 'renderData', durationMs: 999, billedMs: 999, records: 1, failed: 1, queueWaitMs: [200] }),
        // The delay queue's wait is the requeue-after asked for: not queueing.
        inv({
          fn: 'requeueForwarder',
          durationMs: 0.2,
          billedMs: 1,
          queueWaitMs: [30_000],
          countsWait: false,
        }),
      ],
      2,
      1024,
      { byCommand: { ReceiveMessage: 10, SendMessageBatch: 4 }, emptyReceives: 7 },
    );
    expect(f).toMatchObject({
      invocations: 3,
      invocationsPerReadyMachine: 1.5,
      coldStarts: 1,
      recordsPerInvocation: 1.33,
      billedMs: 2001,
      billedGbSeconds: 2.001,
      billedGbSecondsPerReadyMachine: 1.0005,
      failedRecords: 1,
      processingMsPerMachine: 1000,
      queueWaitMsPerMachine: 300,
      queueWaitP50Ms: 200,
      queueWaitP99Ms: 300,
      sqsRequests: { total: 7, perReadyMachine: 3.5, emptyReceives: 7, byCommand: { ReceiveMessage: 3 } },
    });
    expect(f.byFunction.selectHost).toEqual({
      invocations: 1,
      coldStarts: 1,
      records: 2,
      billedGbSeconds: 1.001,
    });
  });

  it('gives zeros, not NaN, for a run with nothing Ready', () => {
    const f = lambdaFigures([], 0, 512);
    expect(f.invocationsPerReadyMachine).toBe(0);
    expect(f.billedGbSecondsPerReadyMachine).toBe(0);
    expect(f.queueWaitP99Ms).toBe(0);
    expect(f.sqsRequests).toBeUndefined();
  });
});
