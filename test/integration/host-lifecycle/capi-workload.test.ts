/**
 * An embedded workload cluster per Cluster (infra/local/workload/) as the Cluster API simulator
 * uses it: the control plane's part (an API server and the `<cluster>-kubeconfig` Secret once the
 * infrastructure is ready, owned by the KubeadmControlPlane or the Cluster), two Clusters of one
 * name in two namespaces, a Secret the user brought kept, the server stopped with its Cluster; and
 * the kubeadm bootstrap provider's part for a KubeadmConfig applied after its Machine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCapiSimulator } from '../../../infra/local/sim/capi.ts';
import { EmbeddedClusters } from '../../../infra/local/workload/embedded.ts';
import { embeddedControlPlane, simulatorWorkloadClients } from '../../../infra/local/workload/provider.ts';
import { kubeconfigSecret, publishKubeconfig } from '../../../infra/local/workload/secret.ts';
import type { Secret } from '../../../shared/api/core.ts';
import { apiVersionOf, R } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { kubeconfigFromSecret } from '../../../shared/kube/workload.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { eventually } from '../../helpers/wait.ts';

let tc: TestCluster;
let clusters: EmbeddedClusters;
let capi: ReturnType<typeof startCapiSimulator>;
const started: string[] = [];

beforeAll(async () => {
  tc = await startTestCluster({ namespaces: ['wl-a', 'wl-b', 'wl-own', 'wl-kcp', 'wl-boot'] });
  clusters = new EmbeddedClusters({ prepare: (c) => void started.push(c.key) });
  capi = startCapiSimulator({
    client: tc.client,
    workloadClient: simulatorWorkloadClients(tc.client, clusters),
    controlPlane: embeddedControlPlane(clusters, { external: (ns) => ns === 'wl-own' }),
  });
  await capi.ready;
}, 60_000);
afterAll(async () => {
  capi?.stop();
  await clusters?.stopAll();
  await tc?.stop();
});

const INFRA = apiVersionOf(R.Metal3Cluster);

/** A Cluster with its Metal3Cluster, made ready as reconcileCluster would. */
async function readyCluster(ns: string, name: string, controlPlane?: string): Promise<KubeObject> {
  const m3c = await tc.client.create(R.Metal3Cluster, {
    metadata: { name, namespace: ns },
    spec: { controlPlaneEndpoint: { host: '10.0.0.2', port: 6443 }, noCloudProvider: true },
  });
  await tc.client.replaceStatus(R.Metal3Cluster, { ...m3c, status: { ready: true } });
  return tc.client.create(R.Cluster, {
    metadata: { name, namespace: ns },
    spec: {
      infrastructureRef: { apiVersion: INFRA, kind: 'Metal3Cluster', name },
      ...(controlPlane
        ? {
            controlPlaneRef: {
              apiVersion: apiVersionOf(R.KubeadmControlPlane),
              kind: 'KubeadmControlPlane',
              name: controlPlane,
            },
          }
        : {}),
    },
  });
}

const infraReady = (c: KubeObject | undefined) =>
  (c?.status as { infrastructureReady?: boolean } | undefined)?.infrastructureReady === true;
const secretOf = (ns: string, name: string) =>
  eventually(() => tc.client.get(R.Secret, ns, `${name}-kubeconfig`), `Secret ${ns}/${name}-kubeconfig`);
const serverOf = (secret: Secret, ns: string, name: string) =>
  /server: (\S+)/.exec(kubeconfigFromSecret(secret, ns, name))?.[1];

describe('the control plane part of the CAPI simulator', () => {
  it('gives two Clusters of one name in two namespaces each an API server and a Secret owned by the Cluster', async () => {
    const a = await readyCluster('wl-a', 'edge');
    const b = await readyCluster('wl-b', 'edge');
    const [sa, sb] = await Promise.all([secretOf('wl-a', 'edge'), secretOf('wl-b', 'edge')]);
    expect(sa.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Cluster', name: 'edge', uid: a.metadata.uid, controller: true }),
    ]);
    expect(sb.metadata.ownerReferences?.[0]?.uid).toBe(b.metadata.uid);
    expect(sa.metadata.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': 'edge' });
    expect((sa as { type?: string }).type).toBe('cluster.x-k8s.io/secret');
    expect(serverOf(sa, 'wl-a', 'edge')).toBe(clusters.lookup('wl-a', 'edge')?.server.url);
    expect(serverOf(sb, 'wl-b', 'edge')).toBe(clusters.lookup('wl-b', 'edge')?.server.url);
    expect(serverOf(sa, 'wl-a', 'edge')).not.toBe(serverOf(sb, 'wl-b', 'edge'));
    // The Secret's kubeconfig reaches that cluster: a Node made there is seen through it, not in the other.
    const viaSecret = KubeClient.fromString(kubeconfigFromSecret(sa, 'wl-a', 'edge'));
    await clusters.lookup('wl-a', 'edge')!.admin.create(R.Node, { metadata: { name: 'only-in-a' } });
    expect((await viaSecret.list(R.Node)).items.map((n) => n.metadata.name)).toEqual(['only-in-a']);
    expect((await clusters.lookup('wl-b', 'edge')!.admin.list(R.Node)).items).toEqual([]);
  });

  it('keeps a Secret the user brought and starts no API server for that Cluster', async () => {
    const theirs = kubeconfigSecret({
      namespace: 'wl-own',
      secretName: 'own-kubeconfig',
      clusterName: 'own',
      kubeconfig: 'apiVersion: v1\nkind: Config\n# the user’s\n',
    });
    await tc.client.create(R.Secret, theirs);
    await readyCluster('wl-own', 'own');
    await eventually(
      async () => infraReady(await tc.client.get(R.Cluster, 'wl-own', 'own')),
      'the Cluster infrastructure ready',
    );
    await capi.idle();
    expect(clusters.lookup('wl-own', 'own')).toBeUndefined();
    expect(started).not.toContain('wl-own/own');
    expect((await tc.client.get(R.Secret, 'wl-own', 'own-kubeconfig'))?.data).toEqual(theirs.data);
  });

  it('waits for the KubeadmControlPlane the Cluster names, which then owns the Secret', async () => {
    await readyCluster('wl-kcp', 'cp-cluster', 'cp');
    await eventually(
      async () => infraReady(await tc.client.get(R.Cluster, 'wl-kcp', 'cp-cluster')),
      'the Cluster infrastructure ready',
    );
    await capi.idle();
    expect(await tc.client.get(R.Secret, 'wl-kcp', 'cp-cluster-kubeconfig')).toBeUndefined();
    const kcp = await tc.client.create<KubeObject>(R.KubeadmControlPlane, {
      metadata: { name: 'cp', namespace: 'wl-kcp' },
      spec: {
        replicas: 0,
        version: 'v1.30.0',
        machineTemplate: { infrastructureRef: { kind: 'Metal3MachineTemplate', name: 'none' } },
      },
    });
    const secret = await secretOf('wl-kcp', 'cp-cluster');
    expect(secret.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'KubeadmControlPlane',
        name: 'cp',
        uid: kcp.metadata.uid,
        controller: true,
      }),
    ]);
  });

  it('stops the API server when its Cluster is gone', async () => {
    const server = clusters.lookup('wl-b', 'edge')!.server;
    await tc.client.delete(R.Cluster, 'wl-b', 'edge');
    await eventually(async () => clusters.lookup('wl-b', 'edge') === undefined, 'the cluster stopped');
    await expect(fetch(`${server.url}/api/v1/nodes`)).rejects.toThrow();
  });
});

