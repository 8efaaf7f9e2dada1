/**
 * allocateIndex for an IPPool: its deletion protection, as ip-address-manager does it. A pool
 * carries the finalizer `ippool.ipam.metal3.io` (added when the pool is first seen, and by the
 * IPClaim path before any address is created from it). A deleting pool keeps it while any
 * IPAddress of the pool (woken by the address's disappearance; a requeue as safety net) or any live
 * IPClaim of it (woken by the claim's disappearance, no requeue) is left; then the finalizer goes.
 * IPClaims of a deleting pool get no new address (ipclaim.ts). `status.indexes` is derived data
 * (each entry stands for an IPAddress) and holds nothing by itself.
 */

import { addFinalizer, FINALIZER, hasFinalizer, isDeleting } from '../../shared/allocation/objects.ts';
import { updateOrGone } from '../../shared/allocation/update.ts';
import type { IPAddress, IPClaim, IPPool } from '../../shared/api/index.ts';
import { R } from '../../shared/api/resources.ts';
import { SKIP } from '../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult } from '../../shared/reconcile/result.ts';
import { isAddressOfClaim, poolAddresses } from './plan-address.ts';
import { dropFinalizerWhenUnheld, releaseOrphanAddress } from './release.ts';

/** Is `claim` an IPClaim of the pool `namespace/name` (claims are served from the pool's namespace)? */
export function isClaimOfPool(claim: KubeObject, namespace: string, name: string): boolean {
  const pool = (claim as unknown as IPClaim).spec?.pool;
  return (
    claim.metadata.namespace === namespace &&
    pool?.name === name &&
    ((pool as { namespace?: string }).namespace || claim.metadata.namespace) === namespace
  );
}

/**
 * Our finalizer on the pool (one write, once per pool). No write when it is there or when the pool
 * is deleting (no finalizer can be added then). Returns the pool as it is now (undefined when gone).
 */
export async function ensurePoolFinalizer(
  ctx: ReconcileContext,
  current: KubeObject,
): Promise<KubeObject | undefined> {
  if (isDeleting(current) || hasFinalizer(current, FINALIZER.ipPool)) return current;
  const r = await updateOrGone(
    ctx.client,
    R.IPPool,
    current.metadata.namespace,
    current.metadata.name!,
    (o) => (!isDeleting(o) && addFinalizer(o, FINALIZER.ipPool) ? undefined : SKIP),
    { current, expectedUid: current.metadata.uid },
  );
  return r.outcome === 'gone' ? undefined : r.object;
}

export async function reconcilePool(
  ctx: ReconcileContext,
  namespace: string,
  name: string,
): Promise<ReconcileResult> {
  const { client } = ctx;
  const raw = await client.get(R.IPPool, namespace, name);
  if (!raw) return done('pool gone');
  if (!isDeleting(raw)) {
    await ensurePoolFinalizer(ctx, raw);
    return done();
  }
  if (!hasFinalizer(raw, FINALIZER.ipPool)) return done('pool deleting, not held by us');

  const pool = raw as unknown as IPPool;
  const [addressList, claimList] = await Promise.all([
    client.list(R.IPAddress, namespace),
    client.list(R.IPClaim, namespace),
  ]);
  const claims = claimList.items as unknown as IPClaim[];
  let addresses = poolAddresses(pool, addressList.items as unknown as IPAddress[]);

  // An address whose claim is gone would hold the pool for ever: release it as the claim's release
  // would have (the claim read once more first: the list may predate it).
  let releasedOrphans = 0;
  for (const a of addresses) {
    if (claims.some((c) => isAddressOfClaim(a, c))) continue;
    const claimName = a.spec?.claim?.name;
    const claim = claimName ? await client.get(R.IPClaim, namespace, claimName) : undefined;
    if (claim && isAddressOfClaim(a, claim as unknown as IPClaim)) continue;
    await releaseOrphanAddress(ctx, a as unknown as KubeObject);
    releasedOrphans++;
  }
  if (releasedOrphans > 0) {
    ctx.log.info('orphaned IPAddresses of a deleting pool released', {
      pool: `${namespace}/${name}`,
      count: releasedOrphans,
    });
    addresses = poolAddresses(
      pool,
      (await client.list(R.IPAddress, namespace)).items as unknown as IPAddress[],
    );
  }

  const live = (claimList.items as KubeObject[]).filter(
    (c) => isClaimOfPool(c, namespace, name) && !isDeleting(c),
  );
  return dropFinalizerWhenUnheld(ctx, R.IPPool, raw, FINALIZER.ipPool, {
    claims: live,
    claimsNoun: 'IPClaim(s)',
    handedOut: addresses as unknown as KubeObject[],
    handedOutNoun: 'IPAddress(es)',
    releasedNote: 'no address or claim left: pool finalizer removed',
    logField: 'pool',
  });
}
