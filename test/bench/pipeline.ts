/**
 * Pipeline benchmark (one run, ratios within the run, so machine speed cancels out; the send
 * comparison alternates three rounds and compares medians):
 *   - relay_vs_raw_send_ratio: routed events → coalescing sender → SQS, as a fraction of raw
 *     SendMessageBatch throughput (10 per batch, the same number of batches in flight) to the
 *     same server. Goal ≥ 0.5.
 *   - relay_e2e_vs_raw_send_ratio: the whole relay from the embedded API server (LIST of N
 *     machines, routing, sending) against the same raw figure.
 *   - event_to_function_p50_ms / _p99_ms: one API write until the function runs (watch → route →
 *     SQS → worker), one change at a time.
 *   - worker_ms_per_message / worker_overhead_ms_per_message: a worker running a no-op function,
 *     and what it costs beyond a bare receive + delete loop with the same concurrency.
 * Run: node test/bench/pipeline.ts
 */
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { FUNCTION_NAMES, type FunctionName } from '../../events/envelope.ts';
import { startRelay } from '../../functions/relay/relay.ts';
import { startLocalSqs } from '../../infra/local/sqs.ts';
import { R } from '../../shared/api/resources.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { noEvents } from '../../shared/observability/events.ts';
import { silentLogger } from '../../shared/observability/logger.ts';
import { ensureQueues, type QueueUrls } from '../../shared/queue/ensure.ts';
import { QueueSender } from '../../shared/queue/sender.ts';
import { createSqsClient } from '../../shared/queue/sqs.ts';
import { DEFAULT_CONFIG, type ReconcileFn } from '../../shared/reconcile/context.ts';
import { done } from '../../shared/reconcile/result.ts';
import { RelayCache } from '../../shared/routing/cache.ts';
import { route } from '../../shared/routing/index.ts';
import { Worker } from '../../shared/runtimes/worker.ts';
import { startTestCluster } from '../helpers/cluster.ts';
import { median } from './median.ts';

const N_SEND = Number(process.env.BENCH_PIPELINE_MESSAGES ?? 4000);
const N_E2E = Number(process.env.BENCH_PIPELINE_OBJECTS ?? 1000);
const N_WORKER = Number(process.env.BENCH_PIPELINE_WORKER_MESSAGES ?? 1000);
const N_HOPS = Number(process.env.BENCH_PIPELINE_HOPS ?? 50);
const IN_FLIGHT = 8;

const ROUNDS = 3;

/** A machine event; `round` changes the uid so SQS deduplication does not swallow later rounds. */
const machine = (i: number, round = 0): KubeObject => ({
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'Metal3Machine',
  metadata: {
    name: `bench-${i}`,
    namespace: 'metal3',
    uid: `uid-${round}-${i}`,
    resourceVersion: String(1000 + i),
  },
  spec: {},
});

async function rawSend(sqs: SQSClient, url: string, n: number, tag: string): Promise<number> {
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const from = next;
      next += 10;
      const entries = Array.from({ length: Math.min(10, n - from) }, (_, j) => ({
        Id: String(j),
        MessageBody: JSON.stringify({
          v: 1,
          function: 'selectHost',
          kind: 'Metal3Machine',
          name: `raw-${from + j}`,
        }),
        MessageGroupId: `Metal3Machine/metal3/raw-${from + j}`,
        MessageDeduplicationId: `${tag}-${from + j}`,
      }));
      await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return n / ((performance.now() - started) / 1000);
}

