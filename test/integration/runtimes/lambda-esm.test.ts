/**
 * The SQS event source mapping emulator (infra/local/lambda-esm.ts) on a real SQS server: what it
 * deletes and what comes back (batchItemFailures, an invocation that throws), the receive limit
 * (the queue's redrive policy), FIFO group holds with the real Lambda adapter, and the concurrency
 * limit with warm and cold instances. Failures are crafted, never timed.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type EsmSource,
  EventSourceMappings,
  type Invocation,
  type SqsLambdaHandler,
} from '../../../infra/local/lambda-esm.ts';
import type { EsmSettings } from '../../../infra/local/lambda-settings.ts';
import { ensureQueues, type QueueUrls, queueArn } from '../../../shared/queue/ensure.ts';
import type { ReconcileFn } from '../../../shared/reconcile/context.ts';
import { createSqsHandler } from '../../../shared/runtimes/lambda.ts';
import { offlineContext } from '../../helpers/context.ts';
import { envelope } from '../../helpers/messages.ts';
import { receiveAll, sendBodies, useSqs } from '../../helpers/sqs.ts';
import { eventually } from '../../helpers/wait.ts';

const local = useSqs();
let installs = 0;
let esm: EventSourceMappings | undefined;

afterEach(async () => {
  await esm?.stop();
  esm = undefined;
});

const body = (name: string) => JSON.stringify(envelope({ name, uid: `uid-${name}`, resourceVersion: '1' }));
const nameOf = (record: { body: string }) => (JSON.parse(record.body) as { name: string }).name;

async function queues(o: {
  visibility: number;
  maxReceiveCount?: number;
}): Promise<{ prefix: string; urls: QueueUrls }> {
  const prefix = `esm${process.pid}x${installs++}-`;
  const urls = await ensureQueues(local.sqs, {
    prefix,
    functions: ['selectHost'],
    visibilityTimeoutSeconds: o.visibility,
    maxReceiveCount: o.maxReceiveCount ?? 12,
  });
  return { prefix, urls };
}

const settings = (over: Partial<EsmSettings> = {}): EsmSettings => ({
  batchSize: 10,
  maximumConcurrency: 10,
  timeoutSeconds: 30,
  visibilityTimeoutSeconds: 1,
  maxReceiveCount: 12,
  fifo: true,
  ...over,
});

async function source(
  urls: QueueUrls,
  coldStart: () => SqsLambdaHandler,
  over: Partial<EsmSettings> = {},
): Promise<EsmSource> {
  return {
    fn: 'selectHost',
    sqs: local.sqs as SQSClient,
    queueUrl: urls.main.selectHost,
    queueArn: await queueArn(local.sqs, urls.main.selectHost),
    settings: settings(over),
    coldStart,
  };
}

describe('EventSourceMappings', () => {
  it('deletes what the batch response does not name; a named record comes back after the visibility timeout', async () => {
    const { urls } = await queues({ visibility: 1 });
    // Three records in three groups, all there before the first receive: one batch.
    await sendBodies(local.sqs, urls.main.selectHost, [
      { body: body('a'), group: 'ga' },
      { body: body('fails-once'), group: 'gb' },
      { body: body('c'), group: 'gc' },
    ]);
    const seen: { name: string; receive: string }[] = [];
    const invocations: Invocation[] = [];
    // A crafted handler: it reports the record `fails-once` failed at its first receive, and sets
    // no backoff, so only the queue's visibility timeout brings it back.
    const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
      for (const r of event.Records)
        seen.push({ name: nameOf(r), receive: r.attributes.ApproximateReceiveCount });
      return {
        batchItemFailures: event.Records.filter(
          (r) => nameOf(r) === 'fails-once' && r.attributes.ApproximateReceiveCount === '1',
        ).map((r) => ({ itemIdentifier: r.messageId })),
      };
    };
    esm = new EventSourceMappings({
      sources: [await source(urls, () => handler)],
      onInvocation: (i) => invocations.push(i),
    }).start();

    await eventually(
      () => seen.some((s) => s.name === 'fails-once' && s.receive === '2'),
      'the redelivery',
      15_000,
    );
    await eventually(
      async () =>
        (await receiveAll(local.sqs, urls.main.selectHost, 1, { timeoutMs: 200 })).length === 0 || undefined,
      'an empty queue',
    );
    expect(seen).toEqual([
      { name: 'a', receive: '1' },
      { name: 'fails-once', receive: '1' },
      { name: 'c', receive: '1' },
      { name: 'fails-once', receive: '2' },
    ]);
    expect(invocations.map((i) => [i.records, i.failed, i.cold])).toEqual([
      [3, 1, true],
      [1, 0, false],
    ]);
    // The redelivered record waited at least the visibility timeout in the queue.
    expect(invocations[1]!.queueWaitMs[0]).toBeGreaterThanOrEqual(1000);
  });

  it('deletes nothing of an invocation that throws', async () => {
    const { urls } = await queues({ visibility: 1 });
    await sendBodies(local.sqs, urls.main.selectHost, [
      { body: body('x'), group: 'gx' },
      { body: body('y'), group: 'gy' },
    ]);
    const received: string[] = [];
    let thrown = false;
    const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
      received.push(...event.Records.map(nameOf));
      if (!thrown) {
        thrown = true;
        throw new Error('function error');
      }
      return { batchItemFailures: [] };
    };
    const invocations: Invocation[] = [];
    esm = new EventSourceMappings({
      sources: [await source(urls, () => handler)],
      onInvocation: (i) => invocations.push(i),
    }).start();
    await eventually(() => received.length === 4, 'both records twice', 15_000);
    expect(received.sort()).toEqual(['x', 'x', 'y', 'y']);
    expect(invocations[0]).toMatchObject({ records: 2, failed: 2, threw: true });
  });

  it('leaves a record failing at every receive to the redrive policy (the dead-letter queue)', async () => {
    const { urls } = await queues({ visibility: 1, maxReceiveCount: 2 });
    await sendBodies(local.sqs, urls.main.selectHost, [{ body: body('always-fails'), group: 'g' }]);
    const fail = async (event: SQSEvent): Promise<SQSBatchResponse> => ({
      batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })),
    });
    const invocations: Invocation[] = [];
    esm = new EventSourceMappings({
      sources: [await source(urls, () => fail, { maxReceiveCount: 2 })],
      onInvocation: (i) => invocations.push(i),
    }).start();
    const dead = await eventually(
      async () => {
        const got = await receiveAll(local.sqs, urls.dlq.selectHost, 1, { timeoutMs: 300 });
        return got.length ? got : undefined;
      },
      'the dead letter',
      20_000,
    );
    expect(dead.map((m) => nameOf({ body: m.Body ?? '' }))).toEqual(['always-fails']);
    expect(invocations).toHaveLength(2);
  });

  it('holds a FIFO group behind its failed record with the Lambda adapter', async () => {
    const { prefix, urls } = await queues({ visibility: 30 });
    await sendBodies(local.sqs, urls.main.selectHost, [
      { body: body('first'), group: 'g' },
      { body: body('second'), group: 'g' },
      { body: body('other'), group: 'h' },
    ]);
    const runs: string[] = [];
    let failedOnce = false;
    const reconcile: ReconcileFn = async (_ctx, msg) => {
      runs.push(msg.name);
      if (msg.name === 'first' && !failedOnce) {
        failedOnce = true;
        throw new Error('transient failure');
      }
      return { kind: 'done' };
    };
    const context = offlineContext();
    const coldStart = () =>
      createSqsHandler({
        fns: { selectHost: reconcile },
        context: () => context,
        sqs: local.sqs,
        naming: { prefix },
        requeueUrl: urls.requeue,
        // Back at once: the order is what is tested, not the wait.
        retryBackoffSeconds: () => 0,
      });
    esm = new EventSourceMappings({ sources: [await source(urls, coldStart)] }).start();
    await eventually(() => runs.filter((n) => n === 'second').length === 1, 'the held record', 15_000);
    // `second` ran once, after `first` succeeded; `other` was not held by group g.
    expect(runs.filter((n) => n !== 'other')).toEqual(['first', 'first', 'second']);
    expect(runs.filter((n) => n === 'other')).toEqual(['other']);
  });

  it('runs at most maximumConcurrency invocations at once, each instance warm after its first', async () => {
    const { urls } = await queues({ visibility: 30 });
    await sendBodies(
      local.sqs,
      urls.main.selectHost,
      ['m1', 'm2', 'm3', 'm4', 'm5', 'm6'].map((n) => ({ body: body(n), group: n })),
    );
    let running = 0;
    let most = 0;
    const waiting: (() => void)[] = [];
    const handler = async (): Promise<SQSBatchResponse> => {
      running++;
      most = Math.max(most, running);
      // Held until the test lets it go: the next invocations can only start on a free slot.
      await new Promise<void>((resolve) => waiting.push(resolve));
      running--;
      return { batchItemFailures: [] };
    };
    const invocations: Invocation[] = [];
    esm = new EventSourceMappings({
      sources: [await source(urls, () => handler, { batchSize: 1, maximumConcurrency: 2 })],
      onInvocation: (i) => invocations.push(i),
    }).start();
    for (let released = 0; released < 6; released++) {
      await eventually(() => waiting.length > 0, 'an invocation waiting');
      waiting.shift()!();
    }
    await eventually(() => invocations.length === 6, 'six invocations');
    expect(most).toBe(2);
    expect(invocations.filter((i) => i.cold)).toHaveLength(2);
    expect(esm.instancesOf('selectHost')).toBe(2);
  });
});
