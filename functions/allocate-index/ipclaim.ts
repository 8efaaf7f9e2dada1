/**
 * The IPAM path of allocateIndex for an IPClaim: IPAM finalizer, the lowest free address of its
 * IPPool, the IPAddress `<namePrefix>-<ip>` (create-by-name arbitrates), claim status.address and
 * the pool's status.indexes. Allocation errors (exhaustion, unavailable requested address) are
 * recorded on the claim and sticky, as in ip-address-manager.
 *
 * Before an IPAddress is created from a pool, the pool carries its finalizer `ippool.ipam.metal3.io`
 * (pool.ts adds it when it sees the pool; this is the fallback). A deleting pool hands out no new
 * address: the claim gets a terminal (sticky) error instead, and an address it already holds stays.
 */

import { addressReads } from '../../shared/allocation/address-reads.ts';
import { recordClaimError as recordError } from '../../shared/allocation/claim-error.ts';
import {
  addFinalizer,
  copyLabels,
  hasFinalizer,
  isDeleting,
  isOwnedBy,
  keyOf,
  ownerRef,
  timestamp,
} from '../../shared/allocation/objects.ts';
import {
  allocatingOf,
  burstUnderWay,
  inRegistry,
  joinRegistry,
  leaveRegistry,
  type RegistryState,
} from '../../shared/allocation/registry.ts';
import { isAddressOfClaim } from '../../shared/allocation/serves.ts';
import { type IPAddressView, type IPClaimView, type PoolView, V } from '../../shared/allocation/views.ts';
import { type IPAddress, type IPClaim, type IPPool, R } from '../../shared/api/index.ts';
import { FINALIZER } from '../../shared/api/wellknown.ts';
import { type AllocatedAddress, ipAddressName } from '../../shared/ipam/allocate.ts';
import { IpamError } from '../../shared/ipam/errors.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { InvalidError, isAlreadyExists } from '../../shared/kube/errors.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { isSerializedBy, type ReconcileContext } from '../../shared/reconcile/context.ts';
import { TerminalError, TransientError } from '../../shared/reconcile/errors.ts';
import { done, type ReconcileResult, requeueAfter } from '../../shared/reconcile/result.ts';
import { dropPoolEntries, releaseIPClaim, releaseOrphanAddress } from '../../shared/release/data.ts';
import { allocateAddressBatch, type BatchedAddress } from './ipbatch.ts';
import {
  type AddressPlan,
  type HeldAddress,
  planAddress,
  poolAddresses,
  spreadsByRank,
} from './plan-address.ts';
import { ensurePoolFinalizer, isClaimOfPool, poolIndexes, syncPoolIndexes } from './pool.ts';

export const MAX_ADDRESS_ATTEMPTS = 40;

