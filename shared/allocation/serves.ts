/**
 * Which allocation serves which claim: the Metal3Data of a Metal3DataClaim, the IPAddress of an
 * IPClaim. Used where allocations are made (allocateIndex) and where they are released.
 */
import type { KubeObject } from '../kube/types.ts';
import { isOwnedBy } from './objects.ts';
import type { IPAddressView, Metal3DataView } from './views.ts';

/** Is `data` the Metal3Data of `claim` (spec.claim names it and no other claim object owns it)? */
export function isDataOfClaim(data: Metal3DataView, claim: KubeObject): boolean {
  if (data.spec?.claim?.name !== claim.metadata.name) return false;
  const claimNs = data.spec?.claim?.namespace || data.metadata.namespace;
  if (claimNs !== claim.metadata.namespace) return false;
  const claimOwners = (data.metadata.ownerReferences ?? []).filter((r) => r.kind === 'Metal3DataClaim');
  // A Metal3Data written by the reference (or restored without owners) is matched by name alone;
  // one owned by an earlier claim of the same name is not ours.
  return claimOwners.length === 0 || isOwnedBy(data, claim.metadata.uid);
}

/** Is `address` the IPAddress of `claim` (spec.claim names it; owned by it when it has a claim owner)? */
export function isAddressOfClaim(address: IPAddressView, claim: KubeObject): boolean {
  if (address.spec?.claim?.name !== claim.metadata.name) return false;
  const claimOwners = (address.metadata.ownerReferences ?? []).filter((r) => r.kind === 'IPClaim');
  return claimOwners.length === 0 || isOwnedBy(address, claim.metadata.uid);
}
