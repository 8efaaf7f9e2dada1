/**
 * Allocation under contention, against the embedded API server: 500 claims on one template from
 * 16 concurrent workers with duplicated deliveries give exactly the indexes 0..499; IPClaims on
 * one pool never share an address. The API server's create-by-name is the only arbiter.
 */
import { describe, expect, it } from 'vitest';
import { PENDING_PAGE } from '../../../shared/allocation/registry.ts';
import { R } from '../../../shared/api/resources.ts';
import { addressContention, indexContention } from '../../helpers/contention.ts';
import { NS, pool } from '../../helpers/data.ts';
import { useDataCluster } from './use-data-cluster.ts';

const tc = useDataCluster();

describe('index allocation under contention', () => {
  it('500 claims, 16 workers, 10% duplicated deliveries: dense indexes 0..499, no duplicate', async () => {
    const r = await indexContention(tc.client, { claims: 500, workers: 16, dupRate: 0.1 });
    const datas = (await tc.client.list(R.Metal3Data, NS)).items;
    expect(datas).toHaveLength(500);
    const indexes = datas.map((d) => (d.spec as { index: number }).index).sort((a, b) => a - b);
    expect(indexes).toEqual(Array.from({ length: 500 }, (_, i) => i));
    const claimsOfData = new Set(datas.map((d) => (d.spec as { claim: { name: string } }).claim.name));
    expect(claimsOfData.size).toBe(500);
    for (const d of datas) expect(d.metadata.name).toBe(`contended-${(d.spec as { index: number }).index}`);
    // Every claim points at its own Metal3Data; the template's maps agree.
    const claims = (await tc.client.list(R.Metal3DataClaim, NS)).items;
    const byClaim = new Map(datas.map((d) => [(d.spec as any).claim.name, d.metadata.name]));
    for (const c of claims) expect((c.status as any).renderedData.name).toBe(byClaim.get(c.metadata.name));
    const t = (await tc.client.get(R.Metal3DataTemplate, NS, 'contended'))!;
    expect(Object.keys((t.status as any).indexes)).toHaveLength(500);
    expect(Object.keys((t.status as any).dataNames)).toHaveLength(500);
    // Every claim that joined the burst registry left it (ADR 012).
    expect((t.status as any).allocating ?? {}).toEqual({});
    expect(r.deliveries).toBeGreaterThan(500);
    // Reads do not follow the backlog (listing it was ~560 objects per allocation here): while
    // the burst is under way a claim reads its own Metal3Data only; a page of waiting claims and
    // of unrendered Metal3Data when it starts and ends.
    expect(r.listed / r.deliveries).toBeLessThan(PENDING_PAGE / 2);
  });

  it('duplicates racing as if from two processes (no per-key serialization): still dense and unique', async () => {
    await indexContention(tc.client, {
      claims: 150,
      workers: 16,
      dupRate: 0.3,
      template: 'raced',
      crossProcess: true,
      seed: 7,
    });
    const datas = (await tc.client.list(R.Metal3Data, NS)).items.filter(
      (d) => (d.spec as any).template.name === 'raced',
    );
    expect(datas.map((d) => (d.spec as any).index).sort((a: number, b: number) => a - b)).toEqual(
      Array.from({ length: 150 }, (_, i) => i),
    );
    expect(new Set(datas.map((d) => (d.spec as any).claim.name)).size).toBe(150);
  });
});

describe('address allocation under contention', () => {
  it('120 IPClaims on one pool, 16 workers, duplicates: 120 distinct addresses, the lowest ones', async () => {
    await tc.client.create(
      R.IPPool,
      pool('busy', { pools: [{ start: '10.1.0.1', end: '10.1.0.200' }], prefix: 24 }),
    );
    await addressContention(tc.client, {
      claims: 120,
      workers: 16,
      dupRate: 0.2,
      pool: 'busy',
      crossProcess: true,
    });
    const addrs = (await tc.client.list(R.IPAddress, NS)).items.filter(
      (a) => (a.spec as any).pool.name === 'busy',
    );
    expect(addrs).toHaveLength(120);
    const ips = addrs.map((a) => (a.spec as any).address as string);
    expect(new Set(ips).size).toBe(120);
    const claimsOfAddr = new Set(addrs.map((a) => (a.spec as any).claim.name));
    expect(claimsOfAddr.size).toBe(120);
    const last = ips.map((ip) => Number(ip.split('.')[3])).sort((a, b) => a - b);
    expect(last).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    const p = (await tc.client.get(R.IPPool, NS, 'busy'))!;
    expect(Object.keys((p.status as any).indexes)).toHaveLength(120);
  });

  it('a small pool under contention: exactly as many addresses as it has, the rest get "Exhausted IP Pools"', async () => {
    await tc.client.create(
      R.IPPool,
      pool('tiny', { pools: [{ start: '10.2.0.1', end: '10.2.0.5' }], prefix: 24 }),
    );
    const names = Array.from({ length: 8 }, (_, i) => `tiny-${i}`);
    for (const n of names)
      await tc.client.create(R.IPClaim, {
        metadata: { name: n, namespace: NS },
        spec: { pool: { name: 'tiny' } },
      });
    const { allocate, makeCtx } = await import('../../helpers/data.ts');
    const ctx = makeCtx(tc.client);
    const results = await Promise.all(names.map((n) => allocate(ctx, R.IPClaim, n)));
    expect(results.filter((r) => r.kind === 'done')).toHaveLength(5);
    expect(results.filter((r) => r.kind === 'terminal')).toHaveLength(3);
    const claims = (await tc.client.list(R.IPClaim, NS)).items.filter((c) =>
      c.metadata.name!.startsWith('tiny-'),
    );
    const failed = claims.filter((c) => (c.status as any)?.errorMessage);
    expect(failed.map((c) => (c.status as any).errorMessage)).toEqual([
      'Exhausted IP Pools',
      'Exhausted IP Pools',
      'Exhausted IP Pools',
    ]);
    const addrs = (await tc.client.list(R.IPAddress, NS)).items.filter(
      (a) => (a.spec as any).pool.name === 'tiny',
    );
    expect(new Set(addrs.map((a) => (a.spec as any).address)).size).toBe(5);
    // Sticky: a failed claim is not retried by a later delivery.
    const before = tc.client.stats.writes;
    await allocate(ctx, R.IPClaim, failed[0]!.metadata.name!);
    expect(tc.client.stats.writes).toBe(before);
  });
});
