/**
 * Shared reads of the Cluster and Metal3Cluster (shared/kube/shared-reads.ts, ADR 024), against
 * the embedded API server: reads in flight are joined, an answer is reused for at most
 * `maxAgeMs`, a later read sees a change, failures are not kept, scopes (functions) do not share,
 * and a delivery's pause check and its function's own read of the Cluster cost one GET.
 */
import { describe, expect, it } from 'vitest';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { pausedObject } from '../../../shared/capi/lookups.ts';
import { optimisticUpdate } from '../../../shared/kube/optimistic.ts';
import { SharedReadScopes, SharedReads } from '../../../shared/kube/shared-reads.ts';
import { clusterContext } from '../../helpers/context.ts';
import { useCluster } from '../../helpers/use-cluster.ts';

const NS = 'metal3';
const tc = useCluster({
  cluster: { faults: true },
  makeCtx: (client) => clusterContext(client),
  seed: async ({ client }) => {
    for (const name of ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'])
      await client.create(envelopeOf(R.Cluster), { metadata: { name, namespace: NS }, spec: {} });
  },
});

const clusterGets = (): number => tc.client.stats.byResource.get('get clusters') ?? 0;

/** Counts the Cluster GETs `step` makes. */
async function gets<T>(step: () => Promise<T>): Promise<[T, number]> {
  const before = clusterGets();
  const out = await step();
  return [out, clusterGets() - before];
}

async function setPaused(name: string, paused: boolean): Promise<void> {
  await optimisticUpdate(tc.client, R.Cluster, NS, name, (c) => {
    c.spec = { ...c.spec, paused };
  });
}

/** A clock the test moves by hand. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('shared reads', () => {
  it('joins reads in flight: five concurrent reads of one Cluster make one GET', async () => {
    const reads = new SharedReads(tc.client, { maxAgeMs: 0 });
    const [got, n] = await gets(() => Promise.all([1, 2, 3, 4, 5].map(() => reads.cluster(NS, 'c1'))));
    expect(n).toBe(1);
    expect(got.map((c) => c?.metadata.name)).toEqual(['c1', 'c1', 'c1', 'c1', 'c1']);
    // maxAgeMs 0: the next read, after that one came back, is a GET of its own.
    const [, again] = await gets(() => reads.cluster(NS, 'c1'));
    expect(again).toBe(1);
  });

  it('reuses an answer for maxAgeMs, never longer: a pause written meanwhile is seen after it', async () => {
    const clock = manualClock();
    const reads = new SharedReads(tc.client, { maxAgeMs: 1000, now: clock.now });
    const [first, n1] = await gets(() => reads.cluster(NS, 'c2'));
    expect(first?.spec?.paused).toBeUndefined();
    expect(n1).toBe(1);
    await setPaused('c2', true);
    clock.advance(1000);
    const [within, n2] = await gets(() => reads.cluster(NS, 'c2'));
    expect(n2).toBe(0);
    expect(within?.spec?.paused).toBeUndefined();
    clock.advance(1);
    const [after, n3] = await gets(() => reads.cluster(NS, 'c2'));
    expect(n3).toBe(1);
    expect(after?.spec?.paused).toBe(true);
  });

  it('gives every sharer the same frozen object', async () => {
    const reads = new SharedReads(tc.client, { maxAgeMs: 60_000 });
    const a = await reads.cluster(NS, 'c3');
    const b = await reads.cluster(NS, 'c3');
    expect(b).toBe(a);
    expect(() => {
      if (a?.spec) a.spec.paused = true;
    }).toThrow(TypeError);
  });

  it('keeps no failure: a read after a failed GET is a GET of its own', async () => {
    const reads = new SharedReads(tc.client, { maxAgeMs: 60_000 });
    tc.server.faults.failNext({ verb: 'get', resource: 'clusters' }, 500);
    await expect(reads.cluster(NS, 'c4')).rejects.toThrow();
    const [got, n] = await gets(() => reads.cluster(NS, 'c4'));
    expect(n).toBe(1);
    expect(got?.metadata.name).toBe('c4');
  });

  it('keeps an absent Cluster absent for maxAgeMs, and sees it once created after', async () => {
    const clock = manualClock();
    const reads = new SharedReads(tc.client, { maxAgeMs: 500, now: clock.now });
    expect(await reads.cluster(NS, 'late')).toBeUndefined();
    await tc.client.create(envelopeOf(R.Cluster), { metadata: { name: 'late', namespace: NS }, spec: {} });
    expect(await reads.cluster(NS, 'late')).toBeUndefined();
    clock.advance(501);
    expect((await reads.cluster(NS, 'late'))?.metadata.name).toBe('late');
  });

  it('shares within a scope (a function) only', async () => {
    const scopes = new SharedReadScopes(tc.client, { maxAgeMs: 60_000 });
    const [, n] = await gets(async () => {
      await scopes.scope('renderData').cluster(NS, 'c5');
      await scopes.scope('renderData').cluster(NS, 'c5');
      await scopes.scope('allocateIndex').cluster(NS, 'c5');
    });
    expect(n).toBe(2);
  });

  it('pause checks go through the delivery’s shared reads, and without them each is a GET', async () => {
    const clock = manualClock();
    const reads = new SharedReads(tc.client, { maxAgeMs: 1000, now: clock.now });
    const obj = { metadata: { name: 'm', namespace: NS } };
    await setPaused('c6', true);
    const [shared, n1] = await gets(() =>
      Promise.all([1, 2, 3].map(() => pausedObject({ ...tc.ctx, reads }, obj, 'c6'))),
    );
    expect(shared).toEqual([true, true, true]);
    expect(n1).toBe(1);
    await setPaused('c6', false);
    const [plain, n2] = await gets(() => Promise.all([1, 2].map(() => pausedObject(tc.ctx, obj, 'c6'))));
    expect(plain).toEqual([false, false]);
    expect(n2).toBe(2);
    clock.advance(1001);
    expect(await pausedObject({ ...tc.ctx, reads }, obj, 'c6')).toBe(false);
  });
});
