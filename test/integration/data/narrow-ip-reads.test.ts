/**
 * The IPAM path of allocateIndex reads what one IPClaim needs, not every IPAddress and IPClaim of
 * the namespace (ADR 010): field selectors on the IPAM CRDs' selectableFields, the given addresses
 * from the pool's status.indexes — which is never trusted for an error (exhaustion is confirmed
 * from full lists) and is mended when it drifts. With IPAM CRDs that lack those fields
 * (ip-address-manager's own), it lists everything, as before, and allocates the same addresses.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PENDING_PAGE } from '../../../shared/allocation/registry.ts';
import { selectableFieldPatches } from '../../../shared/api/crd/build.ts';
import { R } from '../../../shared/api/resources.ts';
import { ipAddressName } from '../../../shared/ipam/allocate.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { loadProjectCrds, type TestCluster, testClient } from '../../helpers/cluster.ts';
import { addressOf, allocate, createClaim, indexOf, makeCtx, NS, pool, ROOT } from '../../helpers/data.ts';
import { kubectl, kubectlAvailable } from '../../helpers/kubectl.ts';
import { useDataCluster } from './use-data-cluster.ts';

const MINE = pool('mine', { pools: [{ start: '10.8.0.1', end: '10.8.0.5' }], prefix: 24 });

const newClaim = (client: KubeClient, name: string, poolName = 'mine') =>
  client.create(R.IPClaim, { metadata: { name, namespace: NS }, spec: { pool: { name: poolName } } });

/** 40 allocated claims on another pool (what a narrow read must skip), then the pool `mine`. */
async function crowdAndMine(client: KubeClient): Promise<void> {
  await client.create(
    R.IPPool,
    pool('crowd', { pools: [{ start: '10.9.0.1', end: '10.9.0.100' }], prefix: 24 }),
  );
  const ctx = makeCtx(client);
  for (let i = 0; i < 40; i++) {
    await newClaim(client, `crowd-${i}`, 'crowd');
    expect(await allocate(ctx, R.IPClaim, `crowd-${i}`)).toMatchObject({ kind: 'done' });
  }
  await client.create(R.IPPool, MINE);
}

const listed = (c: KubeClient, plural: string) => c.stats.listedByResource.get(plural) ?? 0;
const indexesOf = async (client: KubeClient, name = 'mine') =>
  ((await client.get(R.IPPool, NS, name))!.status as { indexes?: Record<string, string> } | undefined)
    ?.indexes ?? {};
const addressNameOf = async (client: KubeClient, claim: string) =>
  ((await client.get(R.IPClaim, NS, claim))!.status as { address?: { name: string } } | undefined)?.address
    ?.name;
const addressesOfMine = async (client: KubeClient) =>
  (await client.list(R.IPAddress, NS)).items
    .filter((a) => (a.spec as { pool: { name: string } }).pool.name === 'mine')
    .map((a) => (a.spec as { address: string }).address)
    .sort();
const ipSelectors = (tc: TestCluster) =>
  tc.server.log.entries
    .filter((e) => e.verb === 'list' && (e.resource === 'ipaddresses' || e.resource === 'ipclaims'))
    .map((e) => `${e.resource}?${new URL(e.path, 'http://local').searchParams.get('fieldSelector') ?? ''}`);

type CrdVersion = {
  selectableFields?: unknown;
  schema: { openAPIV3Schema: { properties: { status: { properties: Record<string, unknown> } } } };
};

/**
 * Our CRDs, and the IPAM ones as ip-address-manager ships them: no selectableFields, and no
 * `status.allocating` on the IPPool (ours, ADR 012: their schema prunes it).
 */
async function projectCrdsWithUpstreamIpam(client: KubeClient): Promise<void> {
  for (const crd of loadProjectCrds()) {
    if ((crd.spec as { group: string }).group === 'ipam.metal3.io')
      for (const v of (crd.spec as { versions: CrdVersion[] }).versions) {
        delete v.selectableFields;
        delete v.schema.openAPIV3Schema.properties.status?.properties.allocating;
      }
    await client.create(R.CustomResourceDefinition, crd);
  }
}

/** A cluster with ip-address-manager's IPAM CRDs, the crowd and `mine`, then `more`. */
const useUpstreamIpamCluster = (more?: (client: KubeClient) => Promise<unknown>) =>
  useDataCluster({
    cluster: { crds: false },
    seed: async ({ client }) => {
      await projectCrdsWithUpstreamIpam(client);
      await crowdAndMine(client);
      await more?.(client);
    },
    timeout: 30_000,
  });

