/**
 * Least privilege, enforced: the embedded API server with RBAC on, the ClusterRoles we ship
 * (infra/deploy/common/rbac-functions.yaml, rbac-relay.yaml) applied as on a real cluster, and the
 * cores running under the functions' ServiceAccount token. A whole machine life (host claim, index,
 * addresses, render, host spec, release of everything) must get no 403; and the relay's identity
 * may read but never write.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { createSampleHosts } from '../../infra/local/sim/bmo.ts';
import { envelopeOf, R, type Resource } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { startTestCluster, type TestCluster, testClient } from '../helpers/cluster.ts';
import { POOL_1 } from '../helpers/data.ts';
import { createCluster, createMachinePair } from '../helpers/hosts.ts';
import { makeCtx, NS, run } from './harness.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const FUNCTIONS_TOKEN = 'functions-token';
const RELAY_TOKEN = 'relay-token';
let tc: TestCluster;
let fnClient: KubeClient;
let relayClient: KubeClient;
let ctx: ReconcileContext;

function manifests(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(join(ROOT, file), 'utf8'))
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => Boolean(o));
}

async function applyRbac(file: string): Promise<void> {
  for (const o of manifests(file)) {
    if (o.kind === 'ServiceAccount') continue; // identities come from the tokens here
    const path =
      o.kind === 'ClusterRole'
        ? 'clusterroles'
        : o.kind === 'ClusterRoleBinding'
          ? 'clusterrolebindings'
          : undefined;
    if (!path) continue;
    const t = envelopeOf({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      kind: o.kind!,
      plural: path,
      namespaced: false,
      statusSubresource: false,
    });
    await tc.client.create(t, o);
  }
}

beforeAll(async () => {
  tc = await startTestCluster({
    rbac: {
      tokens: {
        [FUNCTIONS_TOKEN]: { user: 'system:serviceaccount:metal3fn-system:metal3fn-functions' },
        [RELAY_TOKEN]: { user: 'system:serviceaccount:metal3fn-system:metal3fn-relay' },
      },
    },
  });
  await applyRbac('infra/deploy/common/rbac-functions.yaml');
  await applyRbac('infra/deploy/common/rbac-relay.yaml');
  fnClient = testClient(tc.server.kubeconfig({ token: FUNCTIONS_TOKEN }));
  relayClient = testClient(tc.server.kubeconfig({ token: RELAY_TOKEN }));
  ctx = makeCtx(fnClient);
  await createCluster(tc.client);
  await createSampleHosts(tc.client, NS, 2);
  await tc.client.create(envelopeOf(R.IPPool), POOL_1);
  await tc.client.create(envelopeOf(R.Metal3DataTemplate), {
    metadata: { name: 'nodepool-1', namespace: NS },
    spec: {
      clusterName: 'cluster',
      metaData: {
        strings: [{ key: 'abc', value: 'def' }],
        ipAddressesFromIPPool: [{ key: 'ip', name: 'pool-1' }],
      },
      networkData: {
        links: {
          ethernets: [{ type: 'phy', id: 'enp1s0', mtu: 1500, macAddress: { fromHostInterface: 'eth0' } }],
        },
        networks: { ipv4: [{ id: 'prov', link: 'enp1s0', ipAddressFromIPPool: 'pool-1' }] },
      },
    },
  });
});
afterAll(async () => {
  await tc?.stop();
});

/**
 * Plays the relay for the data steps (allocateIndex, renderData) until a round writes nothing.
 * The relay's part (listing the objects) uses the admin client: the functions' role is generated
 * from what the functions call (scripts/gen-rbac.ts), and listing templates is not among it.
 */
async function driveData(): Promise<void> {
  for (let round = 0; round < 12; round++) {
    const before = fnClient.stats.writes;
    for (const c of (await tc.client.list(envelopeOf(R.Metal3DataClaim), NS)).items)
      await run(ctx, 'allocateIndex', R.Metal3DataClaim, c.metadata.name!);
    for (const c of (await tc.client.list(envelopeOf(R.IPClaim), NS)).items)
      await run(ctx, 'allocateIndex', R.IPClaim, c.metadata.name!);
    for (const d of (await tc.client.list(envelopeOf(R.Metal3Data), NS)).items)
      await run(ctx, 'renderData', R.Metal3Data, d.metadata.name!);
    for (const t of (await tc.client.list(envelopeOf(R.Metal3DataTemplate), NS)).items)
      await run(ctx, 'allocateIndex', R.Metal3DataTemplate, t.metadata.name!);
    if (fnClient.stats.writes === before) return;
  }
}