/** An IPClaim, parsed by the opening (shared/reconcile/object.ts). */
export async function reconcileIPClaim(ctx: ReconcileContext, raw: IPClaim): Promise<ReconcileResult> {
  const { client } = ctx;
  const namespace = raw.metadata.namespace!;
  const name = raw.metadata.name!;
  if (isDeleting(raw)) return releaseIPClaim(ctx, namespace, name, raw);
  const claim = raw;
  // Sticky errors (ip-address-manager): no retry until the message is cleared or the claim recreated.
  if (claim.status?.errorMessage) return done('claim has an allocation error');
  const poolName = claim.spec?.pool?.name;
  if (!poolName)
    return recordClaimError(
      ctx,
      raw,
      new TerminalError('InvalidConfiguration', 'spec.pool.name must be set'),
    );
  // Served already (by its own pass or by a batch, ADR 033): no pool read, nothing written.
  const servedBy = await servingAddress(client, claim, poolName);
  if (servedBy) {
    ctx.metrics?.allocation('IPAddress', 'reused');
    return done(`${servedBy.spec?.address ?? '?'} (served)`);
  }
  // A pool that fails its schema is reported on this claim (the opening records it).
  const pool = await client.get(R.IPPool, namespace, poolName);
  if (!pool) {
    // The Metal3Data that made this claim reports the missing pool; the pool's creation (or the
    // safety net) brings us back.
    return requeueAfter(ctx.config.safetyRequeueSeconds, `IPPool ${namespace}/${poolName} not found`);
  }

  let claimObj = raw;
  if (!(raw.metadata.finalizers ?? []).includes(FINALIZER.ipClaim)) {
    const r = await optimisticUpdate(
      client,
      R.IPClaim,
      namespace,
      name,
      (o) => void addFinalizer(o, FINALIZER.ipClaim),
      {
        current: raw,
        expectedUid: raw.metadata.uid,
      },
    );
    if (r.outcome === 'gone') return done('claim gone');
    claimObj = r.object;
    if (isDeleting(claimObj)) return releaseIPClaim(ctx, namespace, name, claimObj);
  }

  // The pool's finalizer before any address is created from it (no write when it is there).
  const poolNow = await ensurePoolFinalizer(ctx, pool);
  if (!poolNow)
    return requeueAfter(ctx.config.safetyRequeueSeconds, `IPPool ${namespace}/${poolName} not found`);

  const registry: RegistryState = { kind: V.IPPool, owner: poolNow, joined: false };
  const serialized = spreadsByRank(pool, claim) && isSerializedBy(ctx, 'IPPool', namespace, poolName);
  const tried: string[] = [];
  let address: HeldAddress;
  try {
    address = await allocate(ctx, pool, registry, claimObj, serialized, tried);
  } catch (e) {
    if (e instanceof IpamError || e instanceof TerminalError) {
      await leaveRegistry(client, registry, name);
      return recordClaimError(ctx, claimObj, e);
    }
    throw e;
  }
  // Serialized by its pool: a page of its other waiting IPClaims is served in this pass too,
  // recorded in the same pool status write (ADR 033).
  const owner = registry.owner;
  const batch = serialized
    ? await allocateAddressBatch(ctx, {
        pool,
        poolNow: owner,
        claimName: name,
        taken: [...tried, address.spec.address],
        newAddress: (c, a) => newAddress(pool, owner, c, a),
      })
    : [];
  // The pool as allocate last read (or mended) it: whether its status already maps this claim.
  await recordAllocations(ctx, registry, claimObj, address, batch);
  return done(`${address.spec.address}${batch.length > 0 ? `; ${batch.length} more claims served` : ''}`);
}

/**
 * The IPAddress that already serves `claim`, by the name its status.address gives: of its pool,
 * naming the claim in spec.claim, owned by it (its uid), not deleting. Only for a claim with the
 * IPAM finalizer (otherwise the full pass has something to do).
 */
async function servingAddress(
  client: KubeClient,
  claim: IPClaim,
  poolName: string,
): Promise<IPAddressView | undefined> {
  const ref = claim.status?.address;
  if (!ref?.name || !hasFinalizer(claim, FINALIZER.ipClaim)) return undefined;
  const ns = claim.metadata.namespace!;
  const a = await client.get(V.IPAddress, ns, ref.name);
  return a &&
    !isDeleting(a) &&
    isAddressOfClaim(a, claim) &&
    isOwnedBy(a, claim.metadata.uid) &&
    a.spec?.pool?.name === poolName &&
    a.metadata.namespace === ns
    ? a
    : undefined;
}

/** Does the IPClaim `name` still wait for an address of `pool` (for the registry's stale check)? */
async function ipClaimWaits(client: KubeClient, pool: KubeObject, name: string): Promise<boolean> {
  const c = await client.get(V.IPClaim, pool.metadata.namespace!, name);
  const status = c?.status;
  return Boolean(
    c &&
      !isDeleting(c) &&
      isClaimOfPool(c, pool.metadata.namespace!, pool.metadata.name!) &&
      !status?.address?.name &&
      !status?.errorMessage,
  );
}

/**
 * After this many AlreadyExists in one reconcile, narrow reads give way to full lists (and the
 * pool's status is rebuilt from them): its status.indexes lags or lost entries.
 */
const NARROW_CONFLICTS_BEFORE_FULL = 3;