async function setPoolIndexes(client: KubeClient, indexes: Record<string, string>): Promise<void> {
  const p = (await client.get(R.IPPool, NS, 'mine'))!;
  await client.replaceStatus(R.IPPool, { ...p, status: { indexes } });
}

describe('with selectableFields on the IPAM CRDs', () => {
  const tc = useDataCluster({ seed: ({ client }) => crowdAndMine(client), timeout: 30_000 });

  it('an allocation reads about one object per kind, none of the crowd', async () => {
    await newClaim(tc.client, 'first');
    const client = testClient(tc.kubeconfig);
    const from = tc.server.log.entries.length;
    expect(await allocate(makeCtx(client), R.IPClaim, 'first')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'first')).toBe('10.8.0.1');
    // Its own address (none yet) and the pool's waiting claims (itself).
    expect(listed(client, 'ipaddresses')).toBe(0);
    expect(listed(client, 'ipclaims')).toBe(1);
    expect(await indexesOf(tc.client)).toEqual({ first: '10.8.0.1' });
    expect(await addressNameOf(tc.client, 'first')).toBe(ipAddressName('mine', '10.8.0.1'));
    // The pool's status maps the address before the claim's status names it.
    const writes = tc.server.log.entries
      .slice(from)
      .filter((e) => e.resource === 'ippools/status' || e.resource === 'ipclaims/status')
      .map((e) => e.resource);
    expect(writes).toEqual(['ippools/status', 'ipclaims/status']);
  });

  it('a replay reads the address its status names (ADR 033); without that status, finds it by spec.claim.name', async () => {
    const client = testClient(tc.kubeconfig);
    expect(await allocate(makeCtx(client), R.IPClaim, 'first')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'first')).toBe('10.8.0.1');
    expect(client.stats.byResource.get('get ipaddresses')).toBe(1);
    expect(client.stats.byResource.get('get ippools')).toBeUndefined();
    expect(listed(client, 'ipaddresses')).toBe(0);
    expect(client.stats.writes).toBe(0);
    // A crash before its status was written: the replay finds its address by spec.claim.name.
    const claim = (await tc.client.get(R.IPClaim, NS, 'first'))!;
    await tc.client.replaceStatus(R.IPClaim, { ...claim, status: {} });
    const replay = testClient(tc.kubeconfig);
    expect(await allocate(makeCtx(replay), R.IPClaim, 'first')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'first')).toBe('10.8.0.1');
    expect(replay.stats.byResource.get('create ipaddresses')).toBeUndefined();
    expect(listed(replay, 'ipaddresses')).toBe(1);
  });

  it('an address the pool status does not map yet costs one AlreadyExists, never a duplicate', async () => {
    // What a concurrent allocation leaves between its create and its status patch.
    await newClaim(tc.client, 'inflight');
    const inflight = (await tc.client.get(R.IPClaim, NS, 'inflight'))!;
    await tc.client.create(R.IPAddress, {
      metadata: {
        name: ipAddressName('mine', '10.8.0.2'),
        namespace: NS,
        ownerReferences: [
          {
            apiVersion: 'ipam.metal3.io/v1alpha1',
            kind: 'IPClaim',
            name: 'inflight',
            uid: inflight.metadata.uid!,
          },
        ],
      },
      spec: { address: '10.8.0.2', prefix: 24, pool: { name: 'mine' }, claim: { name: 'inflight' } },
    });
    // Named to rank before 'inflight' among the waiting claims: its first plan is 10.8.0.2.
    await newClaim(tc.client, 'a-second');
    const client = testClient(tc.kubeconfig);
    expect(await allocate(makeCtx(client), R.IPClaim, 'a-second')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'a-second')).toBe('10.8.0.3');
    expect(client.stats.conflicts).toBe(1);
    // The in-flight claim finishes with the address it made.
    expect(await allocate(makeCtx(tc.client), R.IPClaim, 'inflight')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'inflight')).toBe('10.8.0.2');
    expect(await addressesOfMine(tc.client)).toEqual(['10.8.0.1', '10.8.0.2', '10.8.0.3']);
    expect(await indexesOf(tc.client)).toEqual({
      first: '10.8.0.1',
      inflight: '10.8.0.2',
      'a-second': '10.8.0.3',
    });
  });

  it('status entries no address backs: exhaustion only from the full lists, and the status mended', async () => {
    await setPoolIndexes(tc.client, {
      ...(await indexesOf(tc.client)),
      ghost1: '10.8.0.4',
      ghost2: '10.8.0.5',
    });
    await newClaim(tc.client, 'fourth');
    const client = testClient(tc.kubeconfig);
    expect(await allocate(makeCtx(client), R.IPClaim, 'fourth')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'fourth')).toBe('10.8.0.4');
    const claim = (await tc.client.get(R.IPClaim, NS, 'fourth'))!;
    expect((claim.status as { errorMessage?: string }).errorMessage).toBeUndefined();
    expect(await indexesOf(tc.client)).toEqual({
      first: '10.8.0.1',
      inflight: '10.8.0.2',
      'a-second': '10.8.0.3',
      fourth: '10.8.0.4',
    });
    // Confirmed from every address of the namespace, the crowd's included.
    expect(listed(client, 'ipaddresses')).toBeGreaterThanOrEqual(40);
  });

  it("the claim's own stale entry, dropped by the mend, is written again with its address", async () => {
    // One address; the status says this claim and a ghost hold it, and no IPAddress backs either:
    // planned from the map the pool looks full, the full lists mend the map (both entries go) and
    // the claim takes the address — whose entry must then be recorded, not skipped as present.
    await tc.client.create(
      R.IPPool,
      pool('solo', { pools: [{ start: '10.7.0.1', end: '10.7.0.1' }], prefix: 24 }),
    );
    const p = (await tc.client.get(R.IPPool, NS, 'solo'))!;
    await tc.client.replaceStatus(R.IPPool, {
      ...p,
      status: { indexes: { only: '10.7.0.1', ghost: '10.7.0.1' } },
    });
    await newClaim(tc.client, 'only', 'solo');
    expect(await allocate(makeCtx(tc.client), R.IPClaim, 'only')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'only')).toBe('10.7.0.1');
    expect(await indexesOf(tc.client, 'solo')).toEqual({ only: '10.7.0.1' });
  });

  it('a status lost (restored without it): a few AlreadyExists, then full lists rebuild it', async () => {
    await setPoolIndexes(tc.client, {});
    await newClaim(tc.client, 'fifth');
    const client = testClient(tc.kubeconfig);
    expect(await allocate(makeCtx(client), R.IPClaim, 'fifth')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'fifth')).toBe('10.8.0.5');
    expect(client.stats.conflicts).toBe(3);
    expect(Object.keys(await indexesOf(tc.client)).sort()).toEqual([
      'a-second',
      'fifth',
      'first',
      'fourth',
      'inflight',
    ]);
    expect(await addressesOfMine(tc.client)).toEqual([
      '10.8.0.1',
      '10.8.0.2',
      '10.8.0.3',
      '10.8.0.4',
      '10.8.0.5',
    ]);
  });

  it('the pool now full: the next claim gets the sticky "Exhausted IP Pools" error', async () => {
    await newClaim(tc.client, 'sixth');
    expect(await allocate(makeCtx(tc.client), R.IPClaim, 'sixth')).toMatchObject({ kind: 'terminal' });
    const claim = (await tc.client.get(R.IPClaim, NS, 'sixth'))!;
    expect((claim.status as { errorMessage?: string }).errorMessage).toBe('Exhausted IP Pools');
  });

  it("a live pool's reconcile rebuilds a drifted status from its addresses", async () => {
    await setPoolIndexes(tc.client, { first: '10.8.0.1', stale: '10.8.0.9' });
    expect(await allocate(makeCtx(tc.client), R.IPPool, 'mine')).toMatchObject({ kind: 'done' });
    expect(await indexesOf(tc.client)).toEqual({
      first: '10.8.0.1',
      inflight: '10.8.0.2',
      'a-second': '10.8.0.3',
      fourth: '10.8.0.4',
      fifth: '10.8.0.5',
    });
  });

  it('a release finds the address by spec.claim.name and frees its entry', async () => {
    await tc.client.delete(R.IPClaim, NS, 'first');
    const client = testClient(tc.kubeconfig);
    expect(await allocate(makeCtx(client), R.IPClaim, 'first')).toMatchObject({ kind: 'done' });
    expect(await tc.client.get(R.IPClaim, NS, 'first')).toBeUndefined();
    expect(await addressesOfMine(tc.client)).toEqual(['10.8.0.2', '10.8.0.3', '10.8.0.4', '10.8.0.5']);
    expect(await indexesOf(tc.client)).not.toHaveProperty('first');
    expect(listed(client, 'ipaddresses')).toBe(1);
  });

  it('asks the server with field selectors', () => {
    const selectors = ipSelectors(tc);
    expect(selectors).toContain('ipaddresses?spec.claim.name=first');
    expect(selectors).toContain('ipclaims?spec.pool.name=mine,status.address.name=');
  });
});