const forbidden = () =>
  tc.server.log.entries
    .filter(
      (e) =>
        e.status === 403 && e.user.startsWith('system:serviceaccount:metal3fn-system:metal3fn-functions'),
    )
    .map((e) => `${e.verb} ${e.resource}${e.name ? `/${e.name}` : ''}`);

describe('the functions ServiceAccount (rbac-functions.yaml)', () => {
  it('a machine to provisioning and back: no request is forbidden', async () => {
    await createMachinePair(tc.client, 'rbac-0', { m3mSpec: { dataTemplate: { name: 'nodepool-1' } } });
    tc.server.log.reset();
    // selectHost claims a host and makes the claim; allocateIndex/renderData render; selectHost
    // then writes the host spec.
    for (let i = 0; i < 4; i++) {
      await run(ctx, 'selectHost', R.Metal3Machine, 'rbac-0');
      await driveData();
    }
    const host = (await tc.client.get(envelopeOf(R.Metal3Machine), NS, 'rbac-0'))?.metadata.annotations?.[
      'metal3.io/BareMetalHost'
    ];
    expect(forbidden()).toEqual([]);
    expect(host, 'the machine holds a host').toBeDefined();
    expect(
      (await tc.client.list(R.Secret, NS)).items.filter(
        (s) => (s as { type?: string }).type === 'infrastructure.cluster.x-k8s.io/secret',
      ),
    ).toHaveLength(2);

    // Release: delete the machine; deprovision and the data release run under the same identity.
    await tc.client.delete(R.Machine, NS, 'rbac-0');
    await tc.client.delete(R.Metal3Machine, NS, 'rbac-0');
    const hostName = host!.split('/')[1]!;
    for (let i = 0; i < 8; i++) {
      await run(ctx, 'deprovision', R.Metal3Machine, 'rbac-0');
      // The baremetal-operator's part: the host deprovisions.
      const h = await tc.client.get(R.BareMetalHost, NS, hostName);
      if (h && !(h.spec as { image?: unknown }).image) {
        h.status = { ...(h.status ?? {}), provisioning: { state: 'available' } };
        await tc.client.replaceStatus(R.BareMetalHost, h).catch(() => undefined);
      }
      for (const c of (await tc.client.list(envelopeOf(R.Metal3DataClaim), NS)).items)
        await run(ctx, 'deprovision', R.Metal3DataClaim, c.metadata.name!);
      for (const d of (await tc.client.list(envelopeOf(R.Metal3Data), NS)).items)
        await run(ctx, 'deprovision', R.Metal3Data, d.metadata.name!);
      for (const c of (await tc.client.list(envelopeOf(R.IPClaim), NS)).items)
        await run(ctx, 'deprovision', R.IPClaim, c.metadata.name!);
      tc.server.settle();
    }
    expect(forbidden()).toEqual([]);
    expect(
      (await tc.client.list(R.Secret, NS)).items.filter(
        (s) => (s as { type?: string }).type === 'infrastructure.cluster.x-k8s.io/secret',
      ),
    ).toEqual([]);
    expect((await tc.client.list(R.IPAddress, NS)).items).toEqual([]);
    expect((await tc.client.list(envelopeOf(R.Metal3Data), NS)).items).toEqual([]);
  });
});

describe('the relay ServiceAccount (rbac-relay.yaml)', () => {
  it('may list and watch what it routes, and may write nothing', async () => {
    const kinds: Resource[] = [R.Metal3Machine, R.BareMetalHost, R.Metal3Data, R.IPClaim, R.Secret];
    for (const t of kinds) {
      await expect(relayClient.list(t)).resolves.toBeDefined();
    }
    await expect(
      relayClient.patch(R.BareMetalHost, NS, 'host-0000', { metadata: { labels: { x: 'y' } } }),
    ).rejects.toMatchObject({ code: 403 });
    await expect(
      relayClient.create(R.Secret, { metadata: { name: 'x', namespace: NS } }),
    ).rejects.toMatchObject({
      code: 403,
    });
    await expect(relayClient.delete(R.Metal3Machine, NS, 'anything')).rejects.toMatchObject({ code: 403 });
  });
});
