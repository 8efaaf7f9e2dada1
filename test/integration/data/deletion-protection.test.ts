/**
 * Deletion protection of Metal3DataTemplates and IPPools (their finalizers) against the embedded
 * API server: a template or pool deleted while machines use it stays (terminating) until the
 * claims and data / addresses are released, then goes; new claims of a deleting template or pool
 * get a clear error and nothing is created; replays write nothing; an orphaned Metal3Data or
 * IPAddress (its claim gone without a release) does not hold the deletion for ever.
 */
import { describe, expect, it } from 'vitest';
import { envelopeOf, R, type Resource } from '../../../shared/api/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import {
  addressOf,
  allocate,
  converge,
  createClaim,
  createMachine,
  indexOf,
  NS,
  names,
  pool,
  release,
  seedTemplate,
} from '../../helpers/data.ts';
import { useDataCluster } from './use-data-cluster.ts';

const TEMPLATE_FINALIZER = 'metal3datatemplate.infrastructure.cluster.x-k8s.io';
const POOL_FINALIZER = 'ippool.ipam.metal3.io';

const tc = useDataCluster({ pools: true });

const get = (t: Resource, name: string) => tc.client.get(t, NS, name);
const list = async (t: Resource) => (await tc.client.list(t, NS)).items;
const status = (o: KubeObject | undefined) => (o?.status ?? {}) as Record<string, any>;

/** Object writes (create/update/patch/delete) of the product since the last reset, Events aside. */
function writes(): string[] {
  return tc.server.log.entries
    .filter(
      (e) => ['create', 'update', 'patch', 'delete'].includes(e.verb) && !e.resource.startsWith('events'),
    )
    .map((e) => `${e.verb} ${e.resource} ${e.name ?? ''}`);
}

/** A plain IPClaim on `poolName` (as renderData would create, without its Metal3Data owner). */
const ipClaim = (name: string, poolName: string): Promise<KubeObject> =>
  tc.client.create(envelopeOf(R.IPClaim), {
    metadata: { name, namespace: NS },
    spec: { pool: { name: poolName } },
  });

