/**
 * One machine through its whole life against the embedded API server with the baremetal-operator
 * simulator: contract waits, association, host spec, deprovisioning, release, node reuse.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBmoSimulator } from '../../../infra/local/sim/bmo.ts';
import { createSampleHosts } from '../../../infra/local/sim/bmo-hosts.ts';
import { apiVersionOf, R } from '../../../shared/api/resources.ts';
import { optimisticUpdate } from '../../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { startTestCluster, type TestCluster, testClient } from '../../helpers/cluster.ts';
import {
  CLUSTER,
  createCluster,
  createMachinePair,
  deprovision,
  eventually,
  hostState,
  makeCtx,
  NS,
  selectHost,
} from '../../helpers/hosts.ts';

let tc: TestCluster;
let bmo: ReturnType<typeof startBmoSimulator>;

beforeAll(async () => {
  tc = await startTestCluster();
  bmo = startBmoSimulator({
    client: tc.client,
    namespace: NS,
    delays: { provisioningMs: 20, deprovisioningMs: 20 },
  });
  await bmo.ready;
  await createCluster(tc.client);
  await createSampleHosts(tc.client, NS, 4, { labels: (i) => ({ rack: i < 2 ? 'a' : 'b' }) });
});
afterAll(async () => {
  bmo?.stop();
  await tc?.stop();
});

const getM3m = (name: string) => tc.client.get(R.Metal3Machine, NS, name);
const getHost = (name: string) => tc.client.get(R.BareMetalHost, NS, name);
const cond = (o: KubeObject | undefined, type: string) =>
  (
    (o?.status as { conditions?: { type: string; status: string; reason?: string }[] })?.conditions ?? []
  ).find((c) => c.type === type);

describe('selectHost + deprovision lifecycle', () => {
  it('waits for bootstrap data, then associates, provisions, and releases the host on deletion', async () => {
    const ctx = makeCtx(testClient(tc.kubeconfig));
    await createMachinePair(tc.client, 'm1', {
      bootstrap: false,
      m3mSpec: { hostSelector: { matchLabels: { rack: 'b' } } },
    });

    // No bootstrap data yet: finalizer added, condition says why, no host touched.
    const r0 = await selectHost(ctx, 'm1');
    expect(r0.kind).toBe('done');
    let m = await getM3m('m1');
    expect(m!.metadata.finalizers).toContain('metal3machine.infrastructure.cluster.x-k8s.io');
    expect(cond(m, 'AssociateBMH')).toMatchObject({ status: 'False', reason: 'WaitingForBootstrapReady' });
    expect(m!.metadata.annotations?.['metal3.io/BareMetalHost']).toBeUndefined();

    // Bootstrap data arrives (the Machine event wakes selectHost).
    await tc.client.create(R.Secret, {
      metadata: { name: 'm1-bootstrap', namespace: NS },
      data: { value: Buffer.from('#cloud-config').toString('base64') },
    });
    const machine = await tc.client.get(R.Machine, NS, 'm1');
    (machine!.spec as any).bootstrap = { dataSecretName: 'm1-bootstrap' };
    await tc.client.replace(R.Machine, machine!);

    const r1 = await selectHost(ctx, 'm1');
    expect(r1.kind).toBe('done');
    m = await getM3m('m1');
    const hostKey = m!.metadata.annotations?.['metal3.io/BareMetalHost'];
    expect(hostKey).toMatch(/^metal3\/host-000[23]$/); // rack b only
    const hostName = hostKey!.split('/')[1]!;
    let host = await getHost(hostName);
    expect((host!.spec as any).consumerRef).toEqual({
      apiVersion: apiVersionOf(R.Metal3Machine),
      kind: 'Metal3Machine',
      name: 'm1',
      namespace: NS,
    });
    expect(host!.metadata.labels?.['cluster.x-k8s.io/cluster-name']).toBe(CLUSTER);
    expect((host!.spec as any).image).toEqual({
      url: 'http://172.22.0.1/images/node.img',
      checksum: 'http://172.22.0.1/images/node.img.sha256sum',
      checksumType: 'sha256',
      format: 'raw',
    });
    expect((host!.spec as any).userData).toEqual({ name: 'm1-bootstrap', namespace: NS });
    expect((host!.spec as any).metaData).toBeUndefined(); // unset stays unset
    expect((host!.spec as any).networkData).toBeUndefined();
    expect((host!.spec as any).online).toBe(true);
    expect((host!.spec as any).automatedCleaningMode).toBe('metadata');
    const st = m!.status as any;
    expect(st.userData).toEqual({ name: 'm1-bootstrap', namespace: NS });
    expect(st.addresses).toEqual([
      { type: 'InternalIP', address: (host!.status as any).hardware.nics[0].ip },
      { type: 'Hostname', address: hostName },
      { type: 'InternalDNS', address: hostName },
    ]);
    expect(cond(m, 'AssociateBMH')?.status).toBe('True');
    expect(cond(m, 'Metal3DataReady')?.status).toBe('True');
    expect(cond(m, 'Ready')).toMatchObject({ status: 'False', reason: 'WaitingForKubernetesNode' });

    // Idempotent: a second pass writes nothing.
    const before = ctx.client.stats.writes;
    await selectHost(ctx, 'm1');
    expect(ctx.client.stats.writes).toBe(before);

    host = await eventually(async () => {
      const h = await getHost(hostName);
      return hostState(h) === 'provisioned' && h;
    }, 'host provisioned');
    expect((host.status as any).poweredOn).toBe(true);

    // Delete: the host is cleared and powered off, then released once available again.
    await tc.client.delete(R.Metal3Machine, NS, 'm1');
    const d1 = await deprovision(ctx, 'm1');
    expect(d1.kind).toBe('requeue');
    host = await getHost(hostName);
    expect((host!.spec as any).image).toBeUndefined();
    expect((host!.spec as any).userData).toBeUndefined();
    expect((host!.spec as any).online).toBe(false);
    expect((host!.spec as any).consumerRef).toBeDefined(); // still ours while deprovisioning

    await eventually(async () => hostState(await getHost(hostName)) === 'available', 'host available');
    const d2 = await deprovision(ctx, 'm1');
    expect(d2.kind).toBe('done');
    host = await getHost(hostName);
    expect((host!.spec as any).consumerRef).toBeUndefined();
    expect(host!.metadata.labels?.['cluster.x-k8s.io/cluster-name']).toBeUndefined();
    expect(await getM3m('m1')).toBeUndefined(); // finalizer dropped, object gone
  });

  it('a host lost while claimed fails the machine clearly (no silent re-association)', async () => {
    const ctx = makeCtx(tc.client);
    await createMachinePair(tc.client, 'm2');
    expect((await selectHost(ctx, 'm2')).kind).toBe('done');
    const key = (await getM3m('m2'))!.metadata.annotations!['metal3.io/BareMetalHost']!;
    await optimisticUpdate(tc.client, R.BareMetalHost, NS, key.split('/')[1]!, (h) => {
      delete (h.spec as any).consumerRef;
    });
    const r = await selectHost(ctx, 'm2');
    expect(r).toMatchObject({ kind: 'terminal', reason: 'UpdateError' });
    const m = await getM3m('m2');
    expect((m!.status as any).failureReason).toBe('UpdateError');
    expect((m!.status as any).failureMessage).toMatch(/was released or taken by another consumer/);
    expect(cond(m, 'AssociateBMH')).toMatchObject({ status: 'False', reason: 'UpdateError' });
    const evs = await tc.client.list(R.Event, NS);
    expect(
      evs.items.some(
        (e) =>
          (e as any).involvedObject?.name === 'm2' &&
          (e as any).type === 'Warning' &&
          (e as any).reason === 'UpdateError',
      ),
    ).toBe(true);
    // Left alone afterwards.
    expect((await selectHost(ctx, 'm2')).kind).toBe('done');
    expect((await getM3m('m2'))!.metadata.annotations!['metal3.io/BareMetalHost']).toBe(key);
  });
});
