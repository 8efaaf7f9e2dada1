/**
 * allocateIndex reads what one claim needs, not every Metal3Data and claim of the namespace
 * (ADR 009): field selectors on the CRDs' selectableFields, the given indexes from the template's
 * status. Against a server without those field labels (Kubernetes before 1.31) it lists
 * everything, as the reference does, and allocates the same indexes.
 */
import { describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { loadProjectCrds, type TestCluster, testClient } from '../../helpers/cluster.ts';
import { allocate, createClaim, indexOf, makeCtx, NS } from '../../helpers/data.ts';
import { useDataCluster } from './use-data-cluster.ts';

/** 40 rendered Metal3Data of another template and their claims: what a narrow read must skip. */
async function crowd(client: KubeClient): Promise<void> {
  await client.create(R.Metal3DataTemplate, { metadata: { name: 'crowd', namespace: NS }, spec: {} });
  for (let i = 0; i < 40; i++) {
    await createClaim(client, `crowd-${i}`, 'crowd');
    const d = await client.create(R.Metal3Data, {
      metadata: { name: `crowd-${i}`, namespace: NS },
      spec: { index: i, template: { name: 'crowd' }, claim: { name: `crowd-${i}` } },
    });
    await client.replaceStatus(R.Metal3Data, { ...d, status: { ready: true } });
  }
}

/** The crowd, then the empty template `mine` the tests allocate on. */
async function crowdAndMine(client: KubeClient): Promise<void> {
  await crowd(client);
  await client.create(R.Metal3DataTemplate, { metadata: { name: 'mine', namespace: NS }, spec: {} });
}

const listed = (c: KubeClient, plural: string) => c.stats.listedByResource.get(plural) ?? 0;
const fieldSelectors = (tc: TestCluster) =>
  tc.server.log.entries
    .filter((e) => e.verb === 'list' && e.resource.startsWith('metal3data'))
    .map((e) => new URL(e.path, 'http://local').searchParams.get('fieldSelector') ?? '');

describe('with selectableFields (Kubernetes 1.31+)', () => {
  const tc = useDataCluster({ seed: ({ client }) => crowdAndMine(client), timeout: 30_000 });

  it('an allocation reads about one object per kind, none of the crowd', async () => {
    await createClaim(tc.client, 'first', 'mine');
    const client = testClient(tc.kubeconfig);
    expect(await allocate(makeCtx(client), R.Metal3DataClaim, 'first')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'first')).toBe(0);
    // Its own Metal3Data (none yet), the waiting claims (itself), the unrendered Metal3Data (none).
    expect(listed(client, 'metal3dataclaims')).toBe(1);
    expect(listed(client, 'metal3datas')).toBe(0);
    // The template's status maps the index before the claim's status names its Metal3Data.
    const t = (await tc.client.get(R.Metal3DataTemplate, NS, 'mine'))!;
    expect((t.status as { indexes?: Record<string, string> }).indexes).toEqual({ '0': 'first' });
  });

  it('a replay reuses the claim Metal3Data found by spec.claim.name', async () => {
    const client = testClient(tc.kubeconfig);
    expect(await allocate(makeCtx(client), R.Metal3DataClaim, 'first')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'first')).toBe(0);
    expect(client.stats.byResource.get('create metal3datas')).toBeUndefined();
    expect(listed(client, 'metal3datas')).toBeLessThanOrEqual(2);
  });

  it('a Metal3Data the template status does not map yet (created, not rendered) is not planned over', async () => {
    // What a concurrent allocation leaves between its create and its status patch.
    await createClaim(tc.client, 'inflight', 'mine');
    await tc.client.create(R.Metal3Data, {
      metadata: { name: 'mine-1', namespace: NS },
      spec: { index: 1, template: { name: 'mine' }, claim: { name: 'inflight' } },
    });
    await createClaim(tc.client, 'second', 'mine');
    const client = testClient(tc.kubeconfig);
    expect(await allocate(makeCtx(client), R.Metal3DataClaim, 'second')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'second')).toBe(2);
    // Planned from the reads: no failed create.
    expect(client.stats.conflicts).toBe(0);
  });

  it('an unmapped, rendered Metal3Data (a status patch lost) costs one AlreadyExists, never a duplicate', async () => {
    await createClaim(tc.client, 'lost', 'mine');
    const d = await tc.client.create(R.Metal3Data, {
      metadata: { name: 'mine-3', namespace: NS },
      spec: { index: 3, template: { name: 'mine' }, claim: { name: 'lost' } },
    });
    await tc.client.replaceStatus(R.Metal3Data, { ...d, status: { ready: true } });
    // The claim of mine-1 finished meanwhile (mapped), so the next free index by the maps is 3.
    expect(await allocate(makeCtx(tc.client), R.Metal3DataClaim, 'inflight')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'inflight')).toBe(1);
    // Named to rank before 'lost' among the waiting claims: its plan is index 3, taken.
    await createClaim(tc.client, 'a-third', 'mine');
    const client = testClient(tc.kubeconfig);
    expect(await allocate(makeCtx(client), R.Metal3DataClaim, 'a-third')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'a-third')).toBe(4);
    expect(client.stats.conflicts).toBe(1); // the create of mine-3
    const indexes = (await tc.client.list(R.Metal3Data, NS)).items
      .filter((x) => (x.spec as { template: { name: string } }).template.name === 'mine')
      .map((x) => (x.spec as { index: number }).index)
      .sort((a, b) => a - b);
    expect(indexes).toEqual([0, 1, 2, 3, 4]);
  });

  it('asks the server with field selectors', () => {
    const selectors = fieldSelectors(tc);
    expect(selectors).toContain('spec.claim.name=first');
    expect(selectors).toContain('spec.template.name=mine,status.renderedData.name=');
    expect(selectors).toContain('spec.template.name=mine,status.ready!=true');
  });
});