async function allocate(
  ctx: ReconcileContext,
  pool: IPPool,
  registry: RegistryState,
  claimRaw: IPClaim,
  /** Serialized by its pool: the lowest free address (see claim.ts), no page, no join. */
  serialized: boolean,
  /** Addresses whose create failed with AlreadyExists (filled here: the batch skips them too). */
  tried: string[],
): Promise<HeldAddress> {
  const { client } = ctx;
  const ns = pool.metadata.namespace!;
  const claim = claimRaw;
  const claimName = claim.metadata.name!;
  // In a burst: the claims that joined the pool's registry before this one (ADR 012).
  let ahead: string[] | undefined;
  // The pool as read before this reconcile's first attempt, then (narrow reads plan from its
  // status) re-read after each failed create; kept in `registry.owner` when the loop ends.
  let poolNow = registry.owner;
  let narrow = true;
  let narrowConflicts = 0;
  let synced = false;
  for (let attempt = 0; attempt < MAX_ADDRESS_ATTEMPTS; attempt++) {
    if (attempt > 0 && narrow) poolNow = (await client.get(V.IPPool, ns, pool.metadata.name!)) ?? poolNow;
    registry.owner = poolNow;
    if (serialized) ahead = Object.keys(allocatingOf(poolNow)).filter((n) => n !== claimName);
    const reads = await addressReads(
      client,
      ns,
      pool.metadata.name!,
      claimName,
      narrow,
      serialized || (burstUnderWay(registry) && spreadsByRank(pool, claim)),
    );
    const addresses = reads.narrow ? reads.own : reads.addresses;
    if (isDeleting(poolNow)) {
      // The address the claim already holds stays; a new one would only prolong the deletion (the
      // pool waits for every IPAddress of it), so none is planned (not even to report exhaustion).
      const held = poolAddresses(pool, addresses).find((a) => isAddressOfClaim(a, claim));
      if (held) return held;
      throw new TerminalError(
        'PoolDeleting',
        `IPPool ${keyOf(poolNow)} is being deleted: no address is allocated for a new claim`,
      );
    }
    if (!reads.narrow && !narrow && !synced) {
      // Fell back from narrow reads: mend the status they plan from.
      synced = true;
      poolNow = (await syncPoolIndexes(ctx, poolNow, addresses)) ?? poolNow;
      registry.owner = poolNow;
    }
    if (
      !ahead &&
      reads.narrow &&
      (reads.burst || burstUnderWay(registry)) &&
      spreadsByRank(pool, claim) &&
      !poolIndexes(poolNow)[claimName]
    ) {
      // A burst (more claims wait than a page holds, or one is still under way): rank by the
      // registry, not by the backlog.
      ahead = await joinRegistry(client, registry, claimName, ctx.now(), (p, n) =>
        ipClaimWaits(client, p, n),
      );
      poolNow = registry.owner;
    }
    let plan: AddressPlan;
    try {
      plan = planAddress({
        pool,
        claim,
        addresses,
        claims: reads.narrow ? reads.pending : reads.claims,
        tried,
        ...(reads.narrow ? { mapped: poolIndexes(poolNow) } : {}),
        ...(ahead ? { ahead } : {}),
      });
    } catch (e) {
      // An allocation error is sticky on the claim: never from the status alone (it may hold
      // entries no address backs any more), only as the full lists confirm it.
      if (reads.narrow && e instanceof IpamError) {
        narrow = false;
        continue;
      }
      throw e;
    }
    if (plan.kind === 'reuse') {
      ctx.metrics?.allocation('IPAddress', 'reused');
      return plan.address;
    }
    const body = newAddress(pool, poolNow, claimRaw, plan.allocated);
    try {
      const created = await client.create(R.IPAddress, body);
      ctx.metrics?.allocation('IPAddress', 'created');
      return created;
    } catch (e) {
      if (e instanceof InvalidError) {
        throw new TerminalError('CreateFailed', `Failed to create associated IPAddress object: ${e.message}`);
      }
      if (!isAlreadyExists(e)) throw e;
      ctx.metrics?.allocation('IPAddress', 'alreadyExists');
      tried.push(plan.allocated.address);
      if (reads.narrow && ++narrowConflicts >= NARROW_CONFLICTS_BEFORE_FULL) narrow = false;
    }
  }
  throw new TransientError(`no free address could be created for IPClaim ${ns}/${claim.metadata.name}`);
}

/** IPAddress `<namePrefix>-<ip>`: owners [pool, claim] (neither controller), the claim's labels. */
export function newAddress(
  pool: IPPool,
  poolRaw: PoolView,
  claimRaw: IPClaimView,
  a: AllocatedAddress,
): IPAddress {
  const ns = pool.metadata.namespace!;
  const spec: IPAddress['spec'] = {
    address: a.address,
    prefix: a.prefix,
    dnsServers: a.dnsServers,
    pool: { name: pool.metadata.name!, namespace: ns },
    claim: { name: claimRaw.metadata.name!, namespace: ns },
  };
  if (a.gateway !== undefined) spec.gateway = a.gateway;
  return {
    metadata: {
      name: ipAddressName(pool.spec.namePrefix, a.address),
      namespace: ns,
      labels: copyLabels(claimRaw),
      finalizers: [FINALIZER.ipAddress],
      ownerReferences: [ownerRef(R.IPPool, poolRaw), ownerRef(R.IPClaim, claimRaw)],
    },
    spec,
  };
}

