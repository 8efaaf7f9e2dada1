/**
 * Cluster API pause on the data path (issue 17 item 3): while the Cluster is paused (`spec.paused`,
 * or the annotation `cluster.x-k8s.io/paused` on the Cluster or on the object), allocateIndex,
 * renderData and the release leave the cluster's objects alone — not even a deletion is processed
 * (what `clusterctl move` relies on) — and they resume once it is unpaused.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { optimisticUpdate } from '../../../shared/kube/optimistic.ts';
import type { ReconcileResult } from '../../../shared/reconcile/result.ts';
import {
  allocate,
  CLUSTER,
  converge,
  createMachine,
  indexOf,
  NS,
  pool,
  release,
  render,
  seedTemplate,
} from '../../helpers/data.ts';
import { useDataCluster } from './use-data-cluster.ts';

const PAUSED = 'cluster.x-k8s.io/paused';
const tc = useDataCluster({
  pools: true,
  template: seedTemplate('pz', (s) => {
    delete s.templateReference;
    s.clusterName = CLUSTER;
  }),
  seed: async ({ client }) => {
    await client.create(envelopeOf(R.Cluster), { metadata: { name: CLUSTER, namespace: NS }, spec: {} });
  },
});

/** Pauses the Cluster by `spec.paused` or by its annotation, or unpauses it (both removed). */
async function pause(how: 'spec' | 'annotation' | false): Promise<void> {
  await optimisticUpdate(tc.client, envelopeOf(R.Cluster), NS, CLUSTER, (c) => {
    const spec = (c as { spec?: Record<string, unknown> }).spec ?? {};
    spec.paused = how === 'spec';
    (c as { spec?: unknown }).spec = spec;
    const { [PAUSED]: _drop, ...ann } = c.metadata.annotations ?? {};
    c.metadata.annotations = how === 'annotation' ? { ...ann, [PAUSED]: '' } : ann;
  });
}

/** Runs `step` and returns its result with the number of writes it made. */
async function writesOf(step: () => Promise<ReconcileResult>): Promise<[ReconcileResult, number]> {
  const before = tc.client.stats.writes;
  const r = await step();
  return [r, tc.client.stats.writes - before];
}

const paused = expect.objectContaining({ kind: 'requeue', reason: expect.stringMatching(/^paused/) });

/** A machine of template `pz` whose claim got its index (and, with `rendered`, its data): its Metal3Data. */
async function machineWithData(name: string, rendered = false): Promise<string> {
  await createMachine(tc.client, name, 'pz');
  expect((await allocate(tc.ctx, R.Metal3DataClaim, name)).kind).toBe('done');
  if (rendered) await converge(tc.ctx);
  return `pz-${await indexOf(tc.client, name)}`;
}

beforeEach(() => pause(false));

