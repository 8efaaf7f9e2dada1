/**
 * A burst (more claims waiting on one template than a page holds) is ranked through the
 * template's registry of claims being allocated, not by listing the backlog (ADR 012): reads stay
 * bounded by the page, ranks come from the join's response, entries leave with the allocation,
 * stale entries are removed, and the indexes stay dense and unique.
 */

import { describe, expect, it } from 'vitest';
import { BATCH_CLAIMS } from '../../../functions/allocate-index/batch.ts';
import { join, PENDING_PAGE, STALE_ENTRY_MS } from '../../../shared/allocation/registry.ts';
import { R, type Resource } from '../../../shared/api/resources.ts';
import { FINALIZER, REQUESTED_IP_ANNOTATION } from '../../../shared/api/wellknown.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { testClient } from '../../helpers/cluster.ts';
import { addressOf, allocate, createClaim, indexOf, makeCtx, NS, pool } from '../../helpers/data.ts';
import { useDataCluster } from './use-data-cluster.ts';

const TEMPLATE = 'burst';
/** More waiting claims than a page: every allocation below is a burst one. */
const WAITING = PENDING_PAGE + 8;
const claimName = (i: number) => `c-${String(i).padStart(2, '0')}`;

const listed = (c: KubeClient, plural: string) => c.stats.listedByResource.get(plural) ?? 0;
const template = async (c: KubeClient) => (await c.get(R.Metal3DataTemplate, NS, TEMPLATE))!;
const registry = async (c: KubeClient) =>
  ((await template(c)).status as { allocating?: Record<string, string> } | undefined)?.allocating ?? {};
const indexesOf = async (c: KubeClient) =>
  (await c.list(R.Metal3Data, NS)).items
    .map((d) => (d.spec as { index: number }).index)
    .sort((a, b) => a - b);
const waits = async () => true;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
/** An entry as a claim's join would leave it (a crash before its allocation), at a chosen time. */
const putEntryOn = (c: KubeClient, kind: Resource, owner: string, name: string, at: string) =>
  c.patch(kind, NS, owner, { status: { allocating: { [name]: at } } }, 'merge', { status: true });
/** A claim as allocateIndex leaves it after joining (its finalizer, its entry), then deleted. */
async function joinedThenDeleted(
  c: KubeClient,
  kind: Resource,
  finalizer: string,
  ownerKind: Resource,
  owner: string,
  name: string,
): Promise<void> {
  const claim = (await c.get<KubeObject>(kind, NS, name))!;
  await c.replace(kind, { ...claim, metadata: { ...claim.metadata, finalizers: [finalizer] } });
  await putEntryOn(c, ownerKind, owner, name, ago(1000));
  await c.delete(kind, NS, name);
}
const putEntry = (c: KubeClient, name: string, at: string) =>
  putEntryOn(c, R.Metal3DataTemplate, TEMPLATE, name, at);

