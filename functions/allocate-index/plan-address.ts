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
import type { IPAddressView, IPClaimView } from '../../shared/allocation/views.ts';
import type { IPPool } from '../../shared/api/index.ts';
import { REQUESTED_IP_ANNOTATION } from '../../shared/api/wellknown.ts';
import { type AllocatedAddress, allocateAddress, UsedAddresses } from '../../shared/ipam/allocate.ts';
import { IpamError } from '../../shared/ipam/errors.ts';
import type { KubeObject } from '../../shared/kube/types.ts';

/**
 * Beyond this many pending claims ahead, a claim probes from the MAX_RANK-th free address (each
 * step is one O(used) scan, so the cap only bounds pathological backlogs).
 */
export const MAX_RANK = 4096;

/** An IPAddress that holds an address (as listed: its other fields may be missing). */
export type HeldAddress<A extends IPAddressView = IPAddressView> = A & {
  spec: NonNullable<IPAddressView['spec']> & { address: string };
};
const holdsAddress = <A extends IPAddressView>(a: A): a is HeldAddress<A> =>
  typeof a.spec?.address === 'string';

export type AddressPlan<A extends IPAddressView = IPAddressView> =
  | { kind: 'reuse'; address: HeldAddress<A> }
  | { kind: 'create'; allocated: AllocatedAddress };

/** Addresses of the pool (by spec.pool.name in the pool's namespace) that hold an address. */
export function poolAddresses<A extends IPAddressView>(
  pool: KubeObject,
  addresses: readonly A[],
): HeldAddress<A>[] {
  return addresses
    .filter((a): a is HeldAddress<A> => holdsAddress(a))
    .filter(
      (a) => a.metadata.namespace === pool.metadata.namespace && a.spec.pool?.name === pool.metadata.name,
    );
}

const requestedIp = (c: KubeObject): string | undefined =>
  c.metadata.annotations?.[REQUESTED_IP_ANNOTATION] || undefined;

export interface AddressPlanInput<A extends IPAddressView = IPAddressView> {
  pool: IPPool;
  claim: KubeObject;
  /** Every IPAddress of the namespace, or (narrow reads, ADR 010) the claim's own candidates. */
  addresses: readonly A[];
  /** Every IPClaim of the namespace, or (narrow reads) the pool's claims still waiting. */
  claims: readonly IPClaimView[];
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
export function planAddress<A extends IPAddressView>(input: AddressPlanInput<A>): AddressPlan<A> {
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
export function spreadsByRank(pool: IPPool, claim: KubeObject): boolean {
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
  claim: KubeObject,
  claims: readonly IPClaimView[],
  served: ReadonlySet<string>,
): string[] {
  const pending = claims
    .filter(
      (c) =>
        c.metadata.namespace === pool.metadata.namespace &&
        c.spec?.pool?.name === pool.metadata.name &&
        !isDeleting(c) &&
        !c.status?.address &&
        !c.status?.errorMessage &&
        spreadsByRank(pool, c) &&
        !served.has(c.metadata.name ?? ''),
    )
    .map((c) => c.metadata.name ?? '');
  pending.push(claim.metadata.name ?? '');
  return pending;
}
