/**
 * allocateIndex + renderData against the embedded API server: a machine's claim becomes a
 * Metal3Data with an index, IPClaims become IPAddresses, the Secrets are written once and the
 * Metal3Data is ready; a deleted Secret comes back byte-identical.
 */
import { describe, expect, it } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import {
  addressOf,
  allocate,
  CLUSTER,
  converge,
  createMachine,
  indexOf,
  NS,
  render,
  secretText,
  seedTemplate,
} from '../../helpers/data.ts';
import { useDataCluster } from './use-data-cluster.ts';

const tc = useDataCluster({ pools: true, template: seedTemplate('nodepool-1') });

describe('allocateIndex + renderData, one machine', () => {
  let data: KubeObject;

  it('claim -> Metal3Data nodepool-1-0 with owners, labels, finalizer; claim and template status', async () => {
    await createMachine(tc.client, 'worker-a', 'nodepool-1');
    const r = await allocate(tc.ctx, R.Metal3DataClaim, 'worker-a');
    expect(r).toMatchObject({ kind: 'done' });
    data = (await tc.client.get(R.Metal3Data, NS, 'nodepool-1-0'))!;
    const claim = (await tc.client.get(R.Metal3DataClaim, NS, 'worker-a'))!;
    const template = (await tc.client.get(R.Metal3DataTemplate, NS, 'nodepool-1'))!;
    expect(data.spec).toEqual({
      index: 0,
      template: { name: 'nodepool-1', namespace: NS },
      claim: { name: 'worker-a', namespace: NS },
      templateReference: 'old-template',
    });
    expect(data.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'Metal3DataTemplate',
        name: 'nodepool-1',
        uid: template.metadata.uid,
        controller: true,
      }),
      expect.objectContaining({ kind: 'Metal3DataClaim', name: 'worker-a', uid: claim.metadata.uid }),
    ]);
    expect(data.metadata.ownerReferences![1]!.controller).toBeUndefined();
    expect(data.metadata.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': CLUSTER });
    // Created with renderData's finalizer too (one write fewer than adding it afterwards).
    expect(data.metadata.finalizers).toEqual([
      'metal3dataclaim.infrastructure.cluster.x-k8s.io',
      'metal3data.infrastructure.cluster.x-k8s.io',
    ]);
    expect(claim.metadata.finalizers).toContain('metal3dataclaim.infrastructure.cluster.x-k8s.io');
    expect(claim.status).toEqual({ renderedData: { name: 'nodepool-1-0', namespace: NS } });
    expect(template.status).toMatchObject({
      indexes: { '0': 'worker-a' },
      dataNames: { 'worker-a': 'nodepool-1-0' },
    });
    expect(template.metadata.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': CLUSTER });
  });

  it('a second run writes nothing (idempotent)', async () => {
    const before = tc.client.stats.writes;
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'worker-a')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'worker-a')).toBe(0);
    expect(tc.client.stats.writes).toBe(before);
  });

  it('renderData creates one IPClaim per pool and waits for IPAM (event-driven)', async () => {
    const r = await render(tc.ctx, 'nodepool-1-0');
    expect(r.kind).toBe('requeue');
    const claims = (await tc.client.list(R.IPClaim, NS)).items;
    expect(claims.map((c) => c.metadata.name).sort()).toEqual([
      'nodepool-1-0-pool-1',
      'nodepool-1-0-pool6-1',
    ]);
    const c = claims.find((x) => x.metadata.name === 'nodepool-1-0-pool-1')!;
    expect(c.spec).toEqual({ pool: { name: 'pool-1', namespace: NS } });
    // Created with the IPAM finalizer too (one write fewer than adding it afterwards).
    expect(c.metadata.finalizers).toEqual([
      'metal3data.infrastructure.cluster.x-k8s.io',
      'ipclaim.ipam.metal3.io',
    ]);
    expect(c.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Metal3Data', name: 'nodepool-1-0', controller: true }),
    ]);
    expect(c.metadata.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': CLUSTER });
    expect((await tc.client.list(R.Secret, NS)).items).toEqual([]);
  });

  it('IPClaim -> IPAddress <namePrefix>-<ip>, claim status.address, pool status.indexes', async () => {
    expect(await allocate(tc.ctx, R.IPClaim, 'nodepool-1-0-pool-1')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'nodepool-1-0-pool-1')).toBe('192.168.0.10');
    expect(await allocate(tc.ctx, R.IPClaim, 'nodepool-1-0-pool6-1')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'nodepool-1-0-pool6-1')).toBe('2001:db8::10');
    const addr = (await tc.client.get(R.IPAddress, NS, 'pool-1-192-168-0-10'))!;
    const claim = (await tc.client.get(R.IPClaim, NS, 'nodepool-1-0-pool-1'))!;
    const pool = (await tc.client.get(R.IPPool, NS, 'pool-1'))!;
    expect(addr.spec).toEqual({
      address: '192.168.0.10',
      prefix: 24,
      gateway: '192.168.0.1',
      dnsServers: ['8.8.8.8'],
      pool: { name: 'pool-1', namespace: NS },
      claim: { name: 'nodepool-1-0-pool-1', namespace: NS },
    });
    expect(addr.metadata.finalizers).toEqual(['ipaddress.ipam.metal3.io']);
    expect(addr.metadata.ownerReferences!.map((o) => `${o.kind}/${o.name}/${o.controller ?? false}`)).toEqual(
      ['IPPool/pool-1/false', 'IPClaim/nodepool-1-0-pool-1/false'],
    );
    expect(claim.status).toEqual({ address: { name: 'pool-1-192-168-0-10', namespace: NS } });
    expect(claim.metadata.finalizers).toContain('ipclaim.ipam.metal3.io');
    expect((pool.status as any).indexes).toEqual({ 'nodepool-1-0-pool-1': '192.168.0.10' });
    expect((pool.status as any).lastUpdated).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await tc.client.get(R.IPAddress, NS, 'pool6-1-2001-db8--10')).toBeDefined();
  });

  it('renders and writes the two Secrets, refs and status.ready', async () => {
    expect(await render(tc.ctx, 'nodepool-1-0')).toMatchObject({ kind: 'done' });
    const meta = (await tc.client.get(R.Secret, NS, 'worker-a-metadata-0'))!;
    const net = (await tc.client.get(R.Secret, NS, 'worker-a-networkdata-0'))!;
    expect(meta.type).toBe('infrastructure.cluster.x-k8s.io/secret');
    expect(meta.metadata.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': CLUSTER });
    expect(meta.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'Metal3Data',
        name: 'nodepool-1-0',
        uid: data.metadata.uid,
        controller: true,
      }),
    ]);
    const metaText = secretText(meta, 'metaData');
    expect(metaText).toContain('index: "0"');
    expect(metaText).toContain('providerid: metal3/worker-a-host/worker-a');
    expect(metaText).toContain('name_bmh: worker-a-host');
    expect(metaText).toContain('label-1: label-worker-a');
    expect(secretText(net, 'networkData')).toContain('ip_address: 192.168.0.10');
    expect(secretText(net, 'networkData')).toContain('ip_address: 2001:db8::10');
    const d = (await tc.client.get(R.Metal3Data, NS, 'nodepool-1-0'))!;
    expect(d.spec).toMatchObject({
      metaData: { name: 'worker-a-metadata-0', namespace: NS },
      networkData: { name: 'worker-a-networkdata-0', namespace: NS },
    });
    expect(d.status).toEqual({ ready: true, error: false });
    expect(d.metadata.finalizers).toContain('metal3data.infrastructure.cluster.x-k8s.io');
  });

  it('a second renderData run writes nothing', async () => {
    const before = tc.client.stats.writes;
    expect(await render(tc.ctx, 'nodepool-1-0')).toMatchObject({ kind: 'done' });
    expect(tc.client.stats.writes).toBe(before);
  });

  it('a rendered Secret that was deleted is recreated byte-identical; an existing one is not rewritten', async () => {
    const meta = (await tc.client.get(R.Secret, NS, 'worker-a-metadata-0'))!;
    const net = (await tc.client.get(R.Secret, NS, 'worker-a-networkdata-0'))!;
    await tc.client.delete(R.Secret, NS, 'worker-a-networkdata-0');
    await tc.client.delete(R.Secret, NS, 'worker-a-metadata-0');
    tc.server.log.reset();
    expect(await render(tc.ctx, 'nodepool-1-0')).toMatchObject({ kind: 'done' });
    const meta2 = (await tc.client.get(R.Secret, NS, 'worker-a-metadata-0'))!;
    const net2 = (await tc.client.get(R.Secret, NS, 'worker-a-networkdata-0'))!;
    expect(meta2.metadata.uid).not.toBe(meta.metadata.uid);
    expect(meta2.data).toEqual(meta.data);
    expect(net2.data).toEqual(net.data);
    expect(tc.server.log.count('create', 'ipaddresses')).toBe(0);
    // Now present: a further run neither creates nor updates a Secret.
    tc.server.log.reset();
    await render(tc.ctx, 'nodepool-1-0');
    expect(tc.server.log.count('create', 'secrets') + tc.server.log.count('update', 'secrets')).toBe(0);
  });

  it('crash between the Metal3Data create and the status write: the existing Metal3Data is reused', async () => {
    const m = await createMachine(tc.client, 'worker-b', 'nodepool-1');
    // What a crashed run left behind: the Metal3Data exists, the claim's status was never written.
    const template = (await tc.client.get(R.Metal3DataTemplate, NS, 'nodepool-1'))!;
    await tc.client.create(R.Metal3Data, {
      metadata: {
        name: 'nodepool-1-1',
        namespace: NS,
        finalizers: ['metal3dataclaim.infrastructure.cluster.x-k8s.io'],
        ownerReferences: [
          {
            apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
            kind: 'Metal3DataTemplate',
            name: 'nodepool-1',
            uid: template.metadata.uid!,
            controller: true,
          },
          {
            apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
            kind: 'Metal3DataClaim',
            name: 'worker-b',
            uid: m.claim.metadata.uid!,
          },
        ],
      },
      spec: {
        index: 1,
        template: { name: 'nodepool-1', namespace: NS },
        claim: { name: 'worker-b', namespace: NS },
      },
    });
    tc.server.log.reset();
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'worker-b')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'worker-b')).toBe(1);
    expect(tc.server.log.count('create', 'metal3datas')).toBe(0);
    expect((await tc.client.list(R.Metal3Data, NS)).items).toHaveLength(2);
    const claim = (await tc.client.get(R.Metal3DataClaim, NS, 'worker-b'))!;
    expect(claim.status).toEqual({ renderedData: { name: 'nodepool-1-1', namespace: NS } });
  });

  it('the template reconcile rebuilds its status and points at its Metal3Cluster', async () => {
    await tc.client.create(R.Metal3Cluster, {
      metadata: { name: 'm3cluster', namespace: NS },
      spec: { controlPlaneEndpoint: { host: '192.168.111.249', port: 6443 } },
    });
    await tc.client.create(R.Cluster, {
      metadata: { name: CLUSTER, namespace: NS },
      spec: {
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'Metal3Cluster',
          name: 'm3cluster',
          namespace: NS,
        },
      },
    });
    // A stale entry (as if a patch raced a release) is corrected from the Metal3Data list.
    await tc.client.patch(
      R.Metal3DataTemplate,
      NS,
      'nodepool-1',
      { status: { indexes: { '7': 'ghost' } } },
      'merge',
      { status: true },
    );
    await allocate(tc.ctx, R.Metal3DataTemplate, 'nodepool-1');
    const t = (await tc.client.get(R.Metal3DataTemplate, NS, 'nodepool-1'))!;
    expect((t.status as any).indexes).toEqual({ '0': 'worker-a', '1': 'worker-b' });
    expect((t.status as any).dataNames).toEqual({ 'worker-a': 'nodepool-1-0', 'worker-b': 'nodepool-1-1' });
    expect(t.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Metal3Cluster', name: 'm3cluster', controller: true }),
    ]);
    const writes = tc.client.stats.writes;
    await allocate(tc.ctx, R.Metal3DataTemplate, 'nodepool-1');
    expect(tc.client.stats.writes).toBe(writes);
  });

  it('the whole path converges for more machines, with distinct indexes and addresses', async () => {
    await createMachine(tc.client, 'worker-c', 'nodepool-1');
    await converge(tc.ctx);
    const datas = (await tc.client.list(R.Metal3Data, NS)).items;
    expect(datas.map((d) => (d.spec as any).index).sort()).toEqual([0, 1, 2]);
    expect(datas.every((d) => (d.status as any)?.ready === true)).toBe(true);
    const addrs = (await tc.client.list(R.IPAddress, NS)).items.map((a) => (a.spec as any).address).sort();
    expect(addrs).toEqual([
      '192.168.0.10',
      '192.168.0.11',
      '192.168.0.12',
      '2001:db8::10',
      '2001:db8::11',
      '2001:db8::12',
    ]);
    expect(await tc.client.get(R.Secret, NS, 'worker-c-metadata-2')).toBeDefined();
  });
});
