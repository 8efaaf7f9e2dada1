/**
 * reconcileCluster: the InfraCluster contract for a Metal3Cluster. Finalizer, `status.ready` when
 * controlPlaneEndpoint is valid (else a terminal InvalidConfiguration failure), conditions;
 * deletion drops the finalizer once no Metal3Machine of the cluster remains (their deletion events
 * wake this function). `noCloudProvider` / `cloudProviderEnabled` are read by resolveProviderID.
 */
import { addFinalizer, removeFinalizer, statusOf } from '../../shared/allocation/objects.ts';
import { ConditionsSchema } from '../../shared/api/conditions.ts';
import type { Metal3Cluster } from '../../shared/api/metal3cluster.ts';
import { envelopeOf, K, R } from '../../shared/api/resources.ts';
import { CLUSTER_NAME_LABEL, FINALIZER } from '../../shared/api/wellknown.ts';
import { COND, falseCondition, setCondition, trueCondition } from '../../shared/capi/conditions.ts';
import { ownerOf } from '../../shared/capi/lookups.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { ReconcileContext, ReconcileFn } from '../../shared/reconcile/context.ts';
import type { TerminalError } from '../../shared/reconcile/errors.ts';
import { reconcileKinds, reconcileObject } from '../../shared/reconcile/object.ts';
import { done, type ReconcileResult, requeueAfter, terminal } from '../../shared/reconcile/result.ts';
import { endpointProblem } from './endpoint.ts';

/** The owner Cluster's name (CAPI sets the ownerRef from Cluster.spec.infrastructureRef), else the label. */
const clusterNameOf = (raw: KubeObject): string | undefined =>
  ownerOf(raw, 'Cluster', 'cluster.x-k8s.io')?.name ?? raw.metadata.labels?.[CLUSTER_NAME_LABEL];

/** A Metal3Cluster, parsed by the opening (shared/reconcile/object.ts). */
export async function reconcileMetal3Cluster(
  ctx: ReconcileContext,
  raw: Metal3Cluster,
): Promise<ReconcileResult> {
  const ns = raw.metadata.namespace!;
  const name = raw.metadata.name!;
  const clusterName = clusterNameOf(raw);
  if (raw.metadata.deletionTimestamp) return reconcileDelete(ctx, raw, clusterName);
  const problem = endpointProblem(raw.spec.controlPlaneEndpoint);
  // The InfraCluster contract: wait for the Cluster's ownerReference (or its cluster-name label);
  // the Cluster controller's write wakes us again. Bad input is recorded even before that.
  if (!clusterName && !problem)
    return done('waiting for the owner Cluster (ownerReference or cluster-name label)');

  const withFinalizer = await optimisticUpdate(
    ctx.client,
    R.Metal3Cluster,
    ns,
    name,
    (o) => {
      if (!clusterName || o.metadata.deletionTimestamp || !addFinalizer(o, FINALIZER.cluster)) return SKIP;
    },
    { current: raw, expectedUid: raw.metadata.uid },
  );
  if (withFinalizer.outcome === 'gone') return done('Metal3Cluster gone');

  if (problem) return recordFailure(ctx, withFinalizer.object, 'InvalidConfiguration', problem);
  const now = ctx.now();
  const res = await optimisticUpdate(
    ctx.client,
    R.Metal3Cluster,
    ns,
    name,
    (o) => {
      const { failureReason: _r, failureMessage: _m, ...s } = o.status ?? {};
      let conds = setCondition(s.conditions, trueCondition(COND.BaremetalInfrastructureReady), now);
      conds = setCondition(conds, trueCondition(COND.Ready), now);
      o.status = { ...s, ready: true, conditions: conds };
    },
    { status: true, current: withFinalizer.object, expectedUid: raw.metadata.uid },
  );
  if (res.outcome === 'updated' && raw.status?.ready !== true) {
    await ctx.events.record(raw, 'Normal', 'Ready', 'control plane endpoint is valid: infrastructure ready');
  }
  return done('ready');
}

/**
 * A terminal failure on the cluster (ready false, failureReason/failureMessage, the
 * BaremetalInfrastructureReady and Ready conditions) and a Warning Event when that changed
 * anything: recorded once. The cluster is read through its envelope, so a cluster that fails its
 * schema gets its failure recorded too.
 */
async function recordFailure(
  ctx: ReconcileContext,
  obj: KubeObject,
  reason: string,
  message: string,
): Promise<ReconcileResult> {
  const now = ctx.now();
  const res = await optimisticUpdate(
    ctx.client,
    METAL3CLUSTER_ENVELOPE,
    obj.metadata.namespace,
    obj.metadata.name!,
    (o) => {
      const s = statusOf(o);
      s.ready = false;
      s.failureReason = reason;
      s.failureMessage = message;
      // Conditions that do not parse (written by hand) are replaced by ours.
      let conds = setCondition(
        ConditionsSchema.safeParse(s.conditions).data,
        falseCondition(COND.BaremetalInfrastructureReady, reason, 'Error', message),
        now,
      );
      conds = setCondition(conds, falseCondition(COND.Ready, reason, 'Error', message), now);
      s.conditions = conds;
    },
    { status: true, current: obj, expectedUid: obj.metadata.uid },
  );
  if (res.outcome === 'updated') await ctx.events.record(obj, 'Warning', reason, message);
  return terminal(reason, message);
}

const METAL3CLUSTER_ENVELOPE = envelopeOf(K.Metal3Cluster);

async function reconcileDelete(
  ctx: ReconcileContext,
  raw: Metal3Cluster,
  clusterName: string | undefined,
): Promise<ReconcileResult> {
  const ns = raw.metadata.namespace!;
  if (!raw.metadata.finalizers?.includes(FINALIZER.cluster)) return done('finalizer already removed');
  if (clusterName) {
    const { items } = await ctx.client.list(R.Metal3Machine, ns, {
      labelSelector: `${CLUSTER_NAME_LABEL}=${clusterName}`,
    });
    if (items.length > 0) {
      return requeueAfter(
        ctx.config.safetyRequeueSeconds,
        `${items.length} Metal3Machine(s) of cluster ${clusterName} remain`,
      );
    }
  }
  await optimisticUpdate(
    ctx.client,
    R.Metal3Cluster,
    ns,
    raw.metadata.name!,
    (o) => (removeFinalizer(o, FINALIZER.cluster) ? undefined : SKIP),
    { current: raw, expectedUid: raw.metadata.uid },
  );
  return done('finalizer removed');
}

export const reconcile: ReconcileFn = reconcileKinds(
  {
    Metal3Cluster: reconcileObject({
      resource: R.Metal3Cluster,
      gone: 'Metal3Cluster gone',
      reconcile: reconcileMetal3Cluster,
      recordFailure: (ctx, obj, err: TerminalError) => recordFailure(ctx, obj, err.reason, err.message),
      // Paused (the Cluster or the Metal3Cluster), even a deletion waits until unpaused.
      cluster: clusterNameOf,
    }),
  },
  (kind) => `reconcileCluster ignores kind ${kind}`,
);
/** The same core under its function's name. */
export const reconcileCluster = reconcile;
