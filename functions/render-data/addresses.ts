/**
 * One IPClaim per referenced pool (`<m3d>-<pool>`, controller owner the Metal3Data), and the
 * addresses once IPAM has served them. Waiting is event-driven: the IPClaim's status event wakes
 * the Metal3Data (its controller owner).
 */

import { copyLabels, ipClaimName, isDeleting, isOwnedBy, ownerRef } from '../../shared/allocation/objects.ts';
import type { IPClaim } from '../../shared/api/index.ts';
import { K, R } from '../../shared/api/resources.ts';
import { FINALIZER } from '../../shared/api/wellknown.ts';
import type { AllocatedAddress } from '../../shared/ipam/allocate.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { isAlreadyExists } from '../../shared/kube/errors.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { isMetal3Pool, type PoolRef } from '../../shared/render/index.ts';

export type AddressesResult =
  | { kind: 'ready'; addresses: Record<string, AllocatedAddress> }
  | { kind: 'wait'; reason: string }
  /** Bad input: recorded on the Metal3Data. */
  | { kind: 'error'; message: string };

/** The IPClaim for one pool of a Metal3Data. */
export function newIPClaim(dataRaw: KubeObject, pool: string): IPClaim {
  const ns = dataRaw.metadata.namespace!;
  return {
    metadata: {
      name: ipClaimName(dataRaw.metadata.name!, pool),
      namespace: ns,
      labels: copyLabels(dataRaw),
      // The IPAM finalizer too: allocateIndex would add it as its first write (one write fewer).
      finalizers: [FINALIZER.data, FINALIZER.ipClaim],
      ownerReferences: [ownerRef(R.Metal3Data, dataRaw, { controller: true })],
    },
    spec: { pool: { name: pool, namespace: ns } },
  };
}

/** `created`: how many IPClaims this call created (the caller re-checks its Metal3Data then). */
export async function ensureAddresses(
  client: KubeClient,
  dataRaw: KubeObject,
  pools: readonly PoolRef[],
  created: { count: number } = { count: 0 },
): Promise<AddressesResult> {
  const ns = dataRaw.metadata.namespace!;
  const addresses: Record<string, AllocatedAddress> = {};
  const waiting: string[] = [];
  for (const pool of pools) {
    if (!isMetal3Pool(pool)) {
      return {
        kind: 'error',
        message: `pool ${pool.name} is a ${pool.kind}.${pool.apiGroup}: only ipam.metal3.io IPPools are supported`,
      };
    }
    // A pool that does not exist yet is a wait, and its IPClaim is made all the same (as CAPM3
    // does); the pool's creation wakes the IPClaim (allocateIndex), whose address wakes this
    // Metal3Data. The pool itself is the IPClaim's business: whether it exists is read only to say
    // what a wait is for, as a Table row (its status has an entry per machine; ADR 029).
    const waitFor = async (): Promise<string> =>
      (await client.exists(K.IPPool, ns, pool.name))
        ? pool.name
        : `${pool.name} (IPPool ${ns}/${pool.name} does not exist yet)`;
    const name = ipClaimName(dataRaw.metadata.name!, pool.name);
    let claim = await client.get(R.IPClaim, ns, name);
    if (!claim) {
      try {
        claim = await client.create(R.IPClaim, newIPClaim(dataRaw, pool.name));
        created.count++;
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
        claim = await client.get(R.IPClaim, ns, name);
        if (!claim) {
          waiting.push(await waitFor());
          continue;
        }
      }
    }
    if (!isOwnedBy(claim, dataRaw.metadata.uid)) {
      // A claim of an earlier Metal3Data with this name: let it go, then make ours.
      if (isDeleting(claim)) await releaseForeign(client, claim);
      waiting.push(await waitFor());
      continue;
    }
    const status = claim.status;
    if (status?.errorMessage) {
      return {
        kind: 'error',
        message: `IP Allocation for ${pool.name} failed : ${status.errorMessage}`,
      };
    }
    if (!status?.address?.name) {
      waiting.push(await waitFor());
      continue;
    }
    const address = await client.get(R.IPAddress, ns, status.address.name);
    if (!address) {
      waiting.push(pool.name);
      continue;
    }
    const out: AllocatedAddress = {
      address: address.spec.address,
      prefix: address.spec.prefix,
      dnsServers: address.spec.dnsServers ?? [],
    };
    if (address.spec.gateway) out.gateway = address.spec.gateway;
    addresses[pool.name] = out;
  }
  if (waiting.length > 0) return { kind: 'wait', reason: `waiting for addresses from ${waiting.join(', ')}` };
  return { kind: 'ready', addresses };
}

async function releaseForeign(client: KubeClient, claim: IPClaim): Promise<void> {
  await optimisticUpdate(
    client,
    R.IPClaim,
    claim.metadata.namespace,
    claim.metadata.name!,
    (o) => {
      const before = o.metadata.finalizers ?? [];
      if (!before.includes(FINALIZER.data)) return SKIP;
      o.metadata.finalizers = before.filter((f) => f !== FINALIZER.data);
    },
    { current: claim, expectedUid: claim.metadata.uid },
  );
}
