/**
 * The CAPI and baremetal-operator simulators around the product cores: a KubeadmControlPlane and a
 * MachineDeployment stamp Machines + Metal3Machines from their templates, the Metal3Cluster makes
 * the Cluster's infrastructure ready, selectHost associates and provisions, providerID and nodeRef
 * flow back to the Machine, scale-down releases hosts, and nodeReuse books a released host for the
 * next machine of the same MachineDeployment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileCluster } from '../../../functions/metal3-cluster/core.ts';
import { startBmoSimulator } from '../../../infra/local/sim/bmo.ts';
import { createSampleHosts } from '../../../infra/local/sim/bmo-hosts.ts';
import { startCapiSimulator } from '../../../infra/local/sim/capi.ts';
import { apiVersionOf, R } from '../../../shared/api/resources.ts';
import { optimisticUpdate } from '../../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { startTestCluster, type TestCluster, testClient } from '../../helpers/cluster.ts';
import { deprovision, eventually, hostState, makeCtx, msg, NS, selectHost } from '../../helpers/hosts.ts';

let tc: TestCluster;
let bmo: ReturnType<typeof startBmoSimulator>;
let capi: ReturnType<typeof startCapiSimulator>;
let ctx: ReturnType<typeof makeCtx>;

const IMAGE = {
  url: 'http://172.22.0.1/images/node.img',
  checksum: 'http://172.22.0.1/images/node.img.sha256sum',
  checksumType: 'sha256',
  format: 'raw',
} as const;

beforeAll(async () => {
  tc = await startTestCluster();
  const sims = testClient(tc.kubeconfig);
  bmo = startBmoSimulator({
    client: sims,
    namespace: NS,
    delays: { provisioningMs: 5, deprovisioningMs: 5 },
  });
  // The test cluster doubles as the workload cluster (Nodes are cluster-scoped).
  capi = startCapiSimulator({ client: sims, namespace: NS, workloadClient: async () => tc.client });
  await Promise.all([bmo.ready, capi.ready]);
  ctx = makeCtx(testClient(tc.kubeconfig));
  await createSampleHosts(tc.client, NS, 2, { labels: () => ({ role: 'control-plane' }) });
  await createSampleHosts(tc.client, NS, 3, { prefix: 'worker', labels: () => ({ role: 'worker' }) });
  const c = tc.client;
  await c.create(R.Cluster, {
    metadata: { name: 'cluster', namespace: NS },
    spec: {
      infrastructureRef: {
        apiVersion: apiVersionOf(R.Metal3Cluster),
        kind: 'Metal3Cluster',
        name: 'm3cluster',
        namespace: NS,
      },
      controlPlaneRef: {
        apiVersion: apiVersionOf(R.KubeadmControlPlane),
        kind: 'KubeadmControlPlane',
        name: 'cp',
        namespace: NS,
      },
    },
  });
  await c.create(R.Metal3Cluster, {
    metadata: { name: 'm3cluster', namespace: NS },
    spec: { controlPlaneEndpoint: { host: '192.168.111.249', port: 6443 }, noCloudProvider: true },
  });
  for (const [name, role, extra] of [
    ['cp', 'control-plane', {}],
    ['md-0', 'worker', { nodeReuse: true }],
  ] as const) {
    await c.create(R.Metal3MachineTemplate, {
      metadata: { name, namespace: NS },
      spec: {
        ...extra,
        template: {
          spec: { image: IMAGE, automatedCleaningMode: 'disabled', hostSelector: { matchLabels: { role } } },
        },
      },
    });
  }
  await c.create(R.KubeadmControlPlane, {
    metadata: { name: 'cp', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'cluster' } },
    spec: {
      replicas: 1,
      version: 'v1.28.1',
      machineTemplate: {
        infrastructureRef: {
          apiVersion: apiVersionOf(R.Metal3MachineTemplate),
          kind: 'Metal3MachineTemplate',
          name: 'cp',
          namespace: NS,
        },
      },
    },
  });
  await c.create(R.MachineDeployment, {
    metadata: { name: 'md-0', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'cluster' } },
    spec: {
      clusterName: 'cluster',
      replicas: 2,
      selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': 'md-0' } },
      template: {
        metadata: { labels: { nodepool: 'nodepool-0' } },
        spec: {
          clusterName: 'cluster',
          version: 'v1.28.1',
          bootstrap: {},
          infrastructureRef: {
            apiVersion: apiVersionOf(R.Metal3MachineTemplate),
            kind: 'Metal3MachineTemplate',
            name: 'md-0',
          },
        },
      },
    },
  });
}, 60_000);
afterAll(async () => {
  capi?.stop();
  bmo?.stop();
  await tc?.stop();
});

const m3ms = async () => (await tc.client.list(R.Metal3Machine, NS)).items;

/** What resolveProviderID does for a Metal3Machine, done by hand: spec.providerID, then status.ready. */
async function provisionedAs(name: string, providerID: string): Promise<void> {
  await optimisticUpdate(tc.client, R.Metal3Machine, NS, name, (o) => {
    (o.spec as any).providerID = providerID;
  });
  await optimisticUpdate(
    tc.client,
    R.Metal3Machine,
    NS,
    name,
    (o) => {
      (o.status as any).ready = true;
    },
    { status: true },
  );
}
const machines = async () => (await tc.client.list(R.Machine, NS)).items;
const hosts = async () => (await tc.client.list(R.BareMetalHost, NS)).items;