/**
 * The pool's status first (the pass's own claim and those a batch served, in one write), then the
 * claims': a claim that no longer reads as waiting always has its address in the pool's
 * status.indexes, which is what narrow reads plan from (ADR 010).
 */
async function recordAllocations(
  ctx: ReconcileContext,
  registry: RegistryState,
  claimRaw: KubeObject,
  address: HeldAddress,
  batch: readonly BatchedAddress[],
) {
  const { client } = ctx;
  const poolRaw = registry.owner;
  const ns = claimRaw.metadata.namespace!;
  const claimName = claimRaw.metadata.name!;
  const leaving = inRegistry(registry, claimName);
  const mapped = poolIndexes(poolRaw);
  const all: [string, string][] = [[claimName, address.spec.address]];
  for (const b of batch) all.push([b.claim.metadata.name!, b.address.spec.address]);
  const entries = all.filter(([claim, ip]) => mapped[claim] !== ip);
  if (leaving || entries.length > 0) {
    // One map key per claim: commutative with concurrent allocations on the pool (no 409 storm).
    await client.patch(
      R.IPPool,
      ns,
      poolRaw.metadata.name!,
      {
        status: {
          indexes: Object.fromEntries(entries),
          // Served: out of the burst registry in the same write (ADR 012).
          ...(leaving ? { allocating: { [claimName]: null } } : {}),
          lastUpdated: timestamp(ctx.now()),
        },
      },
      'merge',
      { status: true },
    );
  }
  await optimisticUpdate(
    client,
    R.IPClaim,
    ns,
    claimName,
    (o) => {
      o.status = { ...o.status, address: { name: address.metadata.name!, namespace: ns } };
    },
    // A fresh read, not our copy: a duplicate delivery may have written the same status meanwhile
    // (then nothing is written) and a stale copy would only buy a 409.
    { expectedUid: claimRaw.metadata.uid, status: true },
  );
  const results = await Promise.allSettled(batch.map((b) => recordBatched(ctx, poolRaw, b)));
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * A batched IPClaim's status.address, from the copy the batch listed (a 409 reads it again). One
 * gone or replaced has its IPAddress released; one deleting is released by its deletion path
 * (which finds the address by spec.claim.name); one served meanwhile by another allocation has
 * ours released as surplus. Each time its entry leaves the pool's status.
 */
async function recordBatched(ctx: ReconcileContext, pool: PoolView, b: BatchedAddress): Promise<void> {
  const ns = b.claim.metadata.namespace!;
  const name = b.claim.metadata.name!;
  const r = await optimisticUpdate(
    ctx.client,
    V.IPClaim,
    ns,
    name,
    (o) => {
      if (isDeleting(o) || o.status?.address?.name) return SKIP;
      o.status = { ...o.status, address: { name: b.address.metadata.name!, namespace: ns } };
    },
    { current: b.claim, expectedUid: b.claim.metadata.uid, status: true },
  );
  if (
    r.outcome === 'gone' ||
    (r.outcome === 'skipped' &&
      !isDeleting(r.object) &&
      r.object.status?.address?.name !== b.address.metadata.name)
  ) {
    await releaseOrphanAddress(ctx, b.address);
    await dropPoolEntries(ctx, ns, pool.metadata.name!, name, b.address.spec.address);
    ctx.log.info('IPClaim gone or served elsewhere during its batch allocation; its IPAddress was released', {
      claim: `${ns}/${name}`,
    });
  } else if (r.outcome === 'skipped' && isDeleting(r.object)) {
    await releaseIPClaim(ctx, ns, name, r.object);
  }
}

/** The opening's recorder: a schema failure (the claim's or its pool's), once. */
export const recordIPClaimFailure = (
  ctx: ReconcileContext,
  raw: KubeObject,
  err: TerminalError,
): Promise<ReconcileResult> =>
  recordError(ctx, R.IPClaim, raw, err.message, 'IPAllocationFailed', err.reason, { once: true });

const recordClaimError = (ctx: ReconcileContext, raw: KubeObject, err: Error): Promise<ReconcileResult> =>
  recordError(
    ctx,
    R.IPClaim,
    raw,
    err.message,
    'IPAllocationFailed',
    err instanceof IpamError
      ? err.code
      : err instanceof TerminalError && err.reason === 'PoolDeleting'
        ? err.reason
        : 'InvalidConfiguration',
  );