async function drainCount(sqs: SQSClient, url: string, n: number, concurrency: number): Promise<number> {
  const started = performance.now();
  let got = 0;
  const lane = async () => {
    while (got < n) {
      const r = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
      );
      const ms = r.Messages ?? [];
      if (ms.length === 0) continue;
      got += ms.length;
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: url,
          Entries: ms.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return performance.now() - started;
}

export async function benchPipeline(): Promise<Record<string, number>> {
  const local = await startLocalSqs({ backend: 'fauxqs' });
  const sqs = createSqsClient({ endpoint: local.endpoint });
  const out: Record<string, number> = {};
  try {
    const q: QueueUrls = await ensureQueues(sqs, { prefix: `bench${process.pid}-` });
    const main = q.main as Record<FunctionName, string>;

    // Raw SendMessageBatch throughput against the relay path (route N events, send them through the
    // coalescing batch sender), alternated over ROUNDS rounds and compared by their medians, so a
    // burst of load from elsewhere on the machine does not decide the ratio. Warm-up first.
    await rawSend(sqs, q.main.deprovision, 200, 'warm');
    const raws: number[] = [];
    const relays: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      raws.push(await rawSend(sqs, q.main.deprovision, N_SEND, `raw${round}`));
      const cache = new RelayCache();
      const sender = new QueueSender(sqs, main, { maxInFlightBatches: IN_FLIGHT });
      const t0 = performance.now();
      for (let i = 0; i < N_SEND; i++) {
        sender.enqueue(route({ type: 'ADDED', object: machine(i, round) }, cache));
      }
      await sender.flush();
      relays.push(sender.stats.sent / ((performance.now() - t0) / 1000));
    }
    const raw = median(raws);
    const relayRate = median(relays);
    out.raw_send_msgs_per_s = Math.round(raw);
    out.relay_send_msgs_per_s = Math.round(relayRate);
    out.relay_vs_raw_send_ratio = Number((relayRate / raw).toFixed(3));

    // Whole relay from the embedded API server: LIST N machines, route, send.
    const cluster = await startTestCluster();
    try {
      for (let i = 0; i < N_E2E; i++) {
        await cluster.client.create(R.Metal3Machine, {
          metadata: { name: `e2e-${i}`, namespace: 'metal3' },
          spec: {},
        });
      }
      const qe = await ensureQueues(sqs, { prefix: `benche${process.pid}-` });
      const t1 = performance.now();
      const relay = await startRelay({
        client: cluster.client,
        sqs,
        queues: qe,
        workloads: false,
        sender: { maxInFlightBatches: IN_FLIGHT },
      });
      await relay.flush();
      const e2eRate = relay.sender.stats.sent / ((performance.now() - t1) / 1000);
      out.relay_e2e_objects = N_E2E;
      out.relay_e2e_msgs_per_s = Math.round(e2eRate);
      out.relay_e2e_vs_raw_send_ratio = Number((e2eRate / raw).toFixed(3));

      // Latency of one hop: a write to the API server until the function runs (watch → route →
      // SQS → worker), one change at a time, with the relay above and a worker on selectHost.
      const arrived = new Map<string, number>();
      const record: ReconcileFn = async (_ctx, msg) => {
        arrived.set(`${msg.name}@${msg.resourceVersion}`, performance.now());
        return done();
      };
      const hopWorker = new Worker({
        sqs,
        fns: { selectHost: record },
        context: {
          client: cluster.client,
          workloadClient: async () => cluster.client,
          events: noEvents,
          log: silentLogger,
          config: DEFAULT_CONFIG,
          now: () => new Date(),
        },
        queues: qe,
        functions: ['selectHost'],
        concurrency: 10,
        waitTimeSeconds: 1,
        forwardRequeues: false,
      }).start();
      const hops: number[] = [];
      for (let i = 0; i < N_HOPS; i++) {
        const t = performance.now();
        const m = await cluster.client.patch(R.Metal3Machine, 'metal3', 'e2e-0', {
          metadata: { labels: { hop: String(i) } },
        });
        const key = `e2e-0@${m.metadata.resourceVersion}`;
        while (!arrived.has(key)) await new Promise((r) => setTimeout(r, 1));
        hops.push(arrived.get(key)! - t);
      }
      await hopWorker.stop({ graceMs: 1_000 });
      await relay.stop();
      hops.sort((a, b) => a - b);
      out.event_to_function_p50_ms = Number(hops[Math.floor(hops.length / 2)]!.toFixed(1));
      out.event_to_function_p99_ms = Number(
        hops[Math.min(hops.length - 1, Math.floor(hops.length * 0.99))]!.toFixed(1),
      );
    } finally {
      await cluster.stop();
    }

    // Worker overhead: a no-op function vs a bare receive + delete loop, same concurrency.
    const concurrency = 10;
    await rawSend(sqs, q.main.renderData, N_WORKER, 'bare');
    const bareMs = await drainCount(sqs, q.main.renderData, N_WORKER, concurrency);
    const noop: ReconcileFn = async () => done();
    let processed = 0;
    const ctx = {
      client: undefined as never,
      workloadClient: async () => undefined as never,
      events: noEvents,
      log: silentLogger,
      config: DEFAULT_CONFIG,
      now: () => new Date(),
    };
    const sendEnvelopes = async () => {
      for (let from = 0; from < N_WORKER; from += 10) {
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: q.main.reconcileCluster,
            Entries: Array.from({ length: Math.min(10, N_WORKER - from) }, (_, j) => ({
              Id: String(j),
              MessageBody: JSON.stringify({
                v: 1,
                function: 'reconcileCluster',
                apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
                kind: 'Metal3Cluster',
                namespace: 'metal3',
                name: `c-${from + j}`,
              }),
              MessageGroupId: `g-${from + j}`,
              MessageDeduplicationId: `w-${from + j}`,
            })),
          }),
        );
      }
    };
    await sendEnvelopes();
    const t2 = performance.now();
    const worker = new Worker({
      sqs,
      fns: { reconcileCluster: noop },
      context: ctx,
      queues: q,
      functions: ['reconcileCluster'],
      concurrency,
      waitTimeSeconds: 1,
      forwardRequeues: false,
      onOutcome: () => {
        processed++;
      },
    }).start();
    while (processed < N_WORKER) await new Promise((r) => setTimeout(r, 5));
    const workerMs = performance.now() - t2;
    await worker.stop({ graceMs: 1_000 });
    out.worker_ms_per_message = Number((workerMs / N_WORKER).toFixed(3));
    out.bare_receive_delete_ms_per_message = Number((bareMs / N_WORKER).toFixed(3));
    out.worker_overhead_ms_per_message = Number(((workerMs - bareMs) / N_WORKER).toFixed(3));
    void FUNCTION_NAMES;
    return out;
  } finally {
    sqs.destroy();
    await local.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchPipeline().then(
    (r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`),
    (e: unknown) => {
      process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
