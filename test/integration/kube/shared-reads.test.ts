/**
 * Shared reads of the Cluster and Metal3Cluster (shared/kube/shared-reads.ts, ADR 024), against
 * the embedded API server: reads in flight are joined, an answer is reused for at most
 * `maxAgeMs` and only when it lets the pass go on (an answer that stops it is read fresh), failures
 * are not kept, scopes (functions) do not share, and pause checks go through them.
 */
import { describe, expect, it } from 'vitest';
import type { Cluster } from '../../../shared/api/capi.ts';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { clusterInfrastructureReady, pausedObject } from '../../../shared/capi/lookups.ts';
import { optimisticUpdate } from '../../../shared/kube/optimistic.ts';
import { SharedReadScopes, SharedReads } from '../../../shared/kube/shared-reads.ts';
import { clusterContext } from '../../helpers/context.ts';
import { useCluster } from '../../helpers/use-cluster.ts';

const NS = 'metal3';
/** Every answer lets the pass go on. */
const go = (): boolean => true;
const tc = useCluster({
  cluster: { faults: true },
  makeCtx: (client) => clusterContext(client),
  seed: async ({ client }) => {
    for (const name of ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'])
      await client.create(envelopeOf(R.Cluster), { metadata: { name, namespace: NS }, spec: {} });
  },
});

const templateGets = (): number => tc.client.stats.byResource.get('get metal3datatemplates') ?? 0;

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
    const reads = new SharedReads(tc.client, { maxAgeMs: 0 }).forMessage(0);
    const [got, n] = await gets(() => Promise.all([1, 2, 3, 4, 5].map(() => reads.cluster(NS, 'c1', go))));
    expect(n).toBe(1);
    expect(got.map((c) => c?.metadata.name)).toEqual(['c1', 'c1', 'c1', 'c1', 'c1']);
    // maxAgeMs 0: the next read, after that one came back, is a GET of its own.
    const [, again] = await gets(() => reads.cluster(NS, 'c1', go));
    expect(again).toBe(1);
    // Even within the millisecond its answer came back in (a clock that stands still).
    const still = new SharedReads(tc.client, { maxAgeMs: 0, now: () => 5_000 }).forMessage(0);
    const [, first] = await gets(() => still.cluster(NS, 'c1', go));
    const [, second] = await gets(() => still.cluster(NS, 'c1', go));
    expect([first, second]).toEqual([1, 1]);
  });

  it('reuses an answer for maxAgeMs, never longer: a pause written meanwhile is seen after it', async () => {
    const clock = manualClock();
    const reads = new SharedReads(tc.client, { maxAgeMs: 1000, now: clock.now }).forMessage(0);
    const [first, n1] = await gets(() => reads.cluster(NS, 'c2', go));
    expect(first?.spec?.paused).toBeUndefined();
    expect(n1).toBe(1);
    await setPaused('c2', true);
    clock.advance(1000);
    const [within, n2] = await gets(() => reads.cluster(NS, 'c2', go));
    expect(n2).toBe(0);
    expect(within?.spec?.paused).toBeUndefined();
    clock.advance(1);
    const [after, n3] = await gets(() => reads.cluster(NS, 'c2', go));
    expect(n3).toBe(1);
    expect(after?.spec?.paused).toBe(true);
  });

  it('gives every sharer the same frozen object', async () => {
    const reads = new SharedReads(tc.client, { maxAgeMs: 60_000 }).forMessage(0);
    const a = await reads.cluster(NS, 'c3', go);
    const b = await reads.cluster(NS, 'c3', go);
    expect(b).toBe(a);
    expect(() => {
      if (a?.spec) a.spec.paused = true;
    }).toThrow(TypeError);
  });

  it('keeps no failure: a read after a failed GET is a GET of its own', async () => {
    const reads = new SharedReads(tc.client, { maxAgeMs: 60_000 }).forMessage(0);
    tc.server.faults.failNext({ verb: 'get', resource: 'clusters' }, 500);
    await expect(reads.cluster(NS, 'c4', go)).rejects.toThrow();
    const [got, n] = await gets(() => reads.cluster(NS, 'c4', go));
    expect(n).toBe(1);
    expect(got?.metadata.name).toBe('c4');
  });

  it('reads an answer that stops the pass again: a Cluster that became ready meanwhile is seen at once', async () => {
    const clock = manualClock();
    const reads = new SharedReads(tc.client, { maxAgeMs: 60_000, now: clock.now }).forMessage(0);
    const ready = (c: Cluster | undefined): boolean => c !== undefined && clusterInfrastructureReady(c);
    expect(await reads.cluster(NS, 'c7', ready)).toMatchObject({ metadata: { name: 'c7' } });
    await optimisticUpdate(
      tc.client,
      R.Cluster,
      NS,
      'c7',
      (c) => {
        c.status = { ...c.status, infrastructureReady: true };
      },
      { status: true },
    );
    // The shared answer (not ready) would make the pass wait for an event that has come already.
    const [fresh, n1] = await gets(() => reads.cluster(NS, 'c7', ready));
    expect(n1).toBe(1);
    expect(fresh?.status?.infrastructureReady).toBe(true);
    // The fresh answer is the shared one from then on.
    const [again, n2] = await gets(() => reads.cluster(NS, 'c7', ready));
    expect(n2).toBe(0);
    expect(again).toBe(fresh);
  });

  it('reads an absent Cluster again, and sees it once created', async () => {
    const reads = new SharedReads(tc.client, { maxAgeMs: 60_000 }).forMessage(0);
    const exists = (c: Cluster | undefined): boolean => c !== undefined;
    expect(await reads.cluster(NS, 'late', exists)).toBeUndefined();
    await tc.client.create(envelopeOf(R.Cluster), { metadata: { name: 'late', namespace: NS }, spec: {} });
    const [got, n] = await gets(() => reads.cluster(NS, 'late', exists));
    expect(n).toBe(1);
    expect(got?.metadata.name).toBe('late');
  });

  it('serves a message only answers from GETs issued after it was observed (plus the skew margin)', async () => {
    const clock = manualClock();
    const shared = new SharedReads(tc.client, { maxAgeMs: 60_000, clockSkewMs: 50, now: clock.now });
    const [, n1] = await gets(() => shared.forMessage(0).cluster(NS, 'c1', go)); // issued at 1,000
    expect(n1).toBe(1);
    // Observed at 960: the answer was issued 40 ms after, inside the margin: read again.
    const [, n2] = await gets(() => shared.forMessage(960).cluster(NS, 'c1', go)); // issued at 1,000 again
    expect(n2).toBe(1);
    clock.advance(100);
    // Observed at 1,040: the last GET (1,000) was issued before 1,040 + 50: read again, at 1,100.
    const [, n3] = await gets(() => shared.forMessage(1_040).cluster(NS, 'c1', go));
    expect(n3).toBe(1);
    // Observed at 1,050: the GET issued at 1,100 is 50 ms after it: shared.
    const [, n4] = await gets(() => shared.forMessage(1_050).cluster(NS, 'c1', go));
    expect(n4).toBe(0);
    // A message with no observedAt (a replay by hand) reads fresh.
    const [, n5] = await gets(() => shared.forMessage(undefined).cluster(NS, 'c1', go));
    expect(n5).toBe(1);
  });

  it('shares within a scope (a function) only', async () => {
    const scopes = new SharedReadScopes(tc.client, { maxAgeMs: 60_000 });
    const [, n] = await gets(async () => {
      await scopes.scope('renderData').forMessage(0).cluster(NS, 'c5', go);
      await scopes.scope('renderData').forMessage(0).cluster(NS, 'c5', go);
      await scopes.scope('allocateIndex').forMessage(0).cluster(NS, 'c5', go);
    });
    expect(n).toBe(2);
  });

  it('pause checks share an unpaused answer, and read a paused one fresh every time', async () => {
    const clock = manualClock();
    const reads = new SharedReads(tc.client, { maxAgeMs: 1000, now: clock.now }).forMessage(0);
    const obj = { metadata: { name: 'm', namespace: NS } };
    const [open, n1] = await gets(() =>
      Promise.all([1, 2, 3].map(() => pausedObject({ ...tc.ctx, reads }, obj, 'c6'))),
    );
    expect(open).toEqual([false, false, false]);
    expect(n1).toBe(1);
    // Within the window an unpaused answer is reused: a pause written now is seen after it.
    await setPaused('c6', true);
    const [stale, n2] = await gets(() => pausedObject({ ...tc.ctx, reads }, obj, 'c6'));
    expect(stale).toBe(false);
    expect(n2).toBe(0);
    clock.advance(1001);
    // Paused stops the pass: it is never taken from another check's answer, so an unpause is never
    // missed. The first check's GET is its own; the second, joining it, reads again.
    const [shut, n3] = await gets(() =>
      Promise.all([1, 2].map(() => pausedObject({ ...tc.ctx, reads }, obj, 'c6'))),
    );
    expect(shut).toEqual([true, true]);
    expect(n3).toBe(2);
    const [shutAgain, n4] = await gets(() => pausedObject({ ...tc.ctx, reads }, obj, 'c6'));
    expect(shutAgain).toBe(true);
    expect(n4).toBe(1);
    await setPaused('c6', false);
    expect(await pausedObject({ ...tc.ctx, reads }, obj, 'c6')).toBe(false);
    // Without shared reads (a context built by hand) every check is a GET.
    const [plain, n5] = await gets(() => Promise.all([1, 2].map(() => pausedObject(tc.ctx, obj, 'c6'))));
    expect(plain).toEqual([false, false]);
    expect(n5).toBe(2);
  });

  it('keeps an immutable template spec by uid: read once, its status never kept; another uid or none is read every time', async () => {
    const t = await tc.client.create(envelopeOf(R.Metal3DataTemplate), {
      metadata: { name: 'spec-once', namespace: NS },
      spec: { clusterName: 'c1' },
    });
    await tc.client.patch(
      R.Metal3DataTemplate,
      NS,
      'spec-once',
      { status: { indexes: { '0': 'a' } } },
      'merge',
      {
        status: true,
      },
    );
    const reads = new SharedReads(tc.client, { maxAgeMs: 0 }).forMessage(undefined);
    const before = templateGets();
    const [a, b] = await Promise.all([1, 2].map(() => reads.templateSpec(NS, 'spec-once', t.metadata.uid!)));
    const c = await reads.templateSpec(NS, 'spec-once', t.metadata.uid!);
    expect(templateGets() - before).toBe(1);
    expect(c).toBe(a);
    expect(b).toEqual({
      metadata: { name: 'spec-once', namespace: NS, uid: t.metadata.uid },
      spec: { clusterName: 'c1' },
    });
    expect(Object.isFrozen(c!.spec)).toBe(true);
    // A uid the name no longer holds: the object under the name, read fresh each time.
    for (let i = 0; i < 2; i++)
      expect((await reads.templateSpec(NS, 'spec-once', 'another-uid'))?.metadata.uid).toBe(t.metadata.uid);
    for (let i = 0; i < 2; i++) expect(await reads.templateSpec(NS, 'absent', 'absent-uid')).toBeUndefined();
    expect(templateGets() - before).toBe(5);
  });
});
