/**
 * What the IPAM path of allocateIndex reads about a pool's addresses and claims (ADR 010), as
 * data-reads.ts does for templates: with the IPAM CRDs' selectableFields the server returns
 *  - the claim's own IPAddress (`spec.claim.name`), about one object (crash-safe reuse);
 *  - the pool's claims still waiting for an address (`spec.pool.name` and an empty
 *    `status.address.name`), a page of them for the rank spreading: more than a page waiting is a
 *    burst, ranked through the pool's registry of claims being allocated instead (ADR 012);
 * and the addresses already given come from the pool's `status.indexes`, the arbiter staying the
 * create of `<namePrefix>-<ip>`. IPAM CRDs installed without those fields (ip-address-manager's
 * own) make the server answer 400: then every IPAddress and IPClaim of the namespace is listed, as
 * before, for the rest of this process.
 */
import type { KubeClient } from '../kube/client.ts';
import { fieldSelected, fieldSelectedOrAll, fieldSelectedPage, selectorsRefused } from './field-selected.ts';
import { PENDING_PAGE } from './registry.ts';
import { type IPAddressView, type IPClaimView, V } from './views.ts';

/** The IPAddresses that may belong to `claimName` (narrow), or every one of the namespace. */
export const addressesOfClaimCandidates = (
  client: KubeClient,
  namespace: string,
  claimName: string,
): Promise<IPAddressView[]> =>
  fieldSelectedOrAll(client, V.IPAddress, namespace, `spec.claim.name=${claimName}`);

export type AddressReads =
  | {
      narrow: true;
      own: IPAddressView[];
      /** The first PENDING_PAGE waiting claims; `burst` when more wait (ADR 012). */
      pending: IPClaimView[];
      burst: boolean;
    }
  | { narrow: false; addresses: IPAddressView[]; claims: IPClaimView[] };

/**
 * The reads of one allocation attempt for `claimName` on `poolName`; narrow ones only when
 * `narrowAllowed`, and only the claim's own address with `ownOnly` (a burst under way, or the
 * claim delivered in its pool's FIFO group: ADR 012).
 */
export async function addressReads(
  client: KubeClient,
  namespace: string,
  poolName: string,
  claimName: string,
  narrowAllowed: boolean,
  ownOnly = false,
): Promise<AddressReads> {
  if (narrowAllowed && !selectorsRefused(client, V.IPAddress) && !selectorsRefused(client, V.IPClaim)) {
    if (ownOnly) {
      // The claim ranks by the pool's registry (or is the only allocation of its FIFO group): only
      // its own address matters.
      const own = await fieldSelected(client, V.IPAddress, namespace, `spec.claim.name=${claimName}`);
      if (own) return { narrow: true, own, pending: [], burst: true };
    }
    const [own, pending] = await Promise.all([
      fieldSelected(client, V.IPAddress, namespace, `spec.claim.name=${claimName}`),
      fieldSelectedPage(
        client,
        V.IPClaim,
        namespace,
        `spec.pool.name=${poolName},status.address.name=`,
        PENDING_PAGE,
      ),
    ]);
    if (own && pending) return { narrow: true, own, pending: pending.items, burst: !pending.complete };
  }
  const [addresses, claims] = await Promise.all([
    client.list(V.IPAddress, namespace),
    client.list(V.IPClaim, namespace),
  ]);
  return { narrow: false, addresses: addresses.items, claims: claims.items };
}
