/**
 * allocateIndex for an IPPool: its deletion protection, as ip-address-manager does it. A pool
 * carries the finalizer `ippool.ipam.metal3.io` (added when the pool is first seen, and by the
 * IPClaim path before any address is created from it). A deleting pool keeps it while any
 * IPAddress of the pool (woken by the address's disappearance; a requeue as safety net) or any live
 * IPClaim of it (woken by the claim's disappearance, no requeue) is left; then the finalizer goes.
 * IPClaims of a deleting pool get no new address (ipclaim.ts). `status.indexes` is derived data
 * (each entry stands for an IPAddress) and holds nothing by itself; narrow reads plan from it
 * (ADR 010), so a live pool's reconcile rebuilds it from the addresses when it has drifted (a pool
 * restored without its status, say).
 */

import { addFinalizer, hasFinalizer, isDeleting, timestamp } from '../../shared/allocation/objects.ts';
import { isAddressOfClaim } from '../../shared/allocation/serves.ts';
import { type IPAddressView, type IPClaimView, type PoolView, V } from '../../shared/allocation/views.ts';
import { FINALIZER } from '../../shared/api/wellknown.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult } from '../../shared/reconcile/result.ts';
import { dropFinalizerWhenUnheld, releaseOrphanAddress } from '../../shared/release/data.ts';
import { poolAddresses } from './plan-address.ts';

/** Is `claim` an IPClaim of the pool `namespace/name` (claims are served from the pool's namespace)? */
export function isClaimOfPool(claim: IPClaimView, namespace: string, name: string): boolean {
  const pool = claim.spec?.pool;
  return (
    claim.metadata.namespace === namespace &&
    pool?.name === name &&
    (pool.namespace || claim.metadata.namespace) === namespace
  );
}

/**
 * Our finalizer on the pool (one write, once per pool). No write when it is there or when the pool
 * is deleting (no finalizer can be added then). Returns the pool as it is now (undefined when gone).
 */
export async function ensurePoolFinalizer(
  ctx: ReconcileContext,
  current: PoolView,
): Promise<PoolView | undefined> {
  if (isDeleting(current) || hasFinalizer(current, FINALIZER.ipPool)) return current;
  const r = await optimisticUpdate(
    ctx.client,
    V.IPPool,
    current.metadata.namespace,
    current.metadata.name!,
    (o) => (!isDeleting(o) && addFinalizer(o, FINALIZER.ipPool) ? undefined : SKIP),
    { current, expectedUid: current.metadata.uid },
  );
  return r.outcome === 'gone' ? undefined : r.object;
}

/** An IPPool as allocateIndex reads it (a view: its status maps), parsed by the opening. */
export async function reconcilePool(ctx: ReconcileContext, raw: PoolView): Promise<ReconcileResult> {
  const { client } = ctx;
  const namespace = raw.metadata.namespace!;
  const name = raw.metadata.name!;
  if (!isDeleting(raw)) {
    const now = await ensurePoolFinalizer(ctx, raw);
    if (now) {
      const addresses = (await client.list(V.IPAddress, namespace)).items;
      await syncPoolIndexes(ctx, now, addresses);
    }
    return done();
  }
  if (!hasFinalizer(raw, FINALIZER.ipPool)) return done('pool deleting, not held by us');

  const pool = raw;
  const [addressList, claimList] = await Promise.all([
    client.list(V.IPAddress, namespace),
    client.list(V.IPClaim, namespace),
  ]);
  const claims = claimList.items;
  let addresses = poolAddresses(pool, addressList.items);

  // An address whose claim is gone would hold the pool for ever: release it as the claim's release
  // would have (the claim read once more first: the list may predate it).
  let releasedOrphans = 0;
  for (const a of addresses) {
    if (claims.some((c) => isAddressOfClaim(a, c))) continue;
    const claimName = a.spec?.claim?.name;
    const claim = claimName ? await client.get(V.IPClaim, namespace, claimName) : undefined;
    if (claim && isAddressOfClaim(a, claim)) continue;
    await releaseOrphanAddress(ctx, a);
    releasedOrphans++;
  }
  if (releasedOrphans > 0) {
    ctx.log.info('orphaned IPAddresses of a deleting pool released', {
      pool: `${namespace}/${name}`,
      count: releasedOrphans,
    });
    addresses = poolAddresses(pool, (await client.list(V.IPAddress, namespace)).items);
  }

  const live = claimList.items.filter((c) => isClaimOfPool(c, namespace, name) && !isDeleting(c));
  return dropFinalizerWhenUnheld(ctx, V.IPPool, raw, FINALIZER.ipPool, {
    claims: live,
    claimsNoun: 'IPClaim(s)',
    handedOut: addresses,
    handedOutNoun: 'IPAddress(es)',
    releasedNote: 'no address or claim left: pool finalizer removed',
    logField: 'pool',
  });
}