describe("IPAM CRDs without selectableFields (ip-address-manager's own)", () => {
  const tc = useUpstreamIpamCluster((client) =>
    client.create(R.Metal3DataTemplate, { metadata: { name: 'tpl', namespace: NS }, spec: {} }),
  );

  it('lists everything after one refused request per kind, and allocates the same lowest addresses', async () => {
    const client = testClient(tc.kubeconfig);
    const ctx = makeCtx(client);
    const from = tc.server.log.entries.length;
    for (const name of ['a', 'b', 'c']) {
      await newClaim(tc.client, name);
      expect(await allocate(ctx, R.IPClaim, name)).toMatchObject({ kind: 'done' });
    }
    expect(await addressesOfMine(tc.client)).toEqual(['10.8.0.1', '10.8.0.2', '10.8.0.3']);
    expect(listed(client, 'ipaddresses')).toBeGreaterThanOrEqual(3 * 40);
    // Remembered per client: the first allocation's selectors only (one or both kinds).
    const refused = tc.server.log.entries
      .slice(from)
      .filter((e) => e.status === 400)
      .map((e) => e.resource);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeLessThanOrEqual(2);
    expect(refused.every((r) => r === 'ipaddresses' || r === 'ipclaims')).toBe(true);
  });

  it("the refusal is per kind: the same client's index allocation still reads narrowly", async () => {
    await createClaim(tc.client, 'claim-1', 'tpl');
    const client = testClient(tc.kubeconfig);
    const ctx = makeCtx(client);
    await newClaim(tc.client, 'd');
    expect(await allocate(ctx, R.IPClaim, 'd')).toMatchObject({ kind: 'done' });
    expect(await allocate(ctx, R.Metal3DataClaim, 'claim-1')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'claim-1')).toBe(0);
    const dataLists = tc.server.log.entries.filter(
      (e) => e.verb === 'list' && e.resource.startsWith('metal3data'),
    );
    expect(dataLists.length).toBeGreaterThan(0);
    expect(dataLists.every((e) => e.status === 200 && e.path.includes('fieldSelector'))).toBe(true);
  });
});

