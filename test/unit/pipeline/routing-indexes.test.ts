/**
 * The relay cache's secondary indexes (shared/routing/indexes.ts) against their reference: a scan
 * of the namespace's objects with the same test, after any sequence of upserts and removals.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { RelayCache } from '../../../shared/routing/cache.ts';
import { INDEXES, type IndexName } from '../../../shared/routing/indexes.ts';

/** A small deterministic PRNG (mulberry32): the same sequence on every run. */
function rng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMESPACES = ['metal3', 'other'];
const SECRETS = ['s-0', 's-1', 's-2'];

function m3m(name: string, ns: string, pick: () => number): KubeObject {
  const ref = () =>
    pick() < 0.3
      ? undefined
      : {
          name: SECRETS[Math.floor(pick() * SECRETS.length)]!,
          ...(pick() < 0.2 ? { namespace: 'other' } : {}),
        };
  const hostname = pick() < 0.5 ? [{ type: 'Hostname', address: SECRETS[Math.floor(pick() * 3)] }] : [];
  return {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'Metal3Machine',
    metadata: { name, namespace: ns, uid: `uid-${ns}-${name}` },
    spec: { metaData: ref(), networkData: ref() },
    status: { addresses: [...hostname, { type: 'InternalIP', address: '192.168.0.1' }] },
  };
}

/** What the routes used to do: every object of the namespace, tested one by one. */
function scan(cache: RelayCache, index: IndexName, ns: string, value: string): string[] {
  const { kind, keys } = INDEXES[index];
  return cache
    .list(kind, ns)
    .filter((o) => keys(o).includes(`${ns}/${value}`))
    .map((o) => o.metadata.uid!)
    .sort();
}

describe('routing cache indexes', () => {
  it('find what a scan of the namespace finds, through upserts, changes and removals', () => {
    const pick = rng(7);
    const cache = new RelayCache();
    const store = cache.store('Metal3Machine');
    const live = new Map<string, KubeObject>();
    for (let step = 0; step < 2_000; step++) {
      const name = `m-${Math.floor(pick() * 40)}`;
      const ns = NAMESPACES[Math.floor(pick() * NAMESPACES.length)]!;
      const key = `${ns}/${name}`;
      if (live.has(key) && pick() < 0.25) {
        store.remove(live.get(key)!);
        live.delete(key);
      } else {
        const o = m3m(name, ns, pick);
        store.upsert(o);
        live.set(key, o);
      }
      if (step % 50 === 0) {
        for (const index of ['metal3MachineDataSecret', 'metal3MachineHostname'] as const)
          for (const n of NAMESPACES)
            for (const v of SECRETS) {
              const got = cache
                .byIndex(index, n, v)
                .map((o) => o.metadata.uid!)
                .sort();
              expect(got, `${index} ${n}/${v} at step ${step}`).toEqual(scan(cache, index, n, v));
            }
      }
    }
  });

  it('a changed reference moves the object from its old key to its new one', () => {
    const cache = new RelayCache();
    const store = cache.store('Metal3Machine');
    const base = m3m('m', 'metal3', () => 0.99);
    store.upsert({ ...base, spec: { metaData: { name: 'old' } } });
    expect(cache.byIndex('metal3MachineDataSecret', 'metal3', 'old')).toHaveLength(1);
    store.upsert({ ...base, spec: { metaData: { name: 'new' } } });
    expect(cache.byIndex('metal3MachineDataSecret', 'metal3', 'old')).toEqual([]);
    expect(cache.byIndex('metal3MachineDataSecret', 'metal3', 'new').map((o) => o.metadata.name)).toEqual([
      'm',
    ]);
  });

  it('finds only objects of the namespace asked, like the scan it replaces', () => {
    const cache = new RelayCache();
    // A Metal3Machine of `other` naming a Secret of `metal3` explicitly.
    cache.store('Metal3Machine').upsert({
      ...m3m('m', 'other', () => 0.99),
      spec: { metaData: { name: 's-0', namespace: 'metal3' } },
    });
    expect(cache.byIndex('metal3MachineDataSecret', 'metal3', 's-0')).toEqual([]);
  });

  it('an index asked of a store that does not keep it is an error, not an empty answer', () => {
    const cache = new RelayCache();
    expect(() => cache.store('Metal3Machine').byIndex('pendingIpClaimPool', 'metal3/pool')).toThrow(
      /no index/,
    );
  });

  it('pending IPClaims by pool: only those without an address and not deleting, as they change', () => {
    const pick = rng(11);
    const cache = new RelayCache();
    const store = cache.store('IPClaim');
    const pools = ['pool-a', 'pool-b'];
    const live = new Map<string, KubeObject>();
    for (let step = 0; step < 2_000; step++) {
      const name = `c-${Math.floor(pick() * 30)}`;
      const ns = NAMESPACES[Math.floor(pick() * NAMESPACES.length)]!;
      const key = `${ns}/${name}`;
      if (live.has(key) && pick() < 0.2) {
        store.remove(live.get(key)!);
        live.delete(key);
      } else {
        // The same claim moves through its life: no address, then one, then deleting (any order).
        const o: KubeObject = {
          apiVersion: 'ipam.metal3.io/v1alpha1',
          kind: 'IPClaim',
          metadata: {
            name,
            namespace: ns,
            uid: `uid-${key}`,
            ...(pick() < 0.2 ? { deletionTimestamp: '2026-12-07T00:00:00Z' } : {}),
          },
          spec: { pool: { name: pools[Math.floor(pick() * pools.length)]! } },
          ...(pick() < 0.5 ? { status: { address: { name: `${name}-addr` } } } : {}),
        };
        store.upsert(o);
        live.set(key, o);
      }
      if (step % 40 === 0)
        for (const n of NAMESPACES)
          for (const p of pools) {
            const want = [...live.values()]
              .filter(
                (c) =>
                  c.metadata.namespace === n &&
                  (c.spec as { pool: { name: string } }).pool.name === p &&
                  !c.metadata.deletionTimestamp &&
                  !(c.status as { address?: unknown } | undefined)?.address,
              )
              .map((c) => c.metadata.uid!)
              .sort();
            const got = cache
              .byIndex('pendingIpClaimPool', n, p)
              .map((c) => c.metadata.uid!)
              .sort();
            expect(got, `${n}/${p} at step ${step}`).toEqual(want);
          }
    }
  });
});