/** The pool's `status.indexes` (claim name -> address). */
export const poolIndexes = (pool: PoolView): Record<string, string> => pool.status?.indexes ?? {};

export interface IndexesDrift {
  /** Entries missing or naming another address: claim -> its address. */
  set: Record<string, string>;
  /** Claims with an entry but no address of the pool. */
  drop: string[];
}

/** How `mapped` differs from the pool's IPAddresses (pure); undefined when it does not. */
export function indexesDrift(
  pool: KubeObject,
  mapped: Readonly<Record<string, string>>,
  addresses: readonly IPAddressView[],
): IndexesDrift | undefined {
  const actual = new Map<string, string>();
  for (const a of poolAddresses(pool, addresses)) {
    const claim = a.spec.claim?.name;
    if (claim && !isDeleting(a)) actual.set(claim, a.spec.address);
  }
  const set: Record<string, string> = {};
  for (const [claim, ip] of actual) if (mapped[claim] !== ip) set[claim] = ip;
  const drop = Object.keys(mapped).filter((claim) => !actual.has(claim));
  return Object.keys(set).length > 0 || drop.length > 0 ? { set, drop } : undefined;
}

/**
 * Brings the pool's `status.indexes` in line with `addresses` (a full list of the namespace), one
 * status write when it has drifted. An entry is dropped only if it is still the one found stale,
 * and an address created after the list is re-entered by its own allocation: the create of
 * `<namePrefix>-<ip>` stays the arbiter either way, a lost entry costs one AlreadyExists at most.
 * Returns the pool as it now is (undefined when it is gone).
 */
export async function syncPoolIndexes(
  ctx: ReconcileContext,
  poolRaw: PoolView,
  addresses: readonly IPAddressView[],
): Promise<PoolView | undefined> {
  const mapped = poolIndexes(poolRaw);
  const drift = indexesDrift(poolRaw, mapped, addresses);
  if (!drift) return poolRaw;
  const r = await optimisticUpdate(
    ctx.client,
    V.IPPool,
    poolRaw.metadata.namespace,
    poolRaw.metadata.name!,
    (o) => {
      const indexes = { ...(o.status?.indexes ?? {}) };
      let changed = false;
      for (const [claim, ip] of Object.entries(drift.set)) {
        if (indexes[claim] === ip) continue;
        indexes[claim] = ip;
        changed = true;
      }
      for (const claim of drift.drop) {
        if (!(claim in indexes) || indexes[claim] !== mapped[claim]) continue;
        delete indexes[claim];
        changed = true;
      }
      if (!changed) return SKIP;
      o.status = { ...o.status, indexes, lastUpdated: timestamp(ctx.now()) };
    },
    { status: true, current: poolRaw, expectedUid: poolRaw.metadata.uid },
  );
  if (r.outcome === 'gone') return undefined;
  if (r.outcome === 'updated')
    ctx.log.info('IPPool status.indexes rebuilt from its addresses', {
      pool: `${poolRaw.metadata.namespace}/${poolRaw.metadata.name}`,
      set: Object.keys(drift.set).length,
      dropped: drift.drop.length,
    });
  return r.object;
}
