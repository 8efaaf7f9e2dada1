/**
 * The cluster label on a host's BMC credentials Secret (spec §5 and §9 step 3): CAPM3 labels the
 * Secret `spec.bmc.credentialsName` (in the host's namespace) with `cluster.x-k8s.io/cluster-name`
 * when it associates the host, so that `clusterctl move` carries the credentials with the cluster,
 * and removes the label again on delete when it still names that cluster.
 *
 * Both writes go through the optimistic helper (resourceVersion-checked, re-read on a conflict)
 * and are idempotent: nothing is written when the label is already right, and a missing Secret
 * (or a host without `credentialsName`) is no write and no error, as in CAPM3 (NotFound ignored):
 * it must never block association or release. Only the label is changed; the Secret's data is
 * never looked at, logged or put in an Event (log fields name the Secret, nothing more).
 */

import type { BareMetalHost } from '../api/baremetalhost.ts';
import { R } from '../api/resources.ts';
import { CLUSTER_NAME_LABEL } from '../api/wellknown.ts';
import { optimisticUpdate, SKIP } from '../kube/optimistic.ts';
import type { ReconcileContext } from '../reconcile/context.ts';

/** What happened to the BMC Secret's label. */
export type BmcSecretOutcome =
  /** The host names no BMC credentials Secret. */
  | 'no-secret-ref'
  /** The Secret does not exist (not an error: the baremetal-operator reports it on the host). */
  | 'missing'
  /** Already as wanted: nothing written. */
  | 'unchanged'
  /** Removal only: the label names another cluster (or no cluster name is known): left alone. */
  | 'foreign'
  | 'labelled'
  | 'unlabelled';

/** `{namespace, name}` of the host's BMC credentials Secret, when it names one. */
export function bmcSecretRef(host: BareMetalHost): { namespace: string; name: string } | undefined {
  const name = host.spec?.bmc?.credentialsName;
  if (typeof name !== 'string' || !name || !host.metadata.namespace) return undefined;
  return { namespace: host.metadata.namespace, name };
}

/**
 * Labels the BMC Secret of `host` with `cluster.x-k8s.io/cluster-name: <clusterName>` (after the
 * host claim succeeded; a value naming another cluster is overwritten, as CAPM3 does).
 */
export async function labelBmcSecret(
  ctx: ReconcileContext,
  host: BareMetalHost,
  clusterName: string,
): Promise<BmcSecretOutcome> {
  const ref = bmcSecretRef(host);
  if (!ref) return 'no-secret-ref';
  const res = await optimisticUpdate(ctx.client, R.Secret, ref.namespace, ref.name, (s) => {
    if (s.metadata.labels?.[CLUSTER_NAME_LABEL] === clusterName) return SKIP;
    s.metadata.labels = { ...(s.metadata.labels ?? {}), [CLUSTER_NAME_LABEL]: clusterName };
  });
  if (res.outcome === 'gone') {
    ctx.log.warn(
      'BMC credentials Secret not found: not labelled for the cluster (clusterctl move will not carry it)',
      {
        host: `${host.metadata.namespace}/${host.metadata.name}`,
        bmcSecret: `${ref.namespace}/${ref.name}`,
        cluster: clusterName,
      },
    );
    return 'missing';
  }
  return res.outcome === 'updated' ? 'labelled' : 'unchanged';
}

/**
 * Removes `cluster.x-k8s.io/cluster-name` from the BMC Secret of `host`, only when it equals
 * `clusterName` (another cluster's value, or none, is left alone).
 */
export async function unlabelBmcSecret(
  ctx: ReconcileContext,
  host: BareMetalHost,
  clusterName: string | undefined,
): Promise<BmcSecretOutcome> {
  const ref = bmcSecretRef(host);
  if (!ref) return 'no-secret-ref';
  if (!clusterName) return 'foreign';
  let foreign = false;
  const res = await optimisticUpdate(ctx.client, R.Secret, ref.namespace, ref.name, (s) => {
    const value = s.metadata.labels?.[CLUSTER_NAME_LABEL];
    foreign = value !== undefined && value !== clusterName;
    if (value !== clusterName) return SKIP;
    const { [CLUSTER_NAME_LABEL]: _drop, ...rest } = s.metadata.labels ?? {};
    s.metadata.labels = rest;
  });
  if (res.outcome === 'gone') {
    ctx.log.debug('BMC credentials Secret not found: no label to remove', {
      host: `${host.metadata.namespace}/${host.metadata.name}`,
      bmcSecret: `${ref.namespace}/${ref.name}`,
    });
    return 'missing';
  }
  if (res.outcome === 'updated') return 'unlabelled';
  return foreign ? 'foreign' : 'unchanged';
}
