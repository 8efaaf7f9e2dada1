/**
 * What only the local worker does, against a real SQS server (fauxqs): it keeps extending the
 * visibility of a message while it runs, and a graceful stop lets the running message finish and
 * loses nothing queued behind it.
 */
import { DeleteMessageCommand, type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureQueues, type QueueUrls } from '../../../shared/queue/ensure.ts';
import type { ReconcileFn } from '../../../shared/reconcile/context.ts';
import { done } from '../../../shared/reconcile/result.ts';
import { Worker } from '../../../shared/runtimes/worker.ts';
import { offlineContext } from '../../helpers/context.ts';
import { envelope } from '../../helpers/messages.ts';
import { receiveAll, sendBodies, useSqs } from '../../helpers/sqs.ts';
import { until } from '../../helpers/wait.ts';

const local = useSqs();
let urls: QueueUrls;
beforeAll(async () => {
  urls = await ensureQueues(local.sqs, { prefix: 'worker-', visibilityTimeoutSeconds: 5 });
});

/** A gate the test opens: the core awaiting it runs until then. */
function gate() {
  let open!: () => void;
  const wait = new Promise<void>((r) => {
    open = r;
  });
  return { wait, open };
}

describe('local worker', () => {
  it('extends visibility while a slow message runs, so no other consumer gets it', async () => {
    const g = gate();
    const slow: ReconcileFn = async () => {
      await g.wait;
      return done();
    };
    const worker = new Worker({
      sqs: local.sqs,
      fns: { reconcileCluster: slow },
      context: offlineContext(),
      queues: urls,
      functions: ['reconcileCluster'],
      waitTimeSeconds: 1,
      visibilityTimeoutSeconds: 2,
    }).start();
    try {
      await sendBodies(local.sqs, urls.main.reconcileCluster, [
        {
          body: JSON.stringify(
            envelope({ function: 'reconcileCluster', kind: 'Metal3Cluster', name: 'slow-1' }),
          ),
          group: 's',
        },
      ]);
      await until(() => worker.stats.received === 1);
      // Another consumer polls for twice the 2 s visibility: the extensions keep the message hidden.
      let stolen = 0;
      const end = Date.now() + 4_000;
      while (Date.now() < end) {
        const r = await local.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: urls.main.reconcileCluster,
            WaitTimeSeconds: 1,
            VisibilityTimeout: 1,
          }),
        );
        stolen += r.Messages?.length ?? 0;
      }
      g.open();
      expect(stolen).toBe(0);
      await until(() => worker.stats.done === 1);
    } finally {
      g.open();
      await worker.stop({ graceMs: 2_000 });
    }
  });

  it('graceful stop lets the running message finish and loses nothing queued behind it', async () => {
    const g = gate();
    const started: string[] = [];
    const core: ReconcileFn = async (_ctx, msg) => {
      started.push(msg.name);
      if (msg.name === 'slow') await g.wait;
      return done();
    };
    const worker = new Worker({
      sqs: local.sqs,
      fns: { renderData: core },
      context: offlineContext(),
      queues: urls,
      functions: ['renderData'],
      waitTimeSeconds: 1,
      concurrency: 4,
    }).start();
    // One group: 'slow' runs, 'after-1' and 'after-2' wait behind it in order.
    await sendBodies(
      local.sqs,
      urls.main.renderData,
      ['slow', 'after-1', 'after-2'].map((name) => ({
        body: JSON.stringify(envelope({ function: 'renderData', name })),
        group: 'one',
      })),
    );
    await until(() => started.includes('slow'));
    // The stop is under way (it stops receiving at once) when the running message finishes.
    const stopping = worker.stop({ graceMs: 5_000 });
    g.open();
    const result = await stopping;
    expect(started).toEqual(['slow']);
    expect(result.finished).toBe(1);
    // Nothing lost: the messages behind 'slow' (received with it, as SQS hands out several of a
    // group, and released by the stop while 'slow' ran) come back, in order.
    const back: Message[] = [];
    for (let i = 0; i < 2; i++) {
      const [m] = await receiveAll(local.sqs, urls.main.renderData, 1);
      back.push(m!);
      await local.sqs.send(
        new DeleteMessageCommand({ QueueUrl: urls.main.renderData, ReceiptHandle: m!.ReceiptHandle! }),
      );
    }
    expect(back.map((m) => JSON.parse(m.Body!).name)).toEqual(['after-1', 'after-2']);
  });
});

describe('local worker: a receive with several messages of one key (ADR 027)', () => {
  it('runs the last message of a key once, acknowledges the earlier ones, and runs the other keys in order', async () => {
    const bodies = [
      envelope({
        function: 'allocateIndex',
        kind: 'Metal3DataClaim',
        name: 'a',
        resourceVersion: '1',
        reason: 'added',
      }),
      envelope({ function: 'allocateIndex', kind: 'Metal3DataClaim', name: 'b', resourceVersion: '1' }),
      envelope({ function: 'allocateIndex', kind: 'Metal3DataClaim', name: 'a', resourceVersion: '2' }),
    ];
    await sendBodies(
      local.sqs,
      urls.main.allocateIndex,
      bodies.map((b) => ({ body: JSON.stringify(b), group: 'Metal3DataTemplate/metal3/t' })),
    );
    const ran: string[] = [];
    const core: ReconcileFn = async (_ctx, msg) => {
      ran.push(`${msg.name}@${msg.resourceVersion}`);
      return done();
    };
    // One receive hands out the group's three messages, in order, as SQS does.
    const worker = new Worker({
      sqs: local.sqs,
      fns: { allocateIndex: core },
      context: offlineContext(),
      queues: urls,
      functions: ['allocateIndex'],
      waitTimeSeconds: 1,
      concurrency: 4,
    }).start();
    try {
      await until(() => worker.stats.done + worker.stats.coalesced === 3);
      expect(worker.stats.received).toBe(3);
      expect(worker.stats.coalesced).toBe(1);
      expect(ran).toEqual(['b@1', 'a@2']);
      // All three were deleted: none comes back.
      expect(await receiveAll(local.sqs, urls.main.allocateIndex, 1, { timeoutMs: 1_500 })).toEqual([]);
    } finally {
      await worker.stop({ graceMs: 2_000 });
    }
  });
});