/** Plays the relay: every core on every object it concerns, until `done` holds. */
async function converge(done: () => Promise<boolean>, what: string): Promise<void> {
  await eventually(
    async () => {
      await reconcileCluster(ctx, msg('reconcileCluster', R.Metal3Cluster, 'm3cluster'));
      for (const m of await m3ms()) {
        if (m.metadata.deletionTimestamp) await deprovision(ctx, m.metadata.name!);
        else await selectHost(ctx, m.metadata.name!);
      }
      return done();
    },
    what,
    25_000,
  );
}

describe('CAPI + baremetal-operator simulators around the cores', () => {
  it('stamps machines from the templates and provisions them', async () => {
    await converge(async () => {
      const ms = await m3ms();
      const hs = await hosts();
      return (
        ms.length === 3 &&
        ms.every((m) => m.metadata.annotations?.['metal3.io/BareMetalHost']) &&
        hs.filter((h) => hostState(h) === 'provisioned').length === 3
      );
    }, 'three machines provisioned');

    const cluster = await tc.client.get(R.Cluster, NS, 'cluster');
    expect((cluster!.status as any).infrastructureReady).toBe(true);
    expect((cluster!.spec as any).controlPlaneEndpoint).toEqual({ host: '192.168.111.249', port: 6443 });
    const m3c = await tc.client.get(R.Metal3Cluster, NS, 'm3cluster');
    expect(m3c!.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Cluster', name: 'cluster' });
    expect(m3c!.metadata.finalizers).toContain('metal3cluster.infrastructure.cluster.x-k8s.io');
    expect((m3c!.status as any).ready).toBe(true);

    const ms = await machines();
    expect(
      ms.filter((m) => m.metadata.labels?.['cluster.x-k8s.io/control-plane-name'] === 'cp'),
    ).toHaveLength(1);
    expect(ms.filter((m) => m.metadata.labels?.['cluster.x-k8s.io/deployment-name'] === 'md-0')).toHaveLength(
      2,
    );
    for (const m of ms) {
      expect((m.spec as any).bootstrap.dataSecretName).toBe(`${m.metadata.name}-bootstrap`);
      const secret = await tc.client.get(R.Secret, NS, `${m.metadata.name}-bootstrap`);
      expect(Buffer.from((secret!.data as any).format, 'base64').toString()).toBe('cloud-config');
      const m3m = await tc.client.get(R.Metal3Machine, NS, m.metadata.name!);
      expect(m3m!.metadata.ownerReferences?.[0]).toMatchObject({
        kind: 'Machine',
        name: m.metadata.name,
        uid: m.metadata.uid,
      });
      expect(m3m!.metadata.annotations?.['cluster.x-k8s.io/cloned-from-groupkind']).toBe(
        'Metal3MachineTemplate.infrastructure.cluster.x-k8s.io',
      );
      const role = m.metadata.labels?.['cluster.x-k8s.io/control-plane-name'] ? 'control-plane' : 'worker';
      const host = await tc.client.get(
        R.BareMetalHost,
        NS,
        m3m!.metadata.annotations!['metal3.io/BareMetalHost']!.split('/')[1]!,
      );
      expect(host!.metadata.labels?.role).toBe(role);
      expect((host!.spec as any).userData).toEqual({ name: `${m.metadata.name}-bootstrap`, namespace: NS });
      expect(JSON.parse(host!.metadata.annotations!['sim.metal3.io/meta-data']!)).toMatchObject({
        uuid: host!.metadata.uid,
        name: host!.metadata.name,
      });
    }
  });

  it('copies providerID to the Machine once ready, and sets nodeRef when a Node carries it', async () => {
    const m = (await m3ms()).find(
      (x) => x.metadata.labels?.['cluster.x-k8s.io/control-plane-name'] === 'cp',
    )!;
    const hostName = m.metadata.annotations!['metal3.io/BareMetalHost']!.split('/')[1]!;
    const providerID = `metal3://${NS}/${hostName}/${m.metadata.name}`;
    await provisionedAs(m.metadata.name!, providerID);
    // Cluster API writes spec.providerID and status.infrastructureReady in two requests (spec, then
    // the status subresource): wait for the pair, not for the first write.
    const machine = await eventually(async () => {
      const x = await tc.client.get(R.Machine, NS, m.metadata.name!);
      return (
        (x!.spec as any).providerID === providerID && (x!.status as any)?.infrastructureReady === true && x
      );
    }, 'providerID and infrastructureReady on the Machine');
    expect((machine.spec as any).providerID).toBe(providerID);
    await tc.client.create(R.Node, { metadata: { name: hostName }, spec: { providerID } });
    const running = await eventually(async () => {
      const x = await tc.client.get(R.Machine, NS, m.metadata.name!);
      return (x!.status as any).phase === 'Running' && x;
    }, 'Machine Running');
    expect((running.status as any).nodeRef).toMatchObject({ kind: 'Node', name: hostName });
  });

  it('sets nodeRef when the Node with the providerID was there before the Machine had it', async () => {
    const m = (await m3ms()).find(
      (x) =>
        x.metadata.labels?.['cluster.x-k8s.io/control-plane-name'] !== 'cp' &&
        x.metadata.annotations?.['metal3.io/BareMetalHost'] &&
        !(x.spec as any).providerID,
    )!;
    const hostName = m.metadata.annotations!['metal3.io/BareMetalHost']!.split('/')[1]!;
    const providerID = `metal3://${NS}/${hostName}/${m.metadata.name}`;
    await tc.client.create(R.Node, { metadata: { name: hostName }, spec: { providerID } });
    await provisionedAs(m.metadata.name!, providerID);
    const running = await eventually(async () => {
      const x = await tc.client.get(R.Machine, NS, m.metadata.name!);
      return (x!.status as any)?.phase === 'Running' && x;
    }, 'Machine Running');
    expect((running.status as any).nodeRef).toMatchObject({ kind: 'Node', name: hostName });
  });

  it('scale-down releases the host with the node-reuse label; scale-up reuses it', async () => {
    const before = await m3ms();
    await tc.client.patch(R.MachineDeployment, NS, 'md-0', { spec: { replicas: 1 } });
    let released: KubeObject | undefined;
    await converge(async () => {
      const ms = await machines();
      if (ms.filter((m) => m.metadata.labels?.['cluster.x-k8s.io/deployment-name'] === 'md-0').length !== 1)
        return false;
      released = (await hosts()).find(
        (h) => h.metadata.labels?.['infrastructure.cluster.x-k8s.io/node-reuse'],
      );
      return Boolean(released) && hostState(released) === 'available';
    }, 'one worker left and its host released');
    expect(released!.metadata.labels!['infrastructure.cluster.x-k8s.io/node-reuse']).toBe('md-0');
    expect((released!.spec as any).consumerRef).toBeUndefined();
    expect((released!.spec as any).online).toBe(false);
    expect((await m3ms()).length).toBe(before.length - 1);

    await tc.client.patch(R.MachineDeployment, NS, 'md-0', { spec: { replicas: 2 } });
    await converge(async () => {
      const ms = await m3ms();
      return ms.length === 3 && ms.every((m) => m.metadata.annotations?.['metal3.io/BareMetalHost']);
    }, 'the worker replaced');
    const newest = (await m3ms()).filter((m) => !before.some((b) => b.metadata.name === m.metadata.name));
    expect(newest).toHaveLength(1);
    // The booked host was taken again (not the free third worker host), and the booking label is gone.
    expect(newest[0]!.metadata.annotations!['metal3.io/BareMetalHost']).toBe(
      `${NS}/${released!.metadata.name}`,
    );
    const again = await tc.client.get(R.BareMetalHost, NS, released!.metadata.name!);
    expect(again!.metadata.labels?.['infrastructure.cluster.x-k8s.io/node-reuse']).toBeUndefined();
  });
  it('control-plane scale-down with nodeReuse but cleaning enabled: cp booking label and a Warning Event', async () => {
    await optimisticUpdate(tc.client, R.Metal3MachineTemplate, NS, 'cp', (t) => {
      (t.spec as any).nodeReuse = true;
      (t.spec as any).template.spec.automatedCleaningMode = 'metadata';
    });
    const cpHost = async () => {
      const m = (await m3ms()).find(
        (x) => x.metadata.labels?.['cluster.x-k8s.io/control-plane-name'] === 'cp',
      );
      return m?.metadata.annotations?.['metal3.io/BareMetalHost']?.split('/')[1];
    };
    const hostName = (await cpHost())!;
    await tc.client.patch(R.KubeadmControlPlane, NS, 'cp', { spec: { replicas: 0 } });
    await converge(async () => {
      const h = await tc.client.get(R.BareMetalHost, NS, hostName);
      return (await cpHost()) === undefined && !(h!.spec as any).consumerRef && hostState(h) === 'available';
    }, 'control plane machine gone and its host released');
    const h = await tc.client.get(R.BareMetalHost, NS, hostName);
    expect(h!.metadata.labels?.['infrastructure.cluster.x-k8s.io/node-reuse']).toBe('cp');
    const events = (await tc.client.list(R.Event, NS)).items as any[];
    const warning = events.find((e) => e.reason === 'NodeReuseWithCleaning');
    expect(warning).toMatchObject({
      type: 'Warning',
      involvedObject: { kind: 'Metal3MachineTemplate', name: 'cp' },
    });
    expect(warning.message).toMatch(/automatedCleaningMode is "metadata"/);
  });
});
