/**
 * What only the local worker does, against a real SQS server (fauxqs): it keeps extending the
 * visibility of a message while it runs, and a graceful stop lets the running message finish and
 * loses nothing queued behind it.
 */
import { DeleteMessageCommand, type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureQueues, type QueueUrls } from '../../../shared/queue/ensure.ts';
import { createSqsClient } from '../../../shared/queue/sqs.ts';
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

describe('local worker: slots', () => {
  it("an idle queue's next long poll asks for one message, not its share: its slots go to the busy queue", async () => {
    // The worker's own client, with every ReceiveMessage it sends recorded (queue, count asked, count got).
    const sqs = createSqsClient({ endpoint: local.endpoint, region: 'us-east-1' });
    const receives: { queue: string; asked: number; got: number }[] = [];
    sqs.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'ReceiveMessageCommand') {
          const input = args.input as { QueueUrl: string; MaxNumberOfMessages: number };
          const got = (out.output as { Messages?: unknown[] }).Messages?.length ?? 0;
          receives.push({ queue: input.QueueUrl, asked: input.MaxNumberOfMessages, got });
        }
        return out;
      },
      { step: 'initialize', name: 'recordReceives' },
    );
    const g = gate();
    const core: ReconcileFn = async () => {
      await g.wait;
      return done();
    };
    await sendBodies(
      local.sqs,
      urls.main.renderData,
      ['k1', 'k2'].map((name) => ({
        body: JSON.stringify(envelope({ function: 'renderData', name })),
        group: name,
      })),
    );
    const worker = new Worker({
      sqs,
      fns: { renderData: core, deprovision: core },
      context: offlineContext(),
      queues: urls,
      functions: ['renderData', 'deprovision'],
      waitTimeSeconds: 1,
      concurrency: 6,
    }).start();
    const of = (url: string) => receives.filter((r) => r.queue === url);
    try {
      // Two messages run (gated) and four slots are free. deprovision's queue is empty: its first
      // receive asks for its share (6 / 2), the next ones for one (they asked for three before).
      await until(() => of(urls.main.deprovision).length >= 3);
      expect(of(urls.main.deprovision).map((r) => [r.asked, r.got])).toEqual([
        [3, 0],
        [1, 0],
        [1, 0],
      ]);
      expect(of(urls.main.renderData)[0]).toEqual({ queue: urls.main.renderData, asked: 3, got: 2 });
      g.open();
      await until(() => worker.stats.done === 2);
    } finally {
      g.open();
      await worker.stop({ graceMs: 2_000 });
      sqs.destroy();
    }
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