describe('Metal3DataTemplate deletion protection', () => {
  it('a template gets its finalizer (with label and owner, one write) before any Metal3Data of it exists', async () => {
    await tc.client.create(R.Metal3DataTemplate, seedTemplate('tpl-del'));
    // The template reconcile (on the template's creation) adds it; nothing else to write.
    tc.server.log.reset();
    expect(await allocate(tc.ctx, R.Metal3DataTemplate, 'tpl-del')).toEqual({ kind: 'done' });
    expect(writes()).toEqual(['update metal3datatemplates tpl-del']);
    expect((await get(R.Metal3DataTemplate, 'tpl-del'))?.metadata.finalizers).toEqual([TEMPLATE_FINALIZER]);
    tc.server.log.reset();
    expect(await allocate(tc.ctx, R.Metal3DataTemplate, 'tpl-del')).toEqual({ kind: 'done' });
    expect(writes()).toEqual([]);

    // A template the reconcile never saw: the claim path adds the finalizer (and the cluster label)
    // in one write before it creates the Metal3Data.
    await tc.client.create(R.Metal3DataTemplate, seedTemplate('tpl-unseen'));
    await createClaim(tc.client, 'unseen-claim', 'tpl-unseen');
    tc.server.log.reset();
    await allocate(tc.ctx, R.Metal3DataClaim, 'unseen-claim');
    const w = writes();
    const templateWrite = w.indexOf('update metal3datatemplates tpl-unseen');
    expect(templateWrite).toBeGreaterThanOrEqual(0);
    expect(w.filter((x) => x.startsWith('update metal3datatemplates '))).toHaveLength(1);
    expect(templateWrite).toBeLessThan(w.indexOf('create metal3datas '));
    const unseen = (await get(R.Metal3DataTemplate, 'tpl-unseen'))!;
    expect(unseen.metadata.finalizers).toEqual([TEMPLATE_FINALIZER]);
    expect(unseen.metadata.labels?.['cluster.x-k8s.io/cluster-name']).toBe('cluster');
    await tc.client.delete(R.Metal3DataClaim, NS, 'unseen-claim');
    await release(tc.ctx, R.Metal3DataClaim, 'unseen-claim');
    await tc.client.delete(R.Metal3DataTemplate, NS, 'tpl-unseen');
    await allocate(tc.ctx, R.Metal3DataTemplate, 'tpl-unseen');
    expect(await get(R.Metal3DataTemplate, 'tpl-unseen')).toBeUndefined();
  });

  it('deleting a template in use waits for its live claim, then for its Metal3Data, then goes', async () => {
    await createMachine(tc.client, 'td-a', 'tpl-del');
    await converge(tc.ctx);
    expect(names(await list(R.Metal3Data)).filter((n) => n.startsWith('tpl-del-'))).toEqual(['tpl-del-0']);
    await tc.client.delete(R.Metal3DataTemplate, NS, 'tpl-del');
    tc.server.settle();
    const deleting = (await get(R.Metal3DataTemplate, 'tpl-del'))!;
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    // Garbage collection does not take the data of a machine away meanwhile.
    expect(await get(R.Metal3Data, 'tpl-del-0')).toBeDefined();

    tc.server.log.reset();
    // It waits for the live claim: done (the claim's disappearance wakes it, no requeue), its
    // finalizer kept, nothing written, by the first reconcile or a replay.
    expect(await allocate(tc.ctx, R.Metal3DataTemplate, 'tpl-del')).toMatchObject({ kind: 'done' });
    expect(await allocate(tc.ctx, R.Metal3DataTemplate, 'tpl-del')).toMatchObject({ kind: 'done' });
    expect((await get(R.Metal3DataTemplate, 'tpl-del'))?.metadata.finalizers).toEqual([TEMPLATE_FINALIZER]);
    expect(writes()).toEqual([]);

    // The machine goes: its claim is deleting, its Metal3Data not yet released.
    await tc.client.delete(R.Metal3DataClaim, NS, 'td-a');
    tc.server.log.reset();
    const dataLeft = await allocate(tc.ctx, R.Metal3DataTemplate, 'tpl-del');
    expect(dataLeft).toMatchObject({ kind: 'requeue', afterSeconds: tc.ctx.config.safetyRequeueSeconds });
    expect((dataLeft as { reason: string }).reason).toMatch(/waiting for 1 Metal3Data.*tpl-del-0/);
    expect(writes()).toEqual([]);
    expect(await get(R.Metal3DataTemplate, 'tpl-del')).toBeDefined();

    // The release frees the data; the template's next reconcile drops its finalizer.
    await release(tc.ctx, R.Metal3DataClaim, 'td-a');
    tc.server.settle();
    expect(await get(R.Metal3Data, 'tpl-del-0')).toBeUndefined();
    // Nothing holds it now: the finalizer goes, and with it the template.
    expect(await allocate(tc.ctx, R.Metal3DataTemplate, 'tpl-del')).toMatchObject({ kind: 'done' });
    expect(await get(R.Metal3DataTemplate, 'tpl-del')).toBeUndefined();
    // Nothing of the machine is left behind.
    expect((await list(R.IPClaim)).filter((c) => c.metadata.name!.startsWith('tpl-del-'))).toEqual([]);
    expect(
      (await list(R.IPAddress)).filter((a) => (a.spec as any).claim.name.startsWith('tpl-del-')),
    ).toEqual([]);
    // A message for the template that arrives after it went does nothing.
    tc.server.log.reset();
    expect(await allocate(tc.ctx, R.Metal3DataTemplate, 'tpl-del')).toMatchObject({ kind: 'done' });
    expect(writes()).toEqual([]);
  });

  it('a new claim of a deleting template gets a clear error and no Metal3Data; the template then waits for it', async () => {
    await tc.client.create(R.Metal3DataTemplate, seedTemplate('tpl-busy'));
    await createMachine(tc.client, 'tb-a', 'tpl-busy');
    await converge(tc.ctx);
    await tc.client.delete(R.Metal3DataTemplate, NS, 'tpl-busy');

    const { claim } = await createMachine(tc.client, 'tb-b', 'tpl-busy');
    const r = await allocate(tc.ctx, R.Metal3DataClaim, 'tb-b');
    const message = `Metal3DataTemplate ${NS}/tpl-busy is being deleted: no index is allocated for a new claim`;
    expect(r).toEqual({ kind: 'terminal', reason: 'TemplateDeleting', message });
    const failed = (await get(R.Metal3DataClaim, 'tb-b'))!;
    expect(status(failed)).toEqual({ errorMessage: message });
    expect(names(await list(R.Metal3Data)).filter((n) => n.startsWith('tpl-busy-'))).toEqual(['tpl-busy-0']);
    const events = (await list(R.Event)).filter(
      (e) => (e as any).involvedObject?.uid === claim.metadata.uid && (e as any).type === 'Warning',
    );
    expect(events.map((e) => (e as any).message)).toEqual([message]);

    // Replays: no object write (the claim keeps its error; the existing machine keeps its data).
    tc.server.log.reset();
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'tb-b')).toEqual(r);
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'tb-a')).toMatchObject({ kind: 'done' });
    expect(await indexOf(tc.client, 'tb-a')).toBe(0);
    expect(writes()).toEqual([]);

    // The failed claim is live: the template waits for it as well (for tb-a's release alone it goes on waiting).
    await tc.client.delete(R.Metal3DataClaim, NS, 'tb-a');
    await release(tc.ctx, R.Metal3DataClaim, 'tb-a');
    expect(await allocate(tc.ctx, R.Metal3DataTemplate, 'tpl-busy')).toMatchObject({ kind: 'done' });
    expect((await get(R.Metal3DataTemplate, 'tpl-busy'))?.metadata.finalizers).toEqual([TEMPLATE_FINALIZER]);
    await tc.client.delete(R.Metal3DataClaim, NS, 'tb-b');
    await release(tc.ctx, R.Metal3DataClaim, 'tb-b');
    await allocate(tc.ctx, R.Metal3DataTemplate, 'tpl-busy');
    expect(await get(R.Metal3DataTemplate, 'tpl-busy')).toBeUndefined();
  });

  it('a claim that arrives before its template waits (no error) and is served once the template exists', async () => {
    await createMachine(tc.client, 'tl-a', 'tpl-late');
    tc.server.log.reset();
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'tl-a')).toEqual({
      kind: 'requeue',
      afterSeconds: tc.ctx.config.safetyRequeueSeconds,
      reason: 'Metal3DataTemplate tpl-late not found',
    });
    expect(writes()).toEqual([]);
    // The template's creation wakes the claim (shared/routing/table.ts).
    await tc.client.create(R.Metal3DataTemplate, seedTemplate('tpl-late'));
    expect(await allocate(tc.ctx, R.Metal3DataClaim, 'tl-a')).toMatchObject({ kind: 'done' });
    const renderedData = status(await get(R.Metal3DataClaim, 'tl-a')).renderedData;
    expect(renderedData?.name).toMatch(/^tpl-late-\d+$/);
    expect((await get(R.Metal3DataTemplate, 'tpl-late'))?.metadata.finalizers).toEqual([TEMPLATE_FINALIZER]);
    await tc.client.delete(R.Metal3DataClaim, NS, 'tl-a');
    await release(tc.ctx, R.Metal3DataClaim, 'tl-a');
    await tc.client.delete(R.Metal3DataTemplate, NS, 'tpl-late');
    await allocate(tc.ctx, R.Metal3DataTemplate, 'tpl-late');
    expect(await get(R.Metal3DataTemplate, 'tpl-late')).toBeUndefined();
  });

  it('a Metal3Data whose claim went without a release does not hold the template for ever', async () => {
    await tc.client.create(R.Metal3DataTemplate, seedTemplate('tpl-orphan'));
    await createMachine(tc.client, 'to-a', 'tpl-orphan');
    await converge(tc.ctx);
    const data = (await get(R.Metal3Data, 'tpl-orphan-0'))!;
    const addresses = (await list(R.IPAddress)).filter((a) =>
      (a.spec as any).claim.name.startsWith('tpl-orphan-0-'),
    );
    expect(addresses).toHaveLength(2);
    // The claim's finalizers stripped by hand, the claim deleted: no release ran.
    await tc.client.patch(R.Metal3DataClaim, NS, 'to-a', { metadata: { finalizers: null } });
    await tc.client.delete(R.Metal3DataClaim, NS, 'to-a');
    tc.server.settle();
    expect(await get(R.Metal3DataClaim, 'to-a')).toBeUndefined();
    expect((await get(R.Metal3Data, 'tpl-orphan-0'))?.metadata.uid).toBe(data.metadata.uid);

    await tc.client.delete(R.Metal3DataTemplate, NS, 'tpl-orphan');
    await allocate(tc.ctx, R.Metal3DataTemplate, 'tpl-orphan');
    tc.server.settle();
    expect(await get(R.Metal3Data, 'tpl-orphan-0')).toBeUndefined();
    for (const a of addresses) expect(await get(R.IPAddress, a.metadata.name!)).toBeUndefined();
    // Released inline; the next delivery (the Metal3Data's disappearance) drops the finalizer.
    await allocate(tc.ctx, R.Metal3DataTemplate, 'tpl-orphan');
    expect(await get(R.Metal3DataTemplate, 'tpl-orphan')).toBeUndefined();
  });
});