describe('a paused Cluster: the data path leaves its objects alone', () => {
  it('spec.paused: allocateIndex gives its Metal3DataClaim no index and its template no finalizer; both resume once unpaused', async () => {
    await pause('spec');
    await createMachine(tc.client, 'p1', 'pz');
    expect(await writesOf(() => allocate(tc.ctx, R.Metal3DataClaim, 'p1'))).toEqual([paused, 0]);
    expect(await writesOf(() => allocate(tc.ctx, R.Metal3DataTemplate, 'pz'))).toEqual([paused, 0]);
    expect((await tc.client.list(R.Metal3Data, NS)).items).toEqual([]);
    expect((await tc.client.get(R.Metal3DataClaim, NS, 'p1'))!.metadata.finalizers).toBeUndefined();
    expect((await tc.client.get(R.Metal3DataTemplate, NS, 'pz'))!.metadata.finalizers).toBeUndefined();

    await pause(false);
    expect((await allocate(tc.ctx, R.Metal3DataClaim, 'p1')).kind).toBe('done');
    expect(await indexOf(tc.client, 'p1')).toBe(0);
  });

  it('the annotation on the Cluster: renderData claims no address and writes no Secret; it renders once unpaused', async () => {
    const data = await machineWithData('p3');
    await pause('annotation');
    expect(await writesOf(() => render(tc.ctx, data))).toEqual([paused, 0]);
    const ipClaims = (await tc.client.list(R.IPClaim, NS)).items;
    expect(ipClaims.filter((c) => c.metadata.name!.startsWith(`${data}-`))).toEqual([]);
    expect((await tc.client.get(R.Metal3Data, NS, data))!.status).toBeUndefined();

    await pause(false);
    await converge(tc.ctx);
    expect((await tc.client.get(R.Metal3Data, NS, data))!.status).toEqual({ ready: true, error: false });
  });

  it('a deletion while paused is not processed (claim, Metal3Data, IPClaim): released once unpaused', async () => {
    const data = await machineWithData('p4', true);
    const index = data.slice('pz-'.length);
    expect(await tc.client.get(R.Secret, NS, `p4-metadata-${index}`)).toBeDefined();
    await pause('spec');
    await tc.client.delete(R.Metal3DataClaim, NS, 'p4');
    await tc.client.delete(R.Metal3Data, NS, data);
    const ipClaim = (await tc.client.list(R.IPClaim, NS)).items.find((c) =>
      c.metadata.name!.startsWith(`${data}-`),
    )!;
    await tc.client.delete(R.IPClaim, NS, ipClaim.metadata.name!);
    expect(await writesOf(() => release(tc.ctx, R.Metal3DataClaim, 'p4'))).toEqual([paused, 0]);
    expect(await writesOf(() => allocate(tc.ctx, R.Metal3DataClaim, 'p4'))).toEqual([paused, 0]);
    expect(await writesOf(() => release(tc.ctx, R.Metal3Data, data))).toEqual([paused, 0]);
    expect(await writesOf(() => release(tc.ctx, R.IPClaim, ipClaim.metadata.name!))).toEqual([paused, 0]);
    expect((await tc.client.get(R.Metal3DataClaim, NS, 'p4'))!.metadata.deletionTimestamp).toBeDefined();
    expect(await tc.client.get(R.Secret, NS, `p4-metadata-${index}`)).toBeDefined();

    await pause(false);
    expect((await release(tc.ctx, R.Metal3DataClaim, 'p4')).kind).toBe('done');
    tc.server.settle();
    expect(await tc.client.get(R.Metal3DataClaim, NS, 'p4')).toBeUndefined();
    expect(await tc.client.get(R.Secret, NS, `p4-metadata-${index}`)).toBeUndefined();
  });

  it('the annotation on the object itself (claim, pool), the Cluster unpaused', async () => {
    await createMachine(tc.client, 'p2', 'pz');
    await optimisticUpdate(tc.client, R.Metal3DataClaim, NS, 'p2', (c) => {
      c.metadata.annotations = { [PAUSED]: '' };
    });
    expect(await writesOf(() => allocate(tc.ctx, R.Metal3DataClaim, 'p2'))).toEqual([paused, 0]);
    const pausedPool = pool('pz-pool', { pools: [{ start: '10.7.0.1', end: '10.7.0.9' }], prefix: 24 });
    pausedPool.metadata.annotations = { [PAUSED]: '' };
    await tc.client.create(R.IPPool, pausedPool);
    expect(await writesOf(() => allocate(tc.ctx, R.IPPool, 'pz-pool'))).toEqual([paused, 0]);
    expect((await tc.client.get(R.IPPool, NS, 'pz-pool'))!.metadata.finalizers).toBeUndefined();

    await optimisticUpdate(tc.client, R.Metal3DataClaim, NS, 'p2', (c) => {
      c.metadata.annotations = {};
    });
    expect((await allocate(tc.ctx, R.Metal3DataClaim, 'p2')).kind).toBe('done');
  });

  it('an IPPool of a paused Cluster (spec.clusterName) gets no finalizer until unpaused', async () => {
    await pause('spec');
    await tc.client.create(
      R.IPPool,
      pool('pz-pool2', { clusterName: CLUSTER, pools: [{ start: '10.8.0.1', end: '10.8.0.9' }], prefix: 24 }),
    );
    expect(await writesOf(() => allocate(tc.ctx, R.IPPool, 'pz-pool2'))).toEqual([paused, 0]);
    await pause(false);
    expect((await allocate(tc.ctx, R.IPPool, 'pz-pool2')).kind).toBe('done');
    expect((await tc.client.get(R.IPPool, NS, 'pz-pool2'))!.metadata.finalizers).toEqual([
      'ippool.ipam.metal3.io',
    ]);
  });
});
