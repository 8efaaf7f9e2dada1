/**
 * The release path (issue 6) against the embedded API server: deleting the Metal3DataClaims of
 * rendered machines leaves no Metal3Data, IPClaim, IPAddress or data Secret, empties the template
 * and pool status entries, and the freed index and address are reused by the next claim.
 */
import { describe, expect, it } from 'vitest';
import { R, type Resource } from '../../../shared/api/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { MAX_POOL_GETS } from '../../../shared/release/dependents.ts';
import { converge, createMachine, NS, names, pool, release, seedTemplate } from '../../helpers/data.ts';
import { useDataCluster } from './use-data-cluster.ts';

const tc = useDataCluster({
  pools: true,
  template: seedTemplate('nodepool-1'),
  seed: async ({ client, ctx }) => {
    for (const m of ['m-a', 'm-b', 'm-c']) await createMachine(client, m, 'nodepool-1');
    await converge(ctx);
  },
});

const list = async <T extends KubeObject>(t: Resource<T>) => (await tc.client.list(t, NS)).items;
const dataSecrets = async () =>
  (await list(R.Secret))
    .filter((s) => s.type === 'infrastructure.cluster.x-k8s.io/secret')
    .map((s) => s.metadata.name!);

describe('release', () => {
  it('starts from three rendered machines', async () => {
    expect(names(await list(R.Metal3Data))).toEqual(['nodepool-1-0', 'nodepool-1-1', 'nodepool-1-2']);
    expect(await list(R.IPClaim)).toHaveLength(6);
    expect(await list(R.IPAddress)).toHaveLength(6);
    expect(await dataSecrets()).toHaveLength(6);
  });

  it('deleting one claim (index 1) frees everything of it in one release, nothing else', async () => {
    const data1 = (await tc.client.get(R.Metal3Data, NS, 'nodepool-1-1'))!;
    const m = (data1.spec as any).claim.name as string;
    const addr = (await list(R.IPAddress)).filter((a) =>
      (a.spec as any).claim.name.startsWith('nodepool-1-1-'),
    );
    expect(addr).toHaveLength(2);
    await tc.client.delete(R.Metal3DataClaim, NS, m);
    tc.server.log.reset();
    // The claim is held by our finalizer until the release runs.
    expect((await tc.client.get(R.Metal3DataClaim, NS, m))?.metadata.deletionTimestamp).toBeDefined();
    expect(await release(tc.ctx, R.Metal3DataClaim, m)).toMatchObject({ kind: 'done' });
    // Explicit, not left to garbage collection: the release itself deleted both Secrets, both
    // IPClaims and both IPAddresses.
    expect(tc.server.log.count('delete', 'secrets')).toBe(2);
    expect(tc.server.log.count('delete', 'ipclaims')).toBe(2);
    expect(tc.server.log.count('delete', 'ipaddresses')).toBe(2);
    // Found by name (and the addresses by spec.claim.name), not by listing the namespace: the
    // pools (two) are the only list besides the claim's Metal3Data and addresses.
    expect(tc.server.log.count('list', 'secrets')).toBe(0);
    expect(tc.server.log.count('list', 'ipclaims')).toBe(0);
    // The template's and the pools' entries go by JSON patches whose tests check them (ADR 035):
    // neither is read whole nor written whole.
    for (const r of ['metal3datatemplates', 'ippools']) {
      expect(tc.server.log.count('get', r), r).toBe(0);
      expect(tc.server.log.count('update', `${r}/status`), r).toBe(0);
    }
    expect(tc.server.log.count('patch', 'metal3datatemplates/status')).toBe(1);
    expect(tc.server.log.count('patch', 'ippools/status')).toBe(2);
    for (const e of tc.server.log.entries.filter((x) => x.verb === 'list' && x.resource !== 'ippools'))
      expect(e.path, e.path).toContain('fieldSelector');
    tc.server.settle();
    expect(await tc.client.get(R.Metal3DataClaim, NS, m)).toBeUndefined();
    expect(names(await list(R.Metal3Data))).toEqual(['nodepool-1-0', 'nodepool-1-2']);
    expect(names(await list(R.IPClaim)).filter((n) => n.startsWith('nodepool-1-1-'))).toEqual([]);
    expect(await list(R.IPClaim)).toHaveLength(4);
    const left = await list(R.IPAddress);
    expect(left).toHaveLength(4);
    for (const a of addr) expect(left.map((x) => x.metadata.name)).not.toContain(a.metadata.name);
    expect((await dataSecrets()).sort()).toEqual(
      [`m-a-metadata-0`, `m-a-networkdata-0`, `m-c-metadata-2`, `m-c-networkdata-2`].sort(),
    );
    const t = (await tc.client.get(R.Metal3DataTemplate, NS, 'nodepool-1'))!;
    expect((t.status as any).indexes).toEqual({ '0': 'm-a', '2': 'm-c' });
    expect((t.status as any).dataNames).toEqual({ 'm-a': 'nodepool-1-0', 'm-c': 'nodepool-1-2' });
    const p = (await tc.client.get(R.IPPool, NS, 'pool-1'))!;
    expect(Object.keys((p.status as any).indexes).sort()).toEqual([
      'nodepool-1-0-pool-1',
      'nodepool-1-2-pool-1',
    ]);
  });

  it('a second delivery of the release finds nothing to do', async () => {
    const before = tc.client.stats.writes;
    await release(tc.ctx, R.Metal3DataClaim, 'm-b');
    await release(tc.ctx, R.Metal3Data, 'nodepool-1-1');
    await release(tc.ctx, R.IPClaim, 'nodepool-1-1-pool-1');
    expect(tc.client.stats.writes).toBe(before);
  });

  it('the freed index and address are reused by the next claim', async () => {
    await createMachine(tc.client, 'm-d', 'nodepool-1');
    await converge(tc.ctx);
    const d = (await tc.client.get(R.Metal3Data, NS, 'nodepool-1-1'))!;
    expect((d.spec as any).claim.name).toBe('m-d');
    expect((d.status as any).ready).toBe(true);
    const a = (await list(R.IPAddress)).find((x) => (x.spec as any).claim.name === 'nodepool-1-1-pool-1')!;
    // pool-1 handed out .10, .11, .12 to the first three machines; .11 (m-b's) is free again.
    expect((a.spec as any).address).toBe('192.168.0.11');
    expect(await tc.client.get(R.Secret, NS, 'm-d-metadata-1')).toBeDefined();
  });

  it(`with more than ${MAX_POOL_GETS} pools in the namespace, one IPClaim list instead of a GET per pool`, async () => {
    for (let i = 0; i < MAX_POOL_GETS; i++)
      await tc.client.create(
        R.IPPool,
        pool(`extra-${i}`, { pools: [{ start: '10.3.0.1', end: '10.3.0.9' }] }),
      );
    await tc.client.delete(R.Metal3DataClaim, NS, 'm-c');
    tc.server.log.reset();
    expect(await release(tc.ctx, R.Metal3DataClaim, 'm-c')).toMatchObject({ kind: 'done' });
    expect(tc.server.log.count('list', 'ipclaims')).toBe(1);
    expect(tc.server.log.count('get', 'ipclaims')).toBeLessThan(MAX_POOL_GETS);
    expect(tc.server.log.count('delete', 'ipclaims')).toBe(2);
    tc.server.settle();
    expect(names(await list(R.IPClaim)).filter((n) => n.startsWith('nodepool-1-2-'))).toEqual([]);
    expect((await dataSecrets()).filter((n) => n.startsWith('m-c-'))).toEqual([]);
    for (let i = 0; i < MAX_POOL_GETS; i++) await tc.client.delete(R.IPPool, NS, `extra-${i}`);
  });

  it('deleting every claim leaves no Metal3Data, IPClaim, IPAddress or data Secret', async () => {
    for (const c of await list(R.Metal3DataClaim))
      await tc.client.delete(R.Metal3DataClaim, NS, c.metadata.name!);
    // The relay would deliver one message per deleting object; deliver them all.
    await Promise.all(
      (await list(R.Metal3DataClaim)).map((c) => release(tc.ctx, R.Metal3DataClaim, c.metadata.name!)),
    );
    tc.server.settle();
    expect(await list(R.Metal3DataClaim)).toEqual([]);
    expect(await list(R.Metal3Data)).toEqual([]);
    expect(await list(R.IPClaim)).toEqual([]);
    expect(await list(R.IPAddress)).toEqual([]);
    expect(await dataSecrets()).toEqual([]);
    const t = (await tc.client.get(R.Metal3DataTemplate, NS, 'nodepool-1'))!;
    expect((t.status as any).indexes).toEqual({});
    expect((t.status as any).dataNames).toEqual({});
    for (const p of await list(R.IPPool)) expect((p.status as any)?.indexes ?? {}).toEqual({});
  });

  it('a Metal3Data deleted on its own (claim gone) releases its IPClaims and Secrets and goes', async () => {
    await createMachine(tc.client, 'm-e', 'nodepool-1');
    await converge(tc.ctx);
    const d = (await list(R.Metal3Data))[0]!;
    expect(d.metadata.name).toBe('nodepool-1-0');
    // The claim vanishes without its release (e.g. its finalizer was stripped by hand).
    await tc.client.patch(R.Metal3DataClaim, NS, 'm-e', { metadata: { finalizers: null } });
    await tc.client.delete(R.Metal3DataClaim, NS, 'm-e');
    await tc.client.delete(R.Metal3Data, NS, 'nodepool-1-0');
    await release(tc.ctx, R.Metal3Data, 'nodepool-1-0');
    tc.server.settle();
    expect(await list(R.Metal3Data)).toEqual([]);
    expect(await list(R.IPClaim)).toEqual([]);
    expect(await list(R.IPAddress)).toEqual([]);
    expect(await dataSecrets()).toEqual([]);
  });
});
