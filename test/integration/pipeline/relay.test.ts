/**
 * The relay against the embedded API server, through real SQS to a worker running a recording
 * function: under injected watch drops, a compaction (410 on resume: forced, and the server's own
 * time-based one) and a silent (black-holed) watch connection, every object's final state still reaches a function, and the relay's cache
 * converges on the server's state (changes missed in the gap are synthesized from the re-list).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_NAMES, type FunctionName } from '../../../events/envelope.ts';
import { type Relay, startRelay } from '../../../functions/relay/relay.ts';
import { advanceableClock } from '../../../infra/local/apiserver/index.ts';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
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
import { startTestCluster, type TestCluster, testClient } from '../../helpers/cluster.ts';
import { startSqs } from '../../helpers/sqs.ts';
import { until } from '../../helpers/wait.ts';
import { type FreezableProxy, startFreezableProxy } from './proxy.ts';

const NS = 'metal3';
/** The API server's clock, advanced to let its compaction intervals pass (no sleeping). */
const clock = advanceableClock();
/** The embedded server's compaction interval (etcd's default, 5 minutes). */
const COMPACTION_INTERVAL_MS = 5 * 60_000;
let cluster: TestCluster;
let proxy: FreezableProxy;
let local: Awaited<ReturnType<typeof startSqs>>;
let queues: QueueUrls;
let relay: Relay;
let worker: Worker;
/** `fn kind/name` → resourceVersions the function saw when it re-read the object ('gone' if absent). */
const seen = new Map<string, string[]>();

const recording: ReconcileFn = async (ctx, msg) => {
  const t = envelopeOf(R[msg.kind as keyof typeof R]);
  const obj = await ctx.client.get(t, msg.namespace, msg.name);
  const key = `${msg.function} ${msg.kind}/${msg.name}`;
  seen.set(key, [...(seen.get(key) ?? []), obj?.metadata.resourceVersion ?? 'gone']);
  return done();
};

beforeAll(async () => {
  cluster = await startTestCluster({ bookmarkIntervalMs: 250, clock });
  proxy = await startFreezableProxy(cluster.server.port);
  local = await startSqs();
  queues = await ensureQueues(local.sqs, { prefix: 'relay-it-' });
  const viaProxy = testClient(cluster.kubeconfig.replaceAll(cluster.server.url, proxy.url));
  relay = await startRelay({
    client: viaProxy,
    sqs: local.sqs,
    queues,
    workloads: false,
    // No periodic resync: convergence must come from the watch, the 410 re-list and the watchdog alone.
    watch: { silenceMs: 1_500, resyncMs: 0, listTimeoutMs: 3_000 },
  });
  const ctx: ReconcileContext = {
    client: cluster.client,
    workloadClient: async () => cluster.client,
    events: noEvents,
    log: silentLogger,
    config: DEFAULT_CONFIG,
    now: () => new Date(),
  };
  const fns = Object.fromEntries(FUNCTION_NAMES.map((f) => [f, recording])) as Record<
    FunctionName,
    ReconcileFn
  >;
  worker = new Worker({
    sqs: local.sqs,
    fns,
    context: ctx,
    queues,
    waitTimeSeconds: 1,
    concurrency: 16,
  }).start();
});

afterAll(async () => {
  await worker?.stop({ graceMs: 2_000 });
  await relay?.stop();
  await proxy?.stop();
  local?.sqs.destroy();
  await local?.stop();
  await cluster?.stop();
});

const machine = (name: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name, namespace: NS, labels: { step: '0' }, ...extra },
  spec: {},
});

async function bump(name: string, step: number): Promise<void> {
  await cluster.client.patch(envelopeOf(R.Metal3Machine), NS, name, {
    metadata: { labels: { step: String(step) } },
  });
}

/** A second relay of its own (fresh counters) through the proxy: a quick watchdog, no resync. */
const relayViaProxy = (listTimeoutMs: number, onMessages?: Parameters<typeof startRelay>[0]['onMessages']) =>
  startRelay({
    client: testClient(cluster.kubeconfig.replaceAll(cluster.server.url, proxy.url)),
    sqs: local.sqs,
    queues,
    workloads: false,
    watch: { silenceMs: 800, resyncMs: 0, listTimeoutMs },
    onMessages,
  });

