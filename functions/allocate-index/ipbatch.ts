/**
 * Batch allocation of addresses (ADR 033): a pass serialized by its IPPool also serves a page of
 * the pool's other waiting IPClaims, as ip-address-manager's IPPoolManager.UpdateAddresses serves
 * every claim of a pool in one reconcile: each takes the next lowest free address (the create of
 * `<namePrefix>-<ip>` stays the arbiter), the pool's status.indexes is written once for all of
 * them (ipclaim.ts, recordAllocations), then each claim's status.address.
 *
 * The same rules as for Metal3Data (batch.ts): only plain claims (no requested or pre-allocated
 * address: those take their own address in their own pass) really waiting, carrying the IPAM
 * finalizer (a claim deleted from then on is released by its deletion path, which finds its
 * IPAddress by spec.claim.name), and not in the pool's burst registry. The crash points and why
 * each is safe are the same as for the Metal3Data batch.
 */

import { fieldSelected, fieldSelectedPage } from '../../shared/allocation/field-selected.ts';
import { hasFinalizer, isDeleting } from '../../shared/allocation/objects.ts';
import { allocatingOf } from '../../shared/allocation/registry.ts';
import { isAddressOfClaim } from '../../shared/allocation/serves.ts';
import { type IPClaimView, type PoolView, V } from '../../shared/allocation/views.ts';
import { type IPAddress, type IPPool, R } from '../../shared/api/index.ts';
import { FINALIZER } from '../../shared/api/wellknown.ts';
import { type AllocatedAddress, allocateAddress, UsedAddresses } from '../../shared/ipam/allocate.ts';
import { IpamError } from '../../shared/ipam/errors.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { BATCH_CLAIMS, createInRounds } from './batch.ts';
import { type HeldAddress, poolAddresses, spreadsByRank } from './plan-address.ts';
import { isClaimOfPool, poolIndexes } from './pool.ts';

/** An IPClaim served by a batch, as listed (its copy is the base of its status update). */
export interface BatchedAddress {
  claim: IPClaimView;
  address: HeldAddress;
}

export interface AddressBatchInput {
  /** The pool as parsed (its spec: ranges, preAllocations, strategy). */
  pool: IPPool;
  /** The pool as the pass last read it (status.indexes, the registry, uid for owner refs). */
  poolNow: PoolView;
  /** The IPClaim whose pass this is (served by the pass itself, not here). */
  claimName: string;
  /** Addresses known taken: the pass's own and the ones its creates lost. */
  taken: Iterable<string>;
  /** Builds the IPAddress `<namePrefix>-<ip>` for a claim (ipclaim.ts newAddress). */
  newAddress: (claim: IPClaimView, a: AllocatedAddress) => IPAddress;
}

/** Is `claim` one an address batch may serve? */
export function addressBatchable(
  claim: IPClaimView,
  input: Pick<AddressBatchInput, 'pool' | 'poolNow' | 'claimName'>,
): boolean {
  const p = input.pool;
  const name = claim.metadata.name ?? '';
  return (
    name !== input.claimName &&
    isClaimOfPool(claim, p.metadata.namespace!, p.metadata.name!) &&
    !isDeleting(claim) &&
    !claim.status?.address?.name &&
    !claim.status?.errorMessage &&
    spreadsByRank(p, claim) &&
    hasFinalizer(claim, FINALIZER.ipClaim) &&
    allocatingOf(input.poolNow)[name] === undefined
  );
}

/**
 * Finds or creates the IPAddress of up to BATCH_CLAIMS waiting IPClaims of the pool; returns
 * those served (nothing recorded yet). An exhausted pool ends the batch: the claims left get their
 * (sticky) error from their own pass, which confirms it from full lists.
 */
export async function allocateAddressBatch(
  ctx: ReconcileContext,
  input: AddressBatchInput,
): Promise<BatchedAddress[]> {
  const { client } = ctx;
  const { pool, poolNow } = input;
  if (isDeleting(poolNow)) return [];
  const ns = pool.metadata.namespace!;
  const page = await fieldSelectedPage(
    client,
    V.IPClaim,
    ns,
    `spec.pool.name=${pool.metadata.name},status.address.name=`,
    BATCH_CLAIMS + 1,
  );
  if (!page) return [];
  const claims = page.items.filter((c) => addressBatchable(c, input)).slice(0, BATCH_CLAIMS);
  if (claims.length === 0) return [];

  // Each claim's own IPAddress (a crashed earlier batch may have made it): reused, never doubled.
  const owns = await Promise.all(
    claims.map((c) => fieldSelected(client, V.IPAddress, ns, `spec.claim.name=${c.metadata.name}`)),
  );
  const mapped = poolIndexes(poolNow);
  const used = new UsedAddresses([...input.taken, ...Object.values(mapped)]);
  const served: BatchedAddress[] = [];
  const waiting: IPClaimView[] = [];
  claims.forEach((claim, i) => {
    const own = owns[i];
    if (!own) return; // field selectors refused: the claim's own pass plans from full lists
    const mine = poolAddresses(pool, own).find((a) => isAddressOfClaim(a, claim));
    if (!mine) {
      waiting.push(claim);
      return;
    }
    if (isDeleting(mine)) return;
    used.add(mine.spec.address);
    ctx.metrics?.allocation('IPAddress', 'reused');
    served.push({ claim, address: mine });
  });
  if (waiting.length === 0) return served;

  // Room for what unserialized runtimes have in flight (the registry's unserved claims), as the
  // pass's own plan: the lowest free addresses are left to them.
  const servedNames = new Set(Object.keys(mapped));
  const ahead = Object.keys(allocatingOf(poolNow)).filter((n) => !servedNames.has(n)).length;
  const next = (): AllocatedAddress | undefined => {
    try {
      const a = allocateAddress(pool.spec, used, { name: '' });
      used.add(a.address);
      return a;
    } catch (e) {
      if (e instanceof IpamError && e.code === 'Exhausted') return undefined;
      throw e;
    }
  };
  for (let k = 0; k < ahead; k++) if (!next()) return served;

  const created = await createInRounds(ctx, 'IPAddress', waiting, (claim) => {
    const a = next();
    return a && (() => client.create(R.IPAddress, input.newAddress(claim, a)));
  });
  for (const { claim, object } of created) {
    const address = poolAddresses(pool, [object])[0];
    if (address) served.push({ claim, address });
  }
  return served;
}