describe('index allocation in a burst', () => {
  const tc = useDataCluster({
    template: { metadata: { name: TEMPLATE, namespace: NS }, spec: {} },
    seed: async ({ client }) => {
      for (let i = 0; i < WAITING; i++) await createClaim(client, claimName(i), TEMPLATE);
    },
    timeout: 30_000,
  });

  it('joins the registry, takes the lowest free index, leaves in the allocation patch; reads one page', async () => {
    const client = testClient(tc.kubeconfig);
    const logged = tc.server.log.entries.length;
    // The last by name: ranked by name among the backlog it would take index WAITING-1.
    const last = claimName(WAITING - 1);
    expect(await allocate(makeCtx(client), R.Metal3DataClaim, last)).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, last)).toBe(0);
    expect(listed(client, 'metal3dataclaims')).toBe(PENDING_PAGE);
    expect(listed(client, 'metal3datas')).toBeLessThanOrEqual(PENDING_PAGE);
    expect(await registry(tc.client)).toEqual({});
    // Joined with one patch, left in the patch that maps the index.
    const statusWrites = tc.server.log.entries
      .slice(logged)
      .filter((e) => e.resource === 'metal3datatemplates/status')
      .map((e) => e.verb);
    expect(statusWrites).toEqual(['patch', 'patch']);
    expect((await template(tc.client)).status).toMatchObject({ indexes: { '0': last } });
  });

  it('counts the claims that joined before it and are still unserved, in the server order', async () => {
    const ctx = makeCtx(tc.client);
    // Two allocations in flight: joined, not created yet.
    await join(tc.client, R.Metal3DataTemplate, await template(tc.client), claimName(0), new Date(), waits);
    await join(tc.client, R.Metal3DataTemplate, await template(tc.client), claimName(1), new Date(), waits);
    const conflicts = tc.client.stats.conflicts;
    // While a burst is under way (entries in the registry) a claim lists its own Metal3Data only.
    const fresh = testClient(tc.kubeconfig);
    expect(await allocate(makeCtx(fresh), R.Metal3DataClaim, claimName(2))).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, claimName(2))).toBe(3);
    expect(listed(fresh, 'metal3dataclaims')).toBe(0);
    // The two in flight finish: the first joined takes the first free index, the second the next.
    expect(await allocate(ctx, R.Metal3DataClaim, claimName(0))).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, claimName(0))).toBe(1);
    expect(await allocate(ctx, R.Metal3DataClaim, claimName(1))).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, claimName(1))).toBe(2);
    expect(tc.client.stats.conflicts).toBe(conflicts);
    expect(await registry(tc.client)).toEqual({});
    expect(await indexesOf(tc.client)).toEqual([0, 1, 2, 3]);
  });

  it('an old entry whose claim is gone is removed and not counted; one still waiting is kept and counted', async () => {
    await putEntry(tc.client, 'ghost', ago(STALE_ENTRY_MS + 60_000));
    await putEntry(tc.client, claimName(3), ago(STALE_ENTRY_MS + 30_000));
    expect(await allocate(makeCtx(tc.client), R.Metal3DataClaim, claimName(4))).toMatchObject({
      kind: 'done',
    });
    expect(await indexOf(tc.client, claimName(4))).toBe(5); // c-03 is ahead (index 4 is its free slot); the ghost is not
    expect(Object.keys(await registry(tc.client))).toEqual([claimName(3)]);
    expect(await allocate(makeCtx(tc.client), R.Metal3DataClaim, claimName(3))).toMatchObject({
      kind: 'done',
    });
    expect(await indexOf(tc.client, claimName(3))).toBe(4);
    expect(await registry(tc.client)).toEqual({});
  });

  it('a passing error on the join is retried at once: the allocation finishes in one delivery', async () => {
    await putEntry(tc.client, claimName(9), ago(0)); // a burst under way: c-08 joins behind c-09
    // The join's patch fails twice (409, then 503), then passes.
    tc.server.faults.failNext({ verb: 'patch', resource: 'metal3datatemplates/status' }, 409);
    tc.server.faults.failNext({ verb: 'patch', resource: 'metal3datatemplates/status' }, 503);
    expect(await allocate(makeCtx(tc.client), R.Metal3DataClaim, claimName(8))).toMatchObject({
      kind: 'done',
    });
    expect(await indexOf(tc.client, claimName(8))).toBe(7);
    expect(Object.keys(await registry(tc.client))).toEqual([claimName(9)]);
    tc.server.faults.clear();
    expect(await allocate(makeCtx(tc.client), R.Metal3DataClaim, claimName(9))).toMatchObject({
      kind: 'done',
    });
    expect(await indexOf(tc.client, claimName(9))).toBe(6);
  });

  it("the template's reconcile drops old entries of claims that no longer wait, keeps young ones", async () => {
    await putEntry(tc.client, 'gone-long-ago', ago(STALE_ENTRY_MS + 1000));
    await putEntry(tc.client, claimName(2), ago(STALE_ENTRY_MS + 1000)); // served above
    await putEntry(tc.client, claimName(6), ago(STALE_ENTRY_MS + 1000)); // still waiting
    await putEntry(tc.client, 'just-joined', ago(0)); // its claim may postdate the list
    expect(await allocate(makeCtx(tc.client), R.Metal3DataTemplate, TEMPLATE)).toMatchObject({
      kind: 'done',
    });
    expect(Object.keys(await registry(tc.client)).sort()).toEqual([claimName(6), 'just-joined']);
    await tc.client.patch(
      R.Metal3DataTemplate,
      NS,
      TEMPLATE,
      { status: { allocating: { [claimName(6)]: null, 'just-joined': null } } },
      'merge',
      { status: true },
    );
  });

  it('a claim deleted after it joined (before its allocation) is released out of the registry', async () => {
    const name = claimName(7);
    await joinedThenDeleted(
      tc.client,
      R.Metal3DataClaim,
      FINALIZER.dataClaim,
      R.Metal3DataTemplate,
      TEMPLATE,
      name,
    );
    expect(await allocate(makeCtx(tc.client), R.Metal3DataClaim, name)).toMatchObject({ kind: 'done' });
    expect(await tc.client.get(R.Metal3DataClaim, NS, name)).toBeUndefined();
    expect(await registry(tc.client)).toEqual({});
  });

  it('a claim that joined and then fails for good leaves the registry', async () => {
    // Joined by a delivery that crashed; then the template is deleted (its finalizer holds it).
    await putEntry(tc.client, claimName(5), ago(1000));
    await tc.client.delete(R.Metal3DataTemplate, NS, TEMPLATE);
    const r = await allocate(makeCtx(tc.client), R.Metal3DataClaim, claimName(5));
    expect(r).toMatchObject({ kind: 'terminal' });
    expect(await registry(tc.client)).toEqual({});
    const claim = (await tc.client.get<KubeObject>(R.Metal3DataClaim, NS, claimName(5)))!;
    expect((claim.status as { errorMessage?: string }).errorMessage).toMatch(/being deleted/);
    expect(await indexesOf(tc.client)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

describe('address allocation in a burst', () => {
  const POOL = 'burst-pool';
  const ipClaim = (i: number) => `ip-${String(i).padStart(2, '0')}`;
  const poolStatus = async (c: KubeClient) =>
    ((await c.get(R.IPPool, NS, POOL))!.status ?? {}) as {
      allocating?: Record<string, string>;
      indexes?: Record<string, string>;
    };
  const tc = useDataCluster({
    seed: async ({ client }) => {
      await client.create(
        R.IPPool,
        pool(POOL, { pools: [{ start: '10.6.0.1', end: '10.6.0.100' }], prefix: 24 }),
      );
      for (let i = 0; i < WAITING; i++)
        await client.create(R.IPClaim, {
          metadata: { name: ipClaim(i), namespace: NS },
          spec: { pool: { name: POOL } },
        });
    },
    timeout: 30_000,
  });

  it('joins the pool registry, takes the lowest free address, leaves with its index; reads one page', async () => {
    const client = testClient(tc.kubeconfig);
    const last = ipClaim(WAITING - 1);
    expect(await allocate(makeCtx(client), R.IPClaim, last)).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, last)).toBe('10.6.0.1');
    expect(listed(client, 'ipclaims')).toBe(PENDING_PAGE);
    expect(await poolStatus(tc.client)).toMatchObject({ indexes: { [last]: '10.6.0.1' } });
    expect((await poolStatus(tc.client)).allocating ?? {}).toEqual({});
  });

  it('counts the claims that joined before it and are still unserved', async () => {
    const ctx = makeCtx(tc.client);
    const poolNow = async () => (await tc.client.get(R.IPPool, NS, POOL))!;
    await join(tc.client, R.IPPool, await poolNow(), ipClaim(0), new Date(), waits);
    await join(tc.client, R.IPPool, await poolNow(), ipClaim(1), new Date(), waits);
    const fresh = testClient(tc.kubeconfig);
    expect(await allocate(makeCtx(fresh), R.IPClaim, ipClaim(2))).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, ipClaim(2))).toBe('10.6.0.4');
    expect(listed(fresh, 'ipclaims')).toBe(0);
    expect(await allocate(ctx, R.IPClaim, ipClaim(0))).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, ipClaim(0))).toBe('10.6.0.2');
    expect(await allocate(ctx, R.IPClaim, ipClaim(1))).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, ipClaim(1))).toBe('10.6.0.3');
    expect((await poolStatus(tc.client)).allocating ?? {}).toEqual({});
  });

  it('an IPClaim deleted after it joined (before its allocation) is released out of the registry', async () => {
    const name = ipClaim(4);
    await joinedThenDeleted(tc.client, R.IPClaim, FINALIZER.ipClaim, R.IPPool, POOL, name);
    expect(await allocate(makeCtx(tc.client), R.IPClaim, name)).toMatchObject({ kind: 'done' });
    expect(await tc.client.get(R.IPClaim, NS, name)).toBeUndefined();
    expect((await poolStatus(tc.client)).allocating ?? {}).toEqual({});
  });

  it('a claim that joined and then fails for good (its requested address is outside the pool) leaves', async () => {
    await putEntryOn(tc.client, R.IPPool, POOL, ipClaim(3), ago(1000));
    const c = (await tc.client.get<KubeObject>(R.IPClaim, NS, ipClaim(3)))!;
    c.metadata.annotations = { [REQUESTED_IP_ANNOTATION]: '10.99.0.1' };
    await tc.client.replace(R.IPClaim, c);
    expect(await allocate(makeCtx(tc.client), R.IPClaim, ipClaim(3))).toMatchObject({ kind: 'terminal' });
    expect((await poolStatus(tc.client)).allocating ?? {}).toEqual({});
  });
});