describe('IPPool deletion protection', () => {
  const POOL = 'pool-del';
  const SMALL = pool(POOL, { pools: [{ start: '10.7.0.10', end: '10.7.0.20' }], prefix: 24 });

  it('a pool gets its finalizer when first seen (one write), and before an address is created from it', async () => {
    await tc.client.create(R.IPPool, SMALL);
    tc.server.log.reset();
    expect(await allocate(tc.ctx, R.IPPool, POOL)).toEqual({ kind: 'done' });
    expect(writes()).toEqual([`update ippools ${POOL}`]);
    expect((await get(R.IPPool, POOL))?.metadata.finalizers).toEqual([POOL_FINALIZER]);
    tc.server.log.reset();
    expect(await allocate(tc.ctx, R.IPPool, POOL)).toEqual({ kind: 'done' });
    expect(writes()).toEqual([]);

    // A pool never seen by its own reconcile: the IPClaim path adds the finalizer first.
    await tc.client.create(
      R.IPPool,
      pool('pool-unseen', { pools: [{ start: '10.8.0.10', end: '10.8.0.20' }] }),
    );
    await ipClaim('unseen-ip', 'pool-unseen');
    tc.server.log.reset();
    await allocate(tc.ctx, R.IPClaim, 'unseen-ip');
    const w = writes();
    expect(w.indexOf('update ippools pool-unseen')).toBeGreaterThanOrEqual(0);
    expect(w.indexOf('update ippools pool-unseen')).toBeLessThan(
      w.findIndex((x) => x.startsWith('create ipaddresses')),
    );
    expect((await get(R.IPPool, 'pool-unseen'))?.metadata.finalizers).toEqual([POOL_FINALIZER]);
    await tc.client.delete(R.IPClaim, NS, 'unseen-ip');
    await release(tc.ctx, R.IPClaim, 'unseen-ip');
    await tc.client.delete(R.IPPool, NS, 'pool-unseen');
    await allocate(tc.ctx, R.IPPool, 'pool-unseen');
    expect(await get(R.IPPool, 'pool-unseen')).toBeUndefined();
  });

  it('deleting a pool in use waits for its live claims and its addresses; a new claim gets a clear error', async () => {
    await ipClaim('ip-a', POOL);
    expect(await allocate(tc.ctx, R.IPClaim, 'ip-a')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'ip-a')).toBe('10.7.0.10');
    await tc.client.delete(R.IPPool, NS, POOL);
    tc.server.settle();
    expect((await get(R.IPPool, POOL))?.metadata.deletionTimestamp).toBeDefined();
    expect(await get(R.IPAddress, `${POOL}-10-7-0-10`)).toBeDefined();

    tc.server.log.reset();
    // It waits for the live claim: done, its finalizer kept, by the first reconcile or a replay.
    expect(await allocate(tc.ctx, R.IPPool, POOL)).toMatchObject({ kind: 'done' });
    expect(await allocate(tc.ctx, R.IPPool, POOL)).toMatchObject({ kind: 'done' });
    expect((await get(R.IPPool, POOL))?.metadata.finalizers).toEqual([POOL_FINALIZER]);
    // The claim that holds an address keeps it (a replay changes nothing).
    expect(await allocate(tc.ctx, R.IPClaim, 'ip-a')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'ip-a')).toBe('10.7.0.10');
    expect(writes()).toEqual([]);

    // A new claim of the deleting pool: a clear (sticky) error, no address.
    const claim = await ipClaim('ip-b', POOL);
    const message = `IPPool ${NS}/${POOL} is being deleted: no address is allocated for a new claim`;
    expect(await allocate(tc.ctx, R.IPClaim, 'ip-b')).toEqual({
      kind: 'terminal',
      reason: 'PoolDeleting',
      message,
    });
    expect(status(await get(R.IPClaim, 'ip-b'))).toEqual({ errorMessage: message });
    expect(names(await list(R.IPAddress)).filter((n) => n.startsWith(`${POOL}-`))).toEqual([
      `${POOL}-10-7-0-10`,
    ]);
    const events = (await list(R.Event)).filter((e) => (e as any).involvedObject?.uid === claim.metadata.uid);
    expect(events.map((e) => (e as any).message)).toEqual([message]);
    tc.server.log.reset();
    // A replay leaves the failed claim alone: done, no address, its error kept (no write below).
    expect(await allocate(tc.ctx, R.IPClaim, 'ip-b')).toMatchObject({ kind: 'done' });
    expect(await addressOf(tc.client, 'ip-b')).toBeUndefined();
    expect(writes()).toEqual([]);

    // Both claims deleting, their release not run yet: the address still holds the pool.
    for (const c of ['ip-a', 'ip-b']) await tc.client.delete(R.IPClaim, NS, c);
    const addressLeft = await allocate(tc.ctx, R.IPPool, POOL);
    expect(addressLeft).toMatchObject({ kind: 'requeue', afterSeconds: tc.ctx.config.safetyRequeueSeconds });
    expect((addressLeft as { reason: string }).reason).toMatch(/waiting for 1 IPAddress.*pool-del-10-7-0-10/);
    expect(await get(R.IPPool, POOL)).toBeDefined();

    for (const c of ['ip-a', 'ip-b']) await release(tc.ctx, R.IPClaim, c);
    tc.server.settle();
    expect(await get(R.IPAddress, `${POOL}-10-7-0-10`)).toBeUndefined();
    expect(await allocate(tc.ctx, R.IPPool, POOL)).toMatchObject({ kind: 'done' });
    expect(await get(R.IPPool, POOL)).toBeUndefined();
    // A message for the pool after it went does nothing.
    tc.server.log.reset();
    expect(await allocate(tc.ctx, R.IPPool, POOL)).toMatchObject({ kind: 'done' });
    expect(writes()).toEqual([]);
  });

  it('an IPAddress whose claim went without a release does not hold the pool for ever', async () => {
    await tc.client.create(
      R.IPPool,
      pool('pool-orphan', { pools: [{ start: '10.9.0.10', end: '10.9.0.20' }] }),
    );
    await ipClaim('ip-o', 'pool-orphan');
    await allocate(tc.ctx, R.IPClaim, 'ip-o');
    await tc.client.patch(R.IPClaim, NS, 'ip-o', { metadata: { finalizers: null } });
    await tc.client.delete(R.IPClaim, NS, 'ip-o');
    tc.server.settle();
    expect(await get(R.IPAddress, 'pool-orphan-10-9-0-10')).toBeDefined();
    await tc.client.delete(R.IPPool, NS, 'pool-orphan');
    await allocate(tc.ctx, R.IPPool, 'pool-orphan');
    tc.server.settle();
    expect(await get(R.IPAddress, 'pool-orphan-10-9-0-10')).toBeUndefined();
    await allocate(tc.ctx, R.IPPool, 'pool-orphan');
    expect(await get(R.IPPool, 'pool-orphan')).toBeUndefined();
  });

  it('the pools of rendered machines carry the finalizer and are not deleted from under them', async () => {
    await tc.client.create(R.Metal3DataTemplate, seedTemplate('tpl-pools'));
    await createMachine(tc.client, 'tp-a', 'tpl-pools');
    await converge(tc.ctx);
    expect((await get(R.IPPool, 'pool-1'))?.metadata.finalizers).toEqual([POOL_FINALIZER]);
    await tc.client.delete(R.IPPool, NS, 'pool-1');
    tc.server.settle();
    await allocate(tc.ctx, R.IPPool, 'pool-1');
    const addresses = (await list(R.IPAddress)).filter((a) => (a.spec as any).pool.name === 'pool-1');
    expect(addresses.length).toBeGreaterThan(0);
    expect(status(await get(R.Metal3Data, 'tpl-pools-0')).ready).toBe(true);
    // The machine goes: its release frees the addresses, and the pool goes with the last one.
    await tc.client.delete(R.Metal3DataClaim, NS, 'tp-a');
    await release(tc.ctx, R.Metal3DataClaim, 'tp-a');
    tc.server.settle();
    // Other machines of earlier tests used pool-1 as well and are gone: nothing holds it now.
    expect((await list(R.IPAddress)).filter((a) => (a.spec as any).pool.name === 'pool-1')).toEqual([]);
    await allocate(tc.ctx, R.IPPool, 'pool-1');
    expect(await get(R.IPPool, 'pool-1')).toBeUndefined();
  });
});
