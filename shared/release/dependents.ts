/**
 * The IPClaims and rendered Secrets of one Metal3Data, read by their deterministic names instead
 * of listing the namespace (one full list per released Metal3Data made a scale-down of N machines
 * read ~N² objects):
 *  - IPClaims are `<m3d>-<pool>` and live in the Metal3Data's namespace with their pool, which
 *    cannot go away before them (its finalizer waits for its claims): list the namespace's IPPools'
 *    names (a handful) and GET one name per pool. With more pools than MAX_POOL_GETS, one IPClaim list
 *    is cheaper and is used instead. An IPClaim carries our finalizer: one missed would never go.
 *  - Secrets are the ones the Metal3Data's spec names, and `<m3m>-metadata-<index>` /
 *    `<m3m>-networkdata-<index>` (the claim is named after its Metal3Machine) for a render that
 *    crashed before it recorded them. A Secret of another name (a hand-made claim) is still ours by
 *    its controller owner reference: garbage collection deletes it with the Metal3Data. No list:
 *    the functions' role does not let them enumerate Secrets.
 * Only objects owned by this Metal3Data (by uid) are returned.
 */
import { ipClaimName, isOwnedBy, metaDataSecretName, networkDataSecretName } from '../allocation/objects.ts';
import type { IPClaimView, Metal3DataView } from '../allocation/views.ts';
import { V } from '../allocation/views.ts';
import type { Secret } from '../api/core.ts';
import { R } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';

/** Beyond this many pools in the namespace, one IPClaim list instead of a GET per pool. */
export const MAX_POOL_GETS = 16;

const present = <T>(xs: (T | undefined)[]): T[] => xs.filter((x): x is T => x !== undefined);

/** The IPClaims owned by the Metal3Data `dataName` (uid `dataUid`). */
export async function ipClaimsOfData(
  client: KubeClient,
  namespace: string,
  dataName: string,
  dataUid: string,
): Promise<IPClaimView[]> {
  // Names only: a pool's status has an entry per machine.
  const pools = await client.listNames(V.IPPool, namespace);
  const candidates =
    pools.length > MAX_POOL_GETS
      ? (await client.list(V.IPClaim, namespace)).items
      : present(
          await Promise.all(
            pools.map((pool) => client.get(V.IPClaim, namespace, ipClaimName(dataName, pool))),
          ),
        );
  return candidates.filter((c) => isOwnedBy(c, dataUid));
}

/** The rendered Secrets owned by the Metal3Data `dataRaw`. */
export async function secretsOfData(client: KubeClient, dataRaw: Metal3DataView): Promise<Secret[]> {
  const ns = dataRaw.metadata.namespace!;
  const data = dataRaw;
  const names = new Set<string>();
  for (const ref of [data.spec?.metaData, data.spec?.networkData]) if (ref?.name) names.add(ref.name);
  const claim = data.spec?.claim?.name;
  const index = data.spec?.index;
  if (claim && index !== undefined && Number.isInteger(index)) {
    names.add(metaDataSecretName(claim, index));
    names.add(networkDataSecretName(claim, index));
  }
  // A Metal3Data with neither a claim nor an index was never rendered: it has no Secret to find.
  const found = present(await Promise.all([...names].map((n) => client.get(R.Secret, ns, n))));
  return found.filter((s) => isOwnedBy(s, dataRaw.metadata.uid));
}
