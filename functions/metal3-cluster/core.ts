/**
 * reconcileCluster: the InfraCluster contract for a Metal3Cluster. Finalizer, `status.ready` when
 * controlPlaneEndpoint is valid (else a terminal InvalidConfiguration failure), conditions;
 * deletion drops the finalizer once no Metal3Machine of the cluster remains (their deletion events
 * wake this function). `noCloudProvider` / `cloudProviderEnabled` are read by resolveProviderID.
 */
import type { Condition } from '../../shared/api/conditions.ts';
import { R } from '../../shared/api/resources.ts';
import { CAPI_PAUSED_ANNOTATION, CLUSTER_NAME_LABEL, FINALIZER } from '../../shared/api/wellknown.ts';
import { COND, falseCondition, setCondition, trueCondition } from '../../shared/capi/conditions.ts';
import { ownerOf } from '../../shared/capi/lookups.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { ReconcileContext, ReconcileFn } from '../../shared/reconcile/context.ts';
import { MalformedMessageError } from '../../shared/reconcile/errors.ts';
import { done, type ReconcileResult, requeueAfter, terminal } from '../../shared/reconcile/result.ts';
import { endpointProblem } from './endpoint.ts';

export const reconcileCluster: ReconcileFn = async (ctx, msg) => {
  if (msg.kind !== 'Metal3Cluster') return done(`reconcileCluster ignores kind ${msg.kind}`);
  if (!msg.namespace)
    throw new MalformedMessageError(`reconcileCluster: Metal3Cluster ${msg.name} needs a namespace`);
  return reconcileMetal3Cluster(ctx, msg.namespace, msg.name);
};

/** The owner Cluster's name (CAPI sets the ownerRef from Cluster.spec.infrastructureRef), else the label. */
const clusterNameOf = (raw: KubeObject): string | undefined =>
  ownerOf(raw, 'Cluster', 'cluster.x-k8s.io')?.name ?? raw.metadata.labels?.[CLUSTER_NAME_LABEL];

export async function reconcileMetal3Cluster(
  ctx: ReconcileContext,
  ns: string,
  name: string,
): Promise<ReconcileResult> {
  const raw = await ctx.client.get(R.Metal3Cluster, ns, name);
  if (!raw) return done('Metal3Cluster gone');
  const clusterName = clusterNameOf(raw);
  if (raw.metadata.deletionTimestamp) return reconcileDelete(ctx, raw, clusterName);
  const problem = endpointProblem(
    (raw.spec as { controlPlaneEndpoint?: { host?: unknown; port?: unknown } } | undefined)
      ?.controlPlaneEndpoint,
  );
  // The InfraCluster contract: wait for the Cluster's ownerReference (or its cluster-name label);
  // the Cluster controller's write wakes us again. Bad input is recorded even before that.
  if (!clusterName && !problem)
    return done('waiting for the owner Cluster (ownerReference or cluster-name label)');

  const cluster = clusterName ? await ctx.client.get(R.Cluster, ns, clusterName) : undefined;
  if (
    (cluster?.spec as { paused?: boolean } | undefined)?.paused ||
    Object.hasOwn(raw.metadata.annotations ?? {}, CAPI_PAUSED_ANNOTATION)
  ) {
    return requeueAfter(ctx.config.safetyRequeueSeconds, 'paused');
  }

  const withFinalizer = await optimisticUpdate(
    ctx.client,
    R.Metal3Cluster,
    ns,
    name,
    (o) => {
      if (!clusterName || o.metadata.deletionTimestamp || o.metadata.finalizers?.includes(FINALIZER.cluster))
        return SKIP;
      o.metadata.finalizers = [...(o.metadata.finalizers ?? []), FINALIZER.cluster];
    },
    { current: raw, expectedUid: raw.metadata.uid },
  );
  if (withFinalizer.outcome === 'gone') return done('Metal3Cluster gone');

  const now = ctx.now();
  const res = await optimisticUpdate(
    ctx.client,
    R.Metal3Cluster,
    ns,
    name,
    (o) => {
      o.status ??= {};
      const s = o.status as Record<string, unknown> & { conditions?: Condition[] };
      let conds = s.conditions;
      if (problem) {
        s.ready = false;
        s.failureReason = 'InvalidConfiguration';
        s.failureMessage = problem;
        conds = setCondition(
          conds,
          falseCondition(COND.BaremetalInfrastructureReady, 'InvalidConfiguration', 'Error', problem),
          now,
        );
        conds = setCondition(
          conds,
          falseCondition(COND.Ready, 'InvalidConfiguration', 'Error', problem),
          now,
        );
      } else {
        s.ready = true;
        delete s.failureReason;
        delete s.failureMessage;
        conds = setCondition(conds, trueCondition(COND.BaremetalInfrastructureReady), now);
        conds = setCondition(conds, trueCondition(COND.Ready), now);
      }
      s.conditions = conds;
    },
    { status: true, current: withFinalizer.object, expectedUid: raw.metadata.uid },
  );
  if (problem) {
    if (res.outcome === 'updated') await ctx.events.record(raw, 'Warning', 'InvalidConfiguration', problem);
    return terminal('InvalidConfiguration', problem);
  }
  if (res.outcome === 'updated' && (raw.status as { ready?: boolean } | undefined)?.ready !== true) {
    await ctx.events.record(raw, 'Normal', 'Ready', 'control plane endpoint is valid: infrastructure ready');
  }
  return done('ready');
}

async function reconcileDelete(
  ctx: ReconcileContext,
  raw: KubeObject,
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
    (o) => {
      if (!o.metadata.finalizers?.includes(FINALIZER.cluster)) return SKIP;
      o.metadata.finalizers = o.metadata.finalizers.filter((f) => f !== FINALIZER.cluster);
    },
    { current: raw, expectedUid: raw.metadata.uid },
  );
  return done('finalizer removed');
}

/** The function registry expects `reconcile` in every core. */
export const reconcile: ReconcileFn = reconcileCluster;