describe('relay under watch faults', () => {
  it('loses no change: drops, a 410 gap with deletions, and a silent connection', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `m-${i}`);
    for (const n of names) await cluster.client.create(envelopeOf(R.Metal3Machine), machine(n));

    // 1. Watches of machines end after every 2 events, five times over.
    cluster.server.faults.add({ verb: 'watch', resource: 'metal3machines', dropWatchAfter: 2, times: 5 });
    for (let step = 1; step <= 3; step++) for (const n of names) await bump(n, step);

    // 2. The machine watch goes silent (black hole), changes happen, history is compacted: the
    //    watchdog reconnects, the resume answers 410, the re-list diff must produce what was missed.
    await until(() => cluster.server.watchCount() > 0 && proxy.freezeWatches() > 0);
    for (const n of names.slice(0, 5)) await bump(n, 99);
    for (const n of names.slice(15)) await cluster.client.delete(R.Metal3Machine, NS, n);
    for (const n of ['late-a', 'late-b'])
      await cluster.client.create(envelopeOf(R.Metal3Machine), machine(n));
    cluster.server.faults.compact();

    const w = relay.watchers.get('Metal3Machine')!;
    const expected = async () => {
      const list = await cluster.client.list(envelopeOf(R.Metal3Machine), NS);
      return new Map(list.items.map((m) => [m.metadata.name!, m.metadata.resourceVersion!]));
    };
    const finalState = await expected();
    expect(finalState.size).toBe(17);

    // Every existing machine's final resourceVersion reached selectHost.
    await until(async () => {
      for (const [name, rv] of finalState) {
        const rvs = seen.get(`selectHost Metal3Machine/${name}`) ?? [];
        if (!rvs.includes(rv)) return undefined;
      }
      return true;
    }, 25_000);

    // The relay's cache converged on the server (deleted machines gone, new ones present).
    const cached = new Map(
      relay.cache.list('Metal3Machine', NS).map((m) => [m.metadata.name!, m.metadata.resourceVersion!]),
    );
    expect(cached).toEqual(finalState);
    expect(w.counts.silences).toBeGreaterThanOrEqual(1);
    expect(w.counts.gones).toBeGreaterThanOrEqual(1);
    expect(w.counts.relists).toBeGreaterThanOrEqual(2);
  });

  it('routes related events: a host claimed by a machine wakes that machine; its deletion mark wakes deprovision', async () => {
    await cluster.client.create(
      envelopeOf(R.Metal3Machine),
      machine('owner-0', { finalizers: ['test/hold'] }),
    );
    await cluster.client.create(R.BareMetalHost, {
      metadata: { name: 'host-0', namespace: NS },
      spec: {
        consumerRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'Metal3Machine',
          name: 'owner-0',
          namespace: NS,
        },
      },
    });
    await until(() => (seen.get('selectHost Metal3Machine/owner-0')?.length ?? 0) >= 1);
    await cluster.client.delete(R.Metal3Machine, NS, 'owner-0');
    await until(() => (seen.get('deprovision Metal3Machine/owner-0')?.length ?? 0) >= 1, 10_000);
    // Then a host event alone (no machine change) must wake deprovision again. (Sent together, the two
    // would be coalesced into one message by design: the function re-reads the object anyway.)
    await cluster.client.patch(R.BareMetalHost, NS, 'host-0', { metadata: { labels: { touched: 'yes' } } });
    await until(() => (seen.get('deprovision Metal3Machine/owner-0')?.length ?? 0) >= 2, 10_000);
    await relay.flush();
    expect(relay.sender.stats.sent).toBeGreaterThan(0);
  });

  it("meets the server's own time-based compaction: a watch silent across two intervals resumes into 410 and re-lists", async () => {
    const r = await relayViaProxy(3_000);
    try {
      const w = r.watchers.get('Metal3Machine')!;
      for (const n of ['tc-a', 'tc-b', 'tc-c'])
        await cluster.client.create(envelopeOf(R.Metal3Machine), machine(n));
      await until(() => ['tc-a', 'tc-b', 'tc-c'].every((n) => r.cache.get('Metal3Machine', NS, n)), 10_000);
      const relistsBefore = w.counts.relists;
      // The watch goes silent; meanwhile objects change and two compaction intervals pass on the
      // server's clock, so the window no longer reaches back to the relay's last resourceVersion.
      expect(proxy.freezeWatches()).toBeGreaterThan(0);
      await bump('tc-a', 7);
      await cluster.client.delete(R.Metal3Machine, NS, 'tc-b');
      await cluster.client.create(envelopeOf(R.Metal3Machine), machine('tc-d'));
      clock.advance(2 * COMPACTION_INTERVAL_MS + 1_000);
      const finalState = new Map(
        (await cluster.client.list(envelopeOf(R.Metal3Machine), NS)).items.map((m) => [
          m.metadata.name!,
          m.metadata.resourceVersion!,
        ]),
      );
      await until(() => {
        const cached = new Map(
          r.cache.list('Metal3Machine', NS).map((m) => [m.metadata.name!, m.metadata.resourceVersion!]),
        );
        return [...finalState].every(([n, rv]) => cached.get(n) === rv) && cached.size === finalState.size;
      }, 20_000);
      expect(r.cache.get('Metal3Machine', NS, 'tc-b')).toBeUndefined();
      expect(w.counts.gones).toBeGreaterThanOrEqual(1);
      expect(w.counts.relists).toBeGreaterThan(relistsBefore);
    } finally {
      await r.stop();
    }
  });

  it('recovers when every connection goes dead at once, a hung LIST included (list timeout)', async () => {
    const seenHere: string[] = [];
    const r = await relayViaProxy(1_000, (msgs) =>
      seenHere.push(...msgs.map((m) => `${m.msg.function} ${m.msg.name} ${m.msg.resourceVersion}`)),
    );
    try {
      const w = r.watchers.get('Metal3Machine')!;
      // The machine watch is open (an object created after the start list reached a function
      // through it) before every connection goes dead: else it could connect after the freeze.
      const b = await cluster.client.create(envelopeOf(R.Metal3Machine), machine('before-freeze'));
      const brv = (b.metadata as { resourceVersion?: string }).resourceVersion;
      await until(() => seenHere.includes(`selectHost before-freeze ${brv}`), 10_000);
      proxy.freezeAll();
      cluster.server.faults.compact();
      const m = await cluster.client.create(envelopeOf(R.Metal3Machine), machine('after-freeze'));
      const rv = (m.metadata as { resourceVersion?: string }).resourceVersion;
      await until(() => seenHere.includes(`selectHost after-freeze ${rv}`), 20_000);
      expect(w.counts.silences).toBeGreaterThanOrEqual(1);
    } finally {
      await r.stop();
    }
  });
});
