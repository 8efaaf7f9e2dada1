/**
 * infra/local/manifests.ts against the embedded API server: namespaces first, any kind the server
 * serves (discovery), and an ownerReference without a uid (as the seed documents write them)
 * completed with its owner's uid whatever the order, or refused before anything is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyManifests } from '../../../infra/local/manifests.ts';
import { apiVersionOf, R } from '../../../shared/api/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';

let tc: TestCluster;
beforeAll(async () => {
  tc = await startTestCluster();
});
afterAll(async () => {
  await tc?.stop();
});

const INFRA = apiVersionOf(R.Metal3Cluster);
const cluster = (ns: string, name: string): KubeObject => ({
  apiVersion: INFRA,
  kind: 'Metal3Cluster',
  metadata: { name, namespace: ns },
  spec: { noCloudProvider: true },
});
const template = (ns: string, name: string, owner: string): KubeObject => ({
  apiVersion: INFRA,
  kind: 'Metal3DataTemplate',
  metadata: {
    name,
    namespace: ns,
    ownerReferences: [{ apiVersion: INFRA, kind: 'Metal3Cluster', name: owner, controller: true } as never],
  },
  spec: { metaData: { strings: [{ key: 'a', value: 'b' }] } },
});

describe('applyManifests', () => {
  it('creates the namespace first and fills in the uid of an owner that comes later in the list', async () => {
    const r = await applyManifests(tc.client, [
      template('uid-a', 't', 'c1'),
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'uid-a' } },
      cluster('uid-a', 'c1'),
    ]);
    expect(r.applied.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Namespace/uid-a',
      'Metal3Cluster/c1',
      'Metal3DataTemplate/t',
    ]);
    expect(r.ownerUidsFilled).toBe(1);
    const c1 = await tc.client.get(R.Metal3Cluster, 'uid-a', 'c1');
    const t = await tc.client.get(R.Metal3DataTemplate, 'uid-a', 't');
    expect(t?.metadata.ownerReferences).toEqual([
      { apiVersion: INFRA, kind: 'Metal3Cluster', name: 'c1', uid: c1!.metadata.uid, controller: true },
    ]);
  });

  it('takes the uid of an owner already in the cluster', async () => {
    await tc.client.create(R.Namespace, { metadata: { name: 'uid-b' } });
    const c2 = await tc.client.create(R.Metal3Cluster, cluster('uid-b', 'c2'));
    await applyManifests(tc.client, [template('uid-b', 't', 'c2')]);
    const t = await tc.client.get(R.Metal3DataTemplate, 'uid-b', 't');
    expect(t?.metadata.ownerReferences?.[0]?.uid).toBe(c2.metadata.uid);
  });

  it('refuses an owner nobody defines, naming it, and writes nothing', async () => {
    await expect(
      applyManifests(tc.client, [cluster('uid-c', 'fine'), template('uid-c', 't', 'nobody')]),
    ).rejects.toThrow(
      'Metal3DataTemplate uid-c/t: its ownerReference Metal3Cluster nobody has no uid, and no such object is in the manifests or the cluster',
    );
    expect(await tc.client.get(R.Namespace, undefined, 'uid-c')).toBeUndefined();
    expect(await tc.client.get(R.Metal3Cluster, 'uid-c', 'fine')).toBeUndefined();
  });

  it('refuses uid-less ownerReferences that form a cycle', async () => {
    const a = cluster('uid-d', 'a');
    a.metadata.ownerReferences = [{ apiVersion: INFRA, kind: 'Metal3Cluster', name: 'b' } as never];
    const b = cluster('uid-d', 'b');
    b.metadata.ownerReferences = [{ apiVersion: INFRA, kind: 'Metal3Cluster', name: 'a' } as never];
    await expect(applyManifests(tc.client, [a, b])).rejects.toThrow(
      'ownerReferences without uid form a cycle: Metal3Cluster a, Metal3Cluster b',
    );
  });

  it('applies a kind only the server knows (a ClusterRole), and refuses one it does not serve', async () => {
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'manifests-test' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
    } as KubeObject;
    const [created] = (await applyManifests(tc.client, [role])).applied;
    expect(created?.metadata.uid).toBeDefined();
    const res = await fetch(`${tc.server.url}/apis/rbac.authorization.k8s.io/v1/clusterroles/manifests-test`);
    expect(((await res.json()) as { rules: unknown }).rules).toEqual(role.rules);
    await expect(
      applyManifests(tc.client, [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }]),
    ).rejects.toThrow('Widget w: the server serves no kind example.com/v1/Widget');
  });

  it('updates an object that exists (kubectl apply): the same uid, the new spec', async () => {
    await tc.client.create(R.Namespace, { metadata: { name: 'uid-e' } });
    const first = await tc.client.create(R.Metal3Cluster, cluster('uid-e', 'c'));
    const changed = cluster('uid-e', 'c');
    changed.spec = { noCloudProvider: false };
    const [updated] = (await applyManifests(tc.client, [changed])).applied;
    expect(updated?.metadata.uid).toBe(first.metadata.uid);
    expect(updated?.spec).toEqual({ noCloudProvider: false });
  });
});
