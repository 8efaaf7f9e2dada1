/**
 * What the IPAM path of allocateIndex reads about a pool's addresses and claims (ADR 010), as
 * data-reads.ts does for templates: with the IPAM CRDs' selectableFields the server returns
 *  - the claim's own IPAddress (`spec.claim.name`), about one object (crash-safe reuse);
 *  - the pool's claims still waiting for an address (`spec.pool.name` and an empty
 *    `status.address.name`), for the rank spreading — the backlog, not the fleet;
 * and the addresses already given come from the pool's `status.indexes`, the arbiter staying the
 * create of `<namePrefix>-<ip>`. IPAM CRDs installed without those fields (ip-address-manager's
 * own) make the server answer 400: then every IPAddress and IPClaim of the namespace is listed, as
 * before, for the rest of this process.
 */
import { R } from '../../shared/api/index.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { fieldSelected, fieldSelectedOrAll, selectorsRefused } from './field-selected.ts';

/** The IPAddresses that may belong to `claimName` (narrow), or every one of the namespace. */
export const addressesOfClaimCandidates = (
  client: KubeClient,
  namespace: string,
  claimName: string,
): Promise<KubeObject[]> =>
  fieldSelectedOrAll(client, R.IPAddress, namespace, `spec.claim.name=${claimName}`);

export type AddressReads =
  | { narrow: true; own: KubeObject[]; pending: KubeObject[] }
  | { narrow: false; addresses: KubeObject[]; claims: KubeObject[] };

/** The reads of one allocation attempt for `claimName` on `poolName`; narrow ones only when `narrowAllowed`. */
export async function addressReads(
  client: KubeClient,
  namespace: string,
  poolName: string,
  claimName: string,
  narrowAllowed: boolean,
): Promise<AddressReads> {
  if (narrowAllowed && !selectorsRefused(client, R.IPAddress) && !selectorsRefused(client, R.IPClaim)) {
    const [own, pending] = await Promise.all([
      fieldSelected(client, R.IPAddress, namespace, `spec.claim.name=${claimName}`),
      fieldSelected(client, R.IPClaim, namespace, `spec.pool.name=${poolName},status.address.name=`),
    ]);
    if (own && pending) return { narrow: true, own, pending };
  }
  const [addresses, claims] = await Promise.all([
    client.list(R.IPAddress, namespace),
    client.list(R.IPClaim, namespace),
  ]);
  return { narrow: false, addresses: addresses.items, claims: claims.items };
}