describe('without selectableFields (a server before Kubernetes 1.31)', () => {
  const tc = useDataCluster({
    cluster: { crds: false },
    seed: async ({ client }) => {
      for (const crd of loadProjectCrds()) {
        for (const v of (crd.spec as { versions: { selectableFields?: unknown }[] }).versions)
          delete v.selectableFields;
        await client.create(R.CustomResourceDefinition, crd);
      }
      await crowdAndMine(client);
    },
    timeout: 30_000,
  });

  it('lists everything after one refused request, and allocates the same dense indexes', async () => {
    const client = testClient(tc.kubeconfig);
    const ctx = makeCtx(client);
    for (const name of ['a', 'b', 'c']) {
      await createClaim(tc.client, name, 'mine');
      expect(await allocate(ctx, R.Metal3DataClaim, name)).toMatchObject({ kind: 'done' });
    }
    const mine = (await tc.client.list(R.Metal3Data, NS)).items.filter(
      (x) => (x.spec as { template: { name: string } }).template.name === 'mine',
    );
    expect(mine.map((x) => (x.spec as { index: number }).index).sort()).toEqual([0, 1, 2]);
    // Every Metal3Data and claim of the namespace, per allocation (the crowd included).
    expect(listed(client, 'metal3datas')).toBeGreaterThanOrEqual(3 * 40);
    // The refusal is remembered per client: the field selector was sent by the first allocation only.
    const refused = tc.server.log.entries.filter((e) => e.status === 400);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeLessThanOrEqual(3);
  });

  it('a release finds the claim Metal3Data in the full list', async () => {
    await tc.client.delete(R.Metal3DataClaim, NS, 'a');
    const ctx = makeCtx(testClient(tc.kubeconfig));
    expect(await allocate(ctx, R.Metal3DataClaim, 'a')).toMatchObject({ kind: 'done' });
    expect(await tc.client.get(R.Metal3Data, NS, 'mine-0')).toBeUndefined();
  });
});
