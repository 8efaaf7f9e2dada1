/**
 * 100 machines racing for 120 hosts with 16 concurrent workers calling the cores directly, with
 * duplicated and reordered invocations and injected 409/5xx: no host is ever held by two machines,
 * every machine is associated; after deleting everything (the baremetal-operator simulator moving
 * hosts back to available) every host is available, unclaimed, and no finalizer is left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBmoSimulator } from '../../../infra/local/sim/bmo.ts';
import { createSampleHosts } from '../../../infra/local/sim/bmo-hosts.ts';
import { R } from '../../../shared/api/resources.ts';
import { KubeApiError } from '../../../shared/kube/errors.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { ReconcileResult } from '../../../shared/reconcile/result.ts';
import { startTestCluster, type TestCluster, testClient } from '../../helpers/cluster.ts';
import {
  createCluster,
  createMachinePair,
  deprovision,
  hostState,
  makeCtx,
  NS,
  selectHost,
} from '../../helpers/hosts.ts';
import { runWorkers } from '../../helpers/workers.ts';

const MACHINES = 100;
const HOSTS = 120;
const WORKERS = 16;

let tc: TestCluster;
let bmo: ReturnType<typeof startBmoSimulator>;

beforeAll(async () => {
  tc = await startTestCluster();
  bmo = startBmoSimulator({
    client: testClient(tc.kubeconfig),
    namespace: NS,
    delays: { provisioningMs: 5, deprovisioningMs: 5 },
  });
  await bmo.ready;
  await createCluster(tc.client);
  await createSampleHosts(tc.client, NS, HOSTS, { bmcSecrets: false });
  await runWorkers(
    Array.from({ length: MACHINES }, (_, i) => `m-${String(i).padStart(3, '0')}`),
    16,
    async (name) => void (await createMachinePair(tc.client, name)),
  );
}, 60_000);
afterAll(async () => {
  bmo?.stop();
  await tc?.stop();
});

/** Deterministic shuffle (mulberry32). */
function shuffled<T>(items: T[], seed: number): T[] {
  let a = seed >>> 0;
  const rnd = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * Plays the queue: every key is invoked (duplicated and shuffled); a thrown transient error or a
 * requeue puts it back for the next round, as SQS redelivery / requeue-after would. Until the
 * state settles every key is also invoked again each round (more duplicates, reordered).
 */
async function drive(
  names: string[],
  run: (name: string) => Promise<ReconcileResult>,
  settle: () => Promise<boolean>,
  maxRounds = 40,
): Promise<{ rounds: number; errors: number }> {
  let todo = shuffled([...names, ...names, ...names.slice(0, names.length / 2)], 7);
  let errors = 0;
  for (let round = 1; round <= maxRounds; round++) {
    const again = new Set<string>();
    await runWorkers(todo, WORKERS, async (name) => {
      try {
        const r = await run(name);
        if (r.kind === 'requeue') again.add(name);
      } catch (e) {
        if (!(e instanceof KubeApiError) || !e.transient) throw e;
        errors++;
        again.add(name);
      }
    });
    // Once settled, only what failed or asked to be requeued is delivered again (as the queue
    // would), until nothing is left: a pass that failed after the state looked settled still runs.
    const settled = await settle();
    if (settled && again.size === 0) return { rounds: round, errors };
    todo = shuffled(settled ? [...again] : [...again, ...names], round + 11);
    await bmo.idle();
  }
  throw new Error(`not settled after ${maxRounds} rounds`);
}

const listHosts = async () => (await tc.client.list(R.BareMetalHost, NS)).items;
const listMachines = async () => (await tc.client.list(R.Metal3Machine, NS)).items;
const consumerOf = (h: KubeObject) => (h.spec as { consumerRef?: { name?: string } }).consumerRef?.name;

describe(`${MACHINES} machines racing for ${HOSTS} hosts with ${WORKERS} workers`, () => {
  const names = Array.from({ length: MACHINES }, (_, i) => `m-${String(i).padStart(3, '0')}`);

  it('associates every machine with exactly one host under faults, and no host with two machines', async () => {
    const client = testClient(tc.kubeconfig);
    const ctx = makeCtx(client);
    // Every consumerRef transition seen on the watch: a host may go free -> machine -> free, never
    // straight from one machine to another.
    const lastConsumer = new Map<string, string | undefined>();
    const handovers: string[] = [];
    const watcher = testClient(tc.kubeconfig);
    const stopWatch = await watcher.watch(
      R.BareMetalHost,
      NS,
      {},
      (ev) => {
        if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') return;
        const name = ev.object.metadata.name!;
        const now = consumerOf(ev.object);
        const before = lastConsumer.get(name);
        if (before && now && before !== now) handovers.push(`${name}: ${before} -> ${now}`);
        lastConsumer.set(name, now);
      },
      () => {},
    );
    const f = tc.server.faults;
    f.seed(42);
    const removers = [
      f.add({ verb: 'update', resource: 'baremetalhosts', error: 409, probability: 0.08 }),
      f.add({ verb: 'update', resource: 'metal3machines', error: 409, probability: 0.05 }),
      f.add({ verb: 'get', resource: 'metal3machines', error: 503, probability: 0.03 }),
      f.add({ verb: 'list', resource: 'baremetalhosts', error: 500, probability: 0.03 }),
      f.add({ verb: 'update', resource: 'metal3machines/status', error: 500, probability: 0.03 }),
    ];
    const { errors } = await drive(
      names,
      (n) => selectHost(ctx, n),
      async () => (await listMachines()).every((m) => m.metadata.annotations?.['metal3.io/BareMetalHost']),
    );
    for (const r of removers) r();
    await bmo.idle();
    stopWatch.abort();
    expect(lastConsumer.size).toBe(HOSTS); // the watch saw every host
    expect([...lastConsumer.values()].filter(Boolean)).toHaveLength(MACHINES);
    expect(handovers).toEqual([]);
    expect(f.hits().length).toBe(0);
    expect(errors).toBeGreaterThan(0); // the faults did bite
    expect(client.stats.conflicts).toBeGreaterThan(0);

    const hosts = await listHosts();
    const machines = await listMachines();
    // Every machine associated, annotations unique.
    const annotations = machines.map((m) => m.metadata.annotations?.['metal3.io/BareMetalHost']);
    expect(annotations.filter(Boolean)).toHaveLength(MACHINES);
    expect(new Set(annotations).size).toBe(MACHINES);
    // Every consumed host names a distinct machine, and that machine names it back.
    const consumed = hosts.filter((h) => consumerOf(h));
    expect(consumed).toHaveLength(MACHINES);
    expect(new Set(consumed.map(consumerOf)).size).toBe(MACHINES);
    const byName = new Map(machines.map((m) => [m.metadata.name, m]));
    for (const h of consumed) {
      const m = byName.get(consumerOf(h))!;
      expect(m.metadata.annotations?.['metal3.io/BareMetalHost']).toBe(`${NS}/${h.metadata.name}`);
      expect((h.spec as any).image?.url).toBe('http://172.22.0.1/images/node.img');
    }
    // Free hosts carry nothing of ours (no leaked claims).
    for (const h of hosts.filter((x) => !consumerOf(x))) {
      expect(h.metadata.labels?.['cluster.x-k8s.io/cluster-name']).toBeUndefined();
      expect((h.spec as any).image).toBeUndefined();
    }
  }, 60_000);

  it('after deleting everything, every host is available, unclaimed, and no finalizer is left', async () => {
    const client = testClient(tc.kubeconfig);
    const ctx = makeCtx(client);
    await runWorkers(names, WORKERS, async (n) => void (await tc.client.delete(R.Metal3Machine, NS, n)));
    const f = tc.server.faults;
    const removers = [
      f.add({ verb: 'update', resource: 'baremetalhosts', error: 409, probability: 0.05 }),
      f.add({ verb: 'get', resource: 'baremetalhosts', error: 503, probability: 0.03 }),
    ];
    await drive(
      names,
      (n) => deprovision(ctx, n),
      async () => (await listMachines()).length === 0,
    );
    for (const r of removers) r();
    await bmo.idle();

    expect(await listMachines()).toEqual([]);
    expect((await tc.client.list(R.Metal3DataClaim, NS)).items).toEqual([]);
    const hosts = await listHosts();
    expect(hosts).toHaveLength(HOSTS);
    for (const h of hosts) {
      expect(hostState(h)).toBe('available');
      expect(consumerOf(h)).toBeUndefined();
      expect(h.metadata.labels?.['cluster.x-k8s.io/cluster-name']).toBeUndefined();
      expect(h.metadata.finalizers ?? []).toEqual([]);
      expect((h.spec as any).image).toBeUndefined();
      expect((h.spec as any).online).toBe(false);
    }
  }, 60_000);
});