describe("delivered in its template's or pool's FIFO group (the queued runtimes)", () => {
  const POOL = 'fifo-pool';
  const tc = useDataCluster({
    template: { metadata: { name: TEMPLATE, namespace: NS }, spec: {} },
    seed: async ({ client }) => {
      await client.create(
        R.IPPool,
        pool(POOL, { pools: [{ start: '10.5.0.1', end: '10.5.0.100' }], prefix: 24 }),
      );
      for (let i = 0; i < WAITING; i++) {
        await createClaim(client, claimName(i), TEMPLATE);
        await client.create(R.IPClaim, {
          metadata: { name: `ip-${i}`, namespace: NS },
          spec: { pool: { name: POOL } },
        });
      }
    },
    timeout: 30_000,
  });
  const inGroup = (client: KubeClient, kind: string, owner: string) => ({
    ...makeCtx(client),
    serializedBy: { kind, namespace: NS, name: owner },
  });
  const statusPatches = (from: number, resource: string) =>
    tc.server.log.entries.slice(from).filter((e) => e.resource === resource && e.verb === 'patch').length;

  it('a claim takes the lowest free index: no join; its batch serves no claim without the finalizer', async () => {
    const client = testClient(tc.kubeconfig);
    const from = tc.server.log.entries.length;
    const last = claimName(WAITING - 1);
    expect(
      await allocate(inGroup(client, 'Metal3DataTemplate', TEMPLATE), R.Metal3DataClaim, last),
    ).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, last)).toBe(0);
    // One page of the backlog, the batch's (ADR 033): these claims lack the claim finalizer.
    expect(listed(client, 'metal3dataclaims')).toBe(BATCH_CLAIMS + 1);
    expect((await tc.client.list(R.Metal3Data, NS)).items).toHaveLength(1);
    expect(statusPatches(from, 'metal3datatemplates/status')).toBe(1); // the allocation's own
  });

  it('still leaves room for what other runtimes have in flight (the registry)', async () => {
    await putEntry(tc.client, claimName(0), ago(0)); // joined by a concurrent, unserialized allocator
    const ctx = inGroup(tc.client, 'Metal3DataTemplate', TEMPLATE);
    expect(await allocate(ctx, R.Metal3DataClaim, claimName(1))).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, claimName(1))).toBe(2);
    expect(await allocate(makeCtx(tc.client), R.Metal3DataClaim, claimName(0))).toMatchObject({
      kind: 'done',
    });
    expect(await indexOf(tc.client, claimName(0))).toBe(1);
    expect(await registry(tc.client)).toEqual({});
  });

  it('an IPClaim takes the lowest free address: no join; its batch serves no claim without the finalizer', async () => {
    const client = testClient(tc.kubeconfig);
    const from = tc.server.log.entries.length;
    expect(await allocate(inGroup(client, 'IPPool', POOL), R.IPClaim, `ip-${WAITING - 1}`)).toMatchObject({
      kind: 'done',
    });
    expect(await addressOf(tc.client, `ip-${WAITING - 1}`)).toBe('10.5.0.1');
    // One page of the backlog, the batch's (ADR 033): these claims lack the IPAM finalizer.
    expect(listed(client, 'ipclaims')).toBe(BATCH_CLAIMS + 1);
    expect((await tc.client.list(R.IPAddress, NS)).items).toHaveLength(1);
    expect(statusPatches(from, 'ippools/status')).toBe(1);
  });

  it('another group (a claim grouped by itself) is not taken for serialized', async () => {
    const client = testClient(tc.kubeconfig);
    const ctx = inGroup(client, 'Metal3DataClaim', claimName(2));
    expect(await allocate(ctx, R.Metal3DataClaim, claimName(2))).toMatchObject({ kind: 'done' });
    expect(listed(client, 'metal3dataclaims')).toBe(PENDING_PAGE);
  });
});