describe('IPAM CRDs from ip-address-manager, patched with infra/ipam (kubectl patch --type=json)', () => {
  const tc = useUpstreamIpamCluster();

  it.runIf(kubectlAvailable())('the shipped patches make the reads narrow', async () => {
    const kubeconfig = join(mkdtempSync(join(tmpdir(), 'metal3fn-ipam-')), 'kubeconfig');
    writeFileSync(kubeconfig, tc.kubeconfig);
    for (const { path, crd } of selectableFieldPatches())
      await kubectl(kubeconfig, ['patch', 'crd', crd, '--type=json', '--patch-file', join(ROOT, path)]);
    await newClaim(tc.client, 'first');
    const client = testClient(tc.kubeconfig);
    const from = tc.server.log.entries.length;
    expect(await allocate(makeCtx(client), R.IPClaim, 'first')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'first')).toBe('10.8.0.1');
    expect(listed(client, 'ipclaims')).toBe(1);
    expect(tc.server.log.entries.slice(from).filter((e) => e.status === 400)).toEqual([]);
  });

  it.runIf(kubectlAvailable())(
    'a burst on their IPPool (it prunes status.allocating) ranks by its page: one pruned join per process',
    async () => {
      await tc.client.create(
        R.IPPool,
        pool('wide', { pools: [{ start: '10.7.0.1', end: '10.7.0.200' }], prefix: 24 }),
      );
      const names = Array.from({ length: PENDING_PAGE + 4 }, (_, i) => `wide-${String(i).padStart(2, '0')}`);
      for (const n of names) await newClaim(tc.client, n, 'wide');
      // The server's default (Warn), as the product writes: this CRD lacks status.allocating on
      // purpose, and the product must notice the field pruned, not see the write refused.
      const client = testClient(tc.kubeconfig, { fieldValidation: 'Warn' });
      const ctx = makeCtx(client);
      const from = tc.server.log.entries.length;
      for (const n of [...names].reverse())
        expect(await allocate(ctx, R.IPClaim, n)).toMatchObject({ kind: 'done' });
      const joins = tc.server.log.entries
        .slice(from)
        .filter((e) => e.resource === 'ippools/status' && e.verb === 'patch');
      // One patch per allocation (its index), plus the one join that found the field pruned.
      expect(joins).toHaveLength(names.length + 1);
      const addresses = (await client.list(R.IPAddress, NS)).items
        .filter((a) => (a.spec as { pool: { name: string } }).pool.name === 'wide')
        .map((a) => (a.spec as { address: string }).address);
      expect(new Set(addresses).size).toBe(names.length);
      expect(listed(client, 'ipclaims')).toBeLessThanOrEqual(names.length * PENDING_PAGE);
    },
  );
});
