/**
 * Seed 001's three ways a Metal3Data belongs to a Metal3DataTemplate, through the core against the
 * embedded API server: the indexes used by all of them are taken, unrelated ones are not.
 */
import { describe, expect, it } from 'vitest';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { allocate, CLUSTER, createClaim, indexOf, NS } from '../../helpers/data.ts';
import { useDataCluster } from './use-data-cluster.ts';

const data = (name: string, index: number, template: string, templateReference?: string) => ({
  metadata: { name, namespace: NS },
  spec: {
    index,
    template: { name: template },
    claim: { name: `someone-${name}` },
    ...(templateReference ? { templateReference } : {}),
  },
});

const tc = useDataCluster({
  template: { metadata: { name: 'new', namespace: NS }, spec: { templateReference: 'old' } },
  seed: async ({ client }) => {
    // way 1: spec.template.name is the template
    await client.create(R.Metal3Data, data('new-0', 0, 'new'));
    // way 2: same templateReference as the template
    await client.create(R.Metal3Data, data('sibling-1', 1, 'sibling', 'old'));
    // way 3: the template's templateReference is the Metal3Data's template name (data of the old template)
    await client.create(R.Metal3Data, data('old-2', 2, 'old'));
    // not linked: another template, another reference
    await client.create(R.Metal3Data, data('other-3', 3, 'other', 'elsewhere'));
  },
});

describe('template links', () => {
  it('a claim on the new template skips the indexes of all three links and takes 3', async () => {
    await createClaim(tc.client, 'c1', 'new');
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'c1')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'c1')).toBe(3);
    const d = (await tc.client.get(R.Metal3Data, NS, 'new-3'))!;
    // The new Metal3Data carries the template's templateReference (seed 001).
    expect(d.spec).toMatchObject({ index: 3, templateReference: 'old', claim: { name: 'c1' } });
  });

  it('the next claim takes 4; a claim on the unrelated template still starts at 0', async () => {
    await createClaim(tc.client, 'c2', 'new');
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'c2')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'c2')).toBe(4);
    await tc.client.create(R.Metal3DataTemplate, { metadata: { name: 'fresh', namespace: NS }, spec: {} });
    await createClaim(tc.client, 'c3', 'fresh');
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'c3')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'c3')).toBe(0);
  });

  it('the template status lists every linked Metal3Data', async () => {
    await allocate(tc.ctx, R.Metal3DataTemplate, 'new');
    const t = (await tc.client.get(R.Metal3DataTemplate, NS, 'new'))!;
    expect((t.status as any).indexes).toEqual({
      '0': 'someone-new-0',
      '1': 'someone-sibling-1',
      '2': 'someone-old-2',
      '3': 'c1',
      '4': 'c2',
    });
  });

  it('AlreadyExists on the chosen name (a Metal3Data not linked to the template holds it): next index at once', async () => {
    // `fresh-1` exists but belongs to another template, so the list says 1 is free; the create says no.
    await tc.client.create(R.Metal3Data, data('fresh-1', 9, 'unrelated', 'nowhere'));
    await createClaim(tc.client, 'c4', 'fresh');
    tc.server.log.reset();
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'c4')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'c4')).toBe(2);
    expect(tc.server.log.count('create', 'metal3datas')).toBe(2);
  });

  it('the claim path labels the template and makes its Metal3Cluster the controller owner', async () => {
    const m3c = await tc.client.create(envelopeOf(R.Metal3Cluster), {
      metadata: { name: 'm3c', namespace: NS },
      spec: {},
    });
    await tc.client.create(R.Cluster, {
      metadata: { name: CLUSTER, namespace: NS },
      spec: {
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'Metal3Cluster',
          name: 'm3c',
        },
      },
    });
    await tc.client.create(R.Metal3DataTemplate, { metadata: { name: 'owned', namespace: NS }, spec: {} });
    await createClaim(tc.client, 'c5', 'owned');
    await allocate(tc.ctx, R.Metal3DataClaim, 'c5');
    const t = (await tc.client.get(R.Metal3DataTemplate, NS, 'owned'))!;
    expect(t.metadata.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': CLUSTER });
    expect(t.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'Metal3Cluster',
        name: 'm3c',
        uid: m3c.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    // Once owned, further allocations do not look the Metal3Cluster up again; the Cluster is read
    // once, for its pause (shared/reconcile/object.ts).
    await createClaim(tc.client, 'c6', 'owned');
    tc.server.log.reset();
    await allocate(tc.ctx, R.Metal3DataClaim, 'c6');
    expect(tc.server.log.count('get', 'metal3clusters')).toBe(0);
    expect(tc.server.log.count('get', 'clusters')).toBe(1);
  });
});
