/**
 * The baremetal-operator simulator on its own: registration of a bare host, provisioning with
 * meta_data exposure (and the uuid-override Warning), error injection, power following spec.online,
 * deprovisioning back to available.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { META_DATA_ANNOTATION, startBmoSimulator } from '../../../infra/local/sim/bmo.ts';
import { createSampleHosts } from '../../../infra/local/sim/bmo-hosts.ts';
import { R } from '../../../shared/api/resources.ts';
import { optimisticUpdate } from '../../../shared/kube/optimistic.ts';
import { startTestCluster, type TestCluster, testClient } from '../../helpers/cluster.ts';
import { eventually, hostState, NS } from '../../helpers/hosts.ts';

let tc: TestCluster;
let ok: ReturnType<typeof startBmoSimulator>;
let failing: ReturnType<typeof startBmoSimulator>;
beforeAll(async () => {
  tc = await startTestCluster({ namespaces: ['flaky'] });
  ok = startBmoSimulator({
    client: testClient(tc.kubeconfig),
    namespace: NS,
    delays: { provisioningMs: 5, deprovisioningMs: 5, powerMs: 1 },
  });
  failing = startBmoSimulator({
    client: testClient(tc.kubeconfig),
    namespace: 'flaky',
    errorRate: 1,
    delays: { provisioningMs: 5 },
  });
  await Promise.all([ok.ready, failing.ready]);
});
afterAll(async () => {
  ok?.stop();
  failing?.stop();
  await tc?.stop();
});

const consumer = {
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'Metal3Machine',
  name: 'm',
  namespace: NS,
};
const get = (ns: string, name: string) => tc.client.get(R.BareMetalHost, ns, name);

describe('baremetal-operator simulator', () => {
  it('registers a host created without status', async () => {
    await tc.client.create(R.BareMetalHost, {
      metadata: { name: 'bare', namespace: NS },
      spec: { online: false, bootMACAddress: '52:54:00:00:00:0a' },
    });
    const h = await eventually(async () => {
      const x = await get(NS, 'bare');
      return hostState(x) === 'available' && x;
    }, 'registered');
    expect((h.status as any).hardware).toEqual({
      hostname: 'bare',
      nics: [{ name: 'eth0', mac: '52:54:00:00:00:0a', ip: '192.168.111.12' }],
    });
    expect((h.status as any).poweredOn).toBe(false);
  });

  it('provisions, exposes meta_data (warning on a uuid override), follows power, deprovisions', async () => {
    const [h] = await createSampleHosts(tc.client, NS, 1, { prefix: 'prov' });
    const name = h!.metadata.name!;
    await tc.client.create(R.Secret, {
      metadata: { name: 'md', namespace: NS },
      data: { metaData: Buffer.from('name: node-a\nuuid: not-the-host\nindex: "3"\n').toString('base64') },
    });
    await optimisticUpdate(tc.client, R.BareMetalHost, NS, name, (x) => {
      Object.assign(x.spec as object, {
        consumerRef: consumer,
        image: { url: 'http://i', checksum: 'c' },
        metaData: { name: 'md' },
        online: true,
      });
    });
    const p = await eventually(async () => {
      const x = await get(NS, name);
      return hostState(x) === 'provisioned' && x;
    }, 'provisioned');
    expect((p.status as any).poweredOn).toBe(true);
    expect(JSON.parse(p.metadata.annotations![META_DATA_ANNOTATION]!)).toEqual({
      uuid: 'not-the-host',
      'metal3-namespace': NS,
      'metal3-name': name,
      'local-hostname': name,
      local_hostname: name,
      name: 'node-a',
      index: '3',
    });
    const events = (await tc.client.list(R.Event, NS)).items as any[];
    expect(events.find((e) => e.reason === 'MetaDataUUIDOverridden')).toMatchObject({
      type: 'Warning',
      involvedObject: { name },
    });

    await optimisticUpdate(
      tc.client,
      R.BareMetalHost,
      NS,
      name,
      (x) => void Object.assign(x.spec as object, { online: false }),
    );
    await eventually(
      async () => (await get(NS, name))!.status && ((await get(NS, name))!.status as any).poweredOn === false,
      'powered off',
    );

    await optimisticUpdate(tc.client, R.BareMetalHost, NS, name, (x) => {
      delete (x.spec as any).image;
    });
    const back = await eventually(async () => {
      const x = await get(NS, name);
      return hostState(x) === 'available' && x;
    }, 'available again');
    expect((back.status as any).errorMessage).toBe('');
  });

  it('injects provisioning errors at the configured rate, cleared by deprovisioning', async () => {
    const [h] = await createSampleHosts(tc.client, 'flaky', 1, { prefix: 'err', bmcSecrets: false });
    const name = h!.metadata.name!;
    await optimisticUpdate(tc.client, R.BareMetalHost, 'flaky', name, (x) => {
      Object.assign(x.spec as object, {
        consumerRef: { ...consumer, namespace: 'flaky' },
        image: { url: 'http://i', checksum: 'c' },
        online: true,
      });
    });
    const e = await eventually(async () => {
      const x = await get('flaky', name);
      return (x!.status as any).errorMessage && x;
    }, 'provisioning error');
    expect(hostState(e)).toBe('provisioning');
    expect((e.status as any).errorType).toBe('provisioning error');
    expect(failing.stats['provision-error']).toBe(1);
    await optimisticUpdate(tc.client, R.BareMetalHost, 'flaky', name, (x) => {
      delete (x.spec as any).image;
    });
    const back = await eventually(async () => {
      const x = await get('flaky', name);
      return hostState(x) === 'available' && x;
    }, 'available after error');
    expect((back.status as any).errorMessage).toBe('');
  });
});