describe('the kubeadm bootstrap provider part', () => {
  it('writes the data Secret of a KubeadmConfig applied after its Machine, and the Machine takes it', async () => {
    await tc.client.create(R.Machine, {
      metadata: { name: 'boot-0', namespace: 'wl-boot' },
      spec: {
        clusterName: 'boot',
        bootstrap: {
          configRef: { apiVersion: apiVersionOf(R.KubeadmConfig), kind: 'KubeadmConfig', name: 'boot-0' },
        },
        infrastructureRef: { apiVersion: INFRA, kind: 'Metal3Machine', name: 'boot-0' },
      },
    });
    // Seen (labelled with its cluster, as Cluster API's defaulting does), but no bootstrap data yet.
    await eventually(async () => {
      const m = await tc.client.get(R.Machine, 'wl-boot', 'boot-0');
      return m?.metadata.labels?.['cluster.x-k8s.io/cluster-name'] === 'boot';
    }, 'the Machine labelled');
    await capi.idle();
    const before = await tc.client.get(R.Machine, 'wl-boot', 'boot-0');
    expect(
      (before!.spec as { bootstrap: { dataSecretName?: string } }).bootstrap.dataSecretName,
    ).toBeUndefined();
    await tc.client.create(R.KubeadmConfig, {
      metadata: { name: 'boot-0', namespace: 'wl-boot' },
      spec: {
        preKubeadmCommands: ['netplan apply'],
        files: [{ path: '/etc/motd', content: 'hi' }],
        joinConfiguration: { nodeRegistration: { name: '{{ ds.meta_data.name }}' } },
      },
    });
    const machine = await eventually(async () => {
      const m = await tc.client.get(R.Machine, 'wl-boot', 'boot-0');
      return m && (m.spec as { bootstrap: { dataSecretName?: string } }).bootstrap.dataSecretName
        ? m
        : undefined;
    }, 'the Machine bootstrap data');
    expect((machine.spec as { bootstrap: { dataSecretName?: string } }).bootstrap.dataSecretName).toBe(
      'boot-0',
    );
    const config = await tc.client.get(R.KubeadmConfig, 'wl-boot', 'boot-0');
    expect(config?.status).toEqual({ ready: true, dataSecretName: 'boot-0' });
    expect(config?.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'Machine',
        name: 'boot-0',
        uid: machine.metadata.uid,
        controller: true,
      }),
    ]);
    const data = await tc.client.get(R.Secret, 'wl-boot', 'boot-0');
    expect(data?.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name}`)).toEqual([
      'KubeadmConfig/boot-0',
    ]);
    const value = Buffer.from((data!.data as { value: string }).value, 'base64').toString();
    expect(value).toMatch(/^#cloud-config\n/);
    expect(value).toContain('path: /etc/motd');
    expect(value).toContain('- netplan apply\n  - echo kubeadm join (simulated)');
  });
});

describe('publishKubeconfig', () => {
  it('creates the Secret once and keeps one that is there', async () => {
    const spec = { namespace: 'wl-own', secretName: 'x-kubeconfig', clusterName: 'x', kubeconfig: 'one' };
    expect(await publishKubeconfig(tc.client, spec)).toBe('created');
    expect(await publishKubeconfig(tc.client, { ...spec, kubeconfig: 'two' })).toBe('exists');
    const s = await tc.client.get(R.Secret, 'wl-own', 'x-kubeconfig');
    expect(Buffer.from((s!.data as { value: string }).value, 'base64').toString()).toBe('one');
  });
});
