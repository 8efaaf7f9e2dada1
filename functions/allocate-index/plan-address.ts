/**
 * The decision of the IPAM path for one IPClaim, pure: reuse the IPAddress already serving the
 * claim, or the address to create (ip-address-manager semantics via shared/ipam/allocate.ts).
 * Concurrent claims on one pool spread like indexes do: a plain claim takes the free address of
 * its rank among the pool's pending plain claims (capped), so concurrent creates rarely collide;
 * the API server's create-by-name stays the arbiter.
 */

import { rankAmong } from '../../shared/allocation/index-allocation.ts';
import { isDeleting } from '../../shared/allocation/objects.ts';
import { isAddressOfClaim } from '../../shared/allocation/serves.ts';
import type { IPAddress, IPClaim, IPPool } from '../../shared/api/index.ts';
import { REQUESTED_IP_ANNOTATION } from '../../shared/api/wellknown.ts';
import { type AllocatedAddress, allocateAddress, UsedAddresses } from '../../shared/ipam/allocate.ts';
import { IpamError } from '../../shared/ipam/errors.ts';
import type { KubeObject } from '../../shared/kube/types.ts';

/**
 * Beyond this many pending claims ahead, a claim probes from the MAX_RANK-th free address (each
 * step is one O(used) scan, so the cap only bounds pathological backlogs).
 */
export const MAX_RANK = 4096;

export type AddressPlan =
  | { kind: 'reuse'; address: IPAddress }
  | { kind: 'create'; allocated: AllocatedAddress };

const meta = (o: { metadata: unknown }) => o as unknown as KubeObject;

/** Addresses of the pool (by spec.pool.name in the pool's namespace). */
export function poolAddresses(pool: IPPool, addresses: readonly IPAddress[]): IPAddress[] {
  return addresses.filter(
    (a) => a.metadata.namespace === pool.metadata.namespace && a.spec?.pool?.name === pool.metadata.name,
  );
}

const requestedIp = (c: IPClaim): string | undefined =>
  c.metadata.annotations?.[REQUESTED_IP_ANNOTATION] || undefined;

export interface AddressPlanInput {
  pool: IPPool;
  claim: IPClaim;
  /** Every IPAddress of the namespace, or (narrow reads, ADR 010) the claim's own candidates. */
  addresses: readonly IPAddress[];
  /** Every IPClaim of the namespace, or (narrow reads) the pool's claims still waiting. */
  claims: readonly IPClaim[];
  /**
   * The pool's `status.indexes` (claim name -> address): the addresses given and the claims they
   * serve, for narrow reads that do not list every IPAddress. It may lag an IPAddress by a moment
   * (an address missing here fails its create with AlreadyExists and is tried no more); the claim's
   * own entry is not counted as taken (its address, if it still exists, is among `addresses`).
   */
  mapped?: Readonly<Record<string, string>>;
  /** Addresses whose create already failed with AlreadyExists in this reconcile. */
  tried?: Iterable<string>;
  /**
   * A burst (ADR 012): the claims that joined the pool's registry before this one. The rank is
   * then the number of them still unserved, and `claims` is not used.
   */
  ahead?: readonly string[];
}

/** Throws IpamError with the upstream message (exhaustion, bad requested address, ...). */
export function planAddress(input: AddressPlanInput): AddressPlan {
  const { pool, claim } = input;
  const mine = poolAddresses(pool, input.addresses).filter((a) => isAddressOfClaim(a, claim));
  if (mine.length > 0) return { kind: 'reuse', address: mine[0]! };

  const owned = poolAddresses(pool, input.addresses);
  const used = new UsedAddresses(owned.map((a) => a.spec.address));
  const mapped = Object.entries(input.mapped ?? {}).filter(([c]) => c !== claim.metadata.name);
  for (const [, ip] of mapped) used.add(ip);
  const pre = pool.spec.preAllocations ?? {};
  // Another claim's pre-allocated address is never handed out.
  for (const [claimName, ip] of Object.entries(pre)) if (claimName !== claim.metadata.name) used.add(ip);
  for (const ip of input.tried ?? []) used.add(ip);

  const requested = requestedIp(claim);
  const claimRef = { name: claim.metadata.name ?? '', ...(requested ? { requestedIp: requested } : {}) };
  if (!spreadsByRank(pool, claim)) {
    return { kind: 'create', allocated: allocateAddress(pool.spec, used, claimRef) };
  }

  const served = new Set([...owned.map((a) => a.spec.claim?.name ?? ''), ...mapped.map(([c]) => c)]);
  const rank = Math.min(
    input.ahead
      ? new Set(input.ahead.filter((n) => !served.has(n))).size
      : rankAmong(claim.metadata.name ?? '', pendingPlainClaims(pool, claim, input.claims, served)),
    MAX_RANK,
  );

  // The free address of our rank: skip the `rank` lowest free ones (left to the claims ahead).
  let pick = allocateAddress(pool.spec, used, claimRef);
  for (let k = 1; k <= rank; k++) {
    used.add(pick.address);
    try {
      pick = allocateAddress(pool.spec, used, claimRef);
    } catch (e) {
      // Fewer free addresses than claims ahead: probe the last free one; the create arbitrates.
      if (e instanceof IpamError && e.code === 'Exhausted') break;
      throw e;
    }
  }
  return { kind: 'create', allocated: pick };
}

/**
 * Does `claim` take the free address of its rank? Not a claim with a requested or pre-allocated
 * address, nor any claim of a pool that allocates at random.
 */
export function spreadsByRank(pool: IPPool, claim: IPClaim): boolean {
  const pre = pool.spec.preAllocations ?? {};
  return (
    requestedIp(claim) === undefined &&
    pre[claim.metadata.name ?? ''] === undefined &&
    pool.spec.allocationStrategy !== 'random'
  );
}

/** The pool's plain claims still waiting (and `claim` itself, last when it is not among them). */
function pendingPlainClaims(
  pool: IPPool,
  claim: IPClaim,
  claims: readonly IPClaim[],
  served: ReadonlySet<string>,
): string[] {
  const pending = claims
    .filter(
      (c) =>
        c.metadata.namespace === pool.metadata.namespace &&
        c.spec?.pool?.name === pool.metadata.name &&
        !isDeleting(meta(c)) &&
        !c.status?.address &&
        !c.status?.errorMessage &&
        spreadsByRank(pool, c) &&
        !served.has(c.metadata.name ?? ''),
    )
    .map((c) => c.metadata.name ?? '');
  pending.push(claim.metadata.name ?? '');
  return pending;
}
