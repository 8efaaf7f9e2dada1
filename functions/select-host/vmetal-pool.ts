/**
 * One IPPool per distinct vMetal network (issue 19, Behaviour 3): deterministic name, in the
 * provider's host namespace, owned by the provider. A network overlapping any other pool (a CAPM3
 * one included, in any namespace) gets no pool: the overlap is reported instead.
 */
import type { IPPool } from '../../shared/api/ipam.ts';
import { apiVersionOf, R } from '../../shared/api/resources.ts';
import type { NodeProvider } from '../../shared/api/vmetal/nodeprovider.ts';
import { VMETAL_PROVIDER_LABEL } from '../../shared/api/wellknown.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { isAlreadyExists } from '../../shared/kube/errors.ts';
import {
  formatOverlaps,
  networkOverlaps,
  poolNameFor,
  poolSpecFor,
  type VMetalNetwork,
} from '../../shared/vmetal/network.ts';

export type PoolOutcome =
  | { kind: 'ready'; name: string }
  | { kind: 'overlap'; name: string; message: string };

export const isOwnedBy = (
  obj: { metadata: { ownerReferences?: { uid?: string | undefined }[] | undefined } },
  uid: string | undefined,
) => Boolean(uid) && (obj.metadata.ownerReferences ?? []).some((r) => r.uid === uid);

export const providerOwnerRef = (p: NodeProvider) => ({
  apiVersion: apiVersionOf(R.NodeProvider),
  kind: 'NodeProvider',
  name: p.metadata.name!,
  uid: p.metadata.uid,
  controller: true,
  blockOwnerDeletion: true,
});

/** Makes sure the network's pool exists (created when absent), or says what it overlaps. */
export async function ensureNetworkPool(
  client: KubeClient,
  provider: NodeProvider,
  namespace: string,
  network: VMetalNetwork,
  pools?: IPPool[],
): Promise<PoolOutcome> {
  const name = poolNameFor(provider.metadata.name!, network);
  const all = pools ?? (await client.list(R.IPPool)).items;
  const overlaps = networkOverlaps(
    network,
    all.map((p) => ({ namespace: p.metadata.namespace, name: p.metadata.name!, spec: p.spec })),
    { namespace, name },
  );
  if (overlaps.length > 0)
    return { kind: 'overlap', name, message: `network ${network.subnet}: ${formatOverlaps(overlaps)}` };
  const existing = all.find((p) => p.metadata.namespace === namespace && p.metadata.name === name);
  if (existing) {
    if (isOwnedBy(existing, provider.metadata.uid)) return { kind: 'ready', name };
    return {
      kind: 'overlap',
      name,
      message: `IPPool ${namespace}/${name} exists and is not NodeProvider ${provider.metadata.name}'s`,
    };
  }
  try {
    await client.create(R.IPPool, {
      metadata: {
        name,
        namespace,
        labels: { [VMETAL_PROVIDER_LABEL]: provider.metadata.name! },
        ownerReferences: [providerOwnerRef(provider)],
      },
      spec: poolSpecFor(network, name),
    });
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    const raced = await client.get(R.IPPool, namespace, name);
    if (!raced || !isOwnedBy(raced, provider.metadata.uid))
      return { kind: 'overlap', name, message: `IPPool ${namespace}/${name} was created by someone else` };
  }
  return { kind: 'ready', name };
}
