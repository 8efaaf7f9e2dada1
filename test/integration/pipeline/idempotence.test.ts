/**
 * Duplicated and reordered messages change nothing: a level-triggered function doing an optimistic
 * update (GET → mutate → PUT with resourceVersion, retry on 409) converges to the same object and
 * writes once, however often and in whatever order the queue delivers its key.
 */
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deduplicationId, type MessageEnvelope } from '../../../events/envelope.ts';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { optimisticUpdate } from '../../../shared/kube/optimistic.ts';
import { noEvents } from '../../../shared/observability/events.ts';
import { silentLogger } from '../../../shared/observability/logger.ts';
import { ensureQueues, type QueueUrls } from '../../../shared/queue/ensure.ts';
import {
  DEFAULT_CONFIG,
  type ReconcileContext,
  type ReconcileFn,
} from '../../../shared/reconcile/context.ts';
import { done } from '../../../shared/reconcile/result.ts';
import { Worker } from '../../../shared/runtimes/worker.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { envelope } from '../../helpers/messages.ts';
import { startSqs } from '../../helpers/sqs.ts';
import { until } from '../../helpers/wait.ts';

const NS = 'metal3';
let cluster: TestCluster;
let local: Awaited<ReturnType<typeof startSqs>>;
let queues: QueueUrls;
const outcomes: string[] = [];

/** Copies the machine's `step` label into an annotation: the desired state is a function of the object. */
const stampObserved: ReconcileFn = async (ctx, msg) => {
  const r = await optimisticUpdate(ctx.client, envelopeOf(R.Metal3Machine), msg.namespace, msg.name, (m) => {
    m.metadata.annotations = {
      ...m.metadata.annotations,
      'test/observed-step': m.metadata.labels?.step ?? '',
    };
  });
  outcomes.push(r.outcome);
  return done();
};

beforeAll(async () => {
  cluster = await startTestCluster();
  local = await startSqs();
  queues = await ensureQueues(local.sqs, { prefix: 'idem-', functions: ['selectHost'] });
});
afterAll(async () => {
  local?.sqs.destroy();
  await local?.stop();
  await cluster?.stop();
});

function context(): ReconcileContext {
  return {
    client: cluster.client,
    workloadClient: async () => cluster.client,
    events: noEvents,
    log: silentLogger,
    config: DEFAULT_CONFIG,
    now: () => new Date(),
  };
}

/** Sends each message `copies` times with distinct dedup ids (at-least-once redelivery), across groups. */
async function sendDuplicated(msgs: MessageEnvelope[], copies: number): Promise<number> {
  const entries = msgs.flatMap((m, i) =>
    Array.from({ length: copies }, (_, c) => ({
      Id: `${i}-${c}`,
      MessageBody: JSON.stringify(m),
      // Two groups, so two workers run the same key at once (the queue's group lock is bypassed on purpose).
      MessageGroupId: `dup-${c % 2}`,
      MessageDeduplicationId: `${deduplicationId(m)}-copy-${c}`,
    })),
  );
  for (let i = 0; i < entries.length; i += 10) {
    await local.sqs.send(
      new SendMessageBatchCommand({ QueueUrl: queues.main.selectHost, Entries: entries.slice(i, i + 10) }),
    );
  }
  return entries.length;
}

describe('duplicated and reordered messages', () => {
  it('converge to the same object with a single write per change', async () => {
    const m = await cluster.client.create(envelopeOf(R.Metal3Machine), {
      metadata: { name: 'idem-0', namespace: NS, labels: { step: '1' } },
      spec: {},
    });
    const workers = [0, 1].map(() =>
      new Worker({
        sqs: local.sqs,
        fns: { selectHost: stampObserved },
        context: context(),
        queues,
        waitTimeSeconds: 1,
        concurrency: 4,
      }).start(),
    );
    // A receive hands out several messages of a group; those superseded by a later one of the
    // same key in it are acknowledged without running (ADR 027): each message runs or is coalesced.
    const coalesced = () => workers.reduce((n, w) => n + w.stats.coalesced, 0);
    try {
      const at = (rv: string) =>
        envelope({ name: 'idem-0', uid: (m.metadata as { uid?: string }).uid, resourceVersion: rv });
      // Newest first, then stale ones: the order must not matter.
      let sent = await sendDuplicated([at('30'), at('20'), at('10')], 4);
      await until(() => outcomes.length + coalesced() >= sent, 20_000);
      const after1 = await cluster.client.get(envelopeOf(R.Metal3Machine), NS, 'idem-0');
      expect(after1?.metadata.annotations?.['test/observed-step']).toBe('1');
      expect(outcomes.filter((o) => o === 'updated')).toHaveLength(1);

      // A real change, then more duplicates in reverse order: exactly one more write.
      await cluster.client.patch(envelopeOf(R.Metal3Machine), NS, 'idem-0', {
        metadata: { labels: { step: '2' } },
      });
      outcomes.length = 0;
      const coalescedBefore = coalesced();
      sent = await sendDuplicated([at('50'), at('40')], 3);
      await until(() => outcomes.length + coalesced() - coalescedBefore >= sent, 20_000);
      const after2 = await cluster.client.get(envelopeOf(R.Metal3Machine), NS, 'idem-0');
      expect(after2?.metadata.annotations?.['test/observed-step']).toBe('2');
      expect(outcomes.filter((o) => o === 'updated')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'unchanged')).toHaveLength(
        sent - 1 - (coalesced() - coalescedBefore),
      );
      for (const w of workers) expect(w.stats.malformed).toBe(0);
    } finally {
      await Promise.all(workers.map((w) => w.stop({ graceMs: 2_000 })));
    }
  });
});
