/**
 * The tenant Node of a deleting NodeClaim (issue 19, Behaviour 8): cordoned (`spec.unschedulable`,
 * resourceVersion-checked), its Pods evicted through the Eviction subresource as `kubectl drain`
 * does (shared/vmetal/drain.ts: DaemonSet and mirror Pods skipped; a PodDisruptionBudget's 429 is
 * a wait), then deleted; the drain is bounded by DRAIN_TIMEOUT_SECONDS from the claim's deletion,
 * after which the Node is deleted anyway. A tenant cluster that cannot be reached is not waited for.
 */
import type { Pod } from '../../shared/api/core.ts';
import { R } from '../../shared/api/resources.ts';
import type { NodeClaim } from '../../shared/api/vmetal/nodeclaim.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { isForbidden, isNotFound, KubeApiError } from '../../shared/kube/errors.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import { isWorkloadUnavailable } from '../../shared/kube/workload.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { drainOutcome, planDrain } from '../../shared/vmetal/drain.ts';

export type NodeRelease = { kind: 'done'; note: string } | { kind: 'wait'; message: string };

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The Pods bound to the Node; none when the tenant serves no Pods (404 on the collection). */
async function podsOn(
  tenant: KubeClient,
  node: string,
): Promise<Pod[] | 'not served' | { forbidden: string }> {
  try {
    return (await tenant.list(R.Pod, undefined, { fieldSelector: `spec.nodeName=${node}` })).items;
  } catch (e) {
    if (isNotFound(e)) return 'not served';
    if (isForbidden(e)) return { forbidden: `list pods: ${e.message}` };
    throw e;
  }
}

export async function drainTenantNode(ctx: ReconcileContext, claim: NodeClaim): Promise<NodeRelease> {
  const node = claim.metadata.name!;
  const log = ctx.log.child({ claim: `${claim.metadata.namespace}/${node}` });
  let tenant: KubeClient;
  let current: Awaited<ReturnType<KubeClient['get']>>;
  try {
    tenant = await ctx.workloadClient(claim.metadata.namespace!, claim.spec.vClusterRef);
    current = await tenant.get(R.Node, undefined, node);
  } catch (e) {
    // No kubeconfig Secret, or no answer: the tenant cluster is gone or away; its Node is not waited for.
    if (!isWorkloadUnavailable(e) && e instanceof KubeApiError) throw e;
    log.info('tenant cluster unreachable; its Node is left', { error: errorText(e) });
    return { kind: 'done', note: 'tenant cluster unreachable' };
  }
  if (!current) return { kind: 'done', note: `Node ${node} absent` };

  const cordoned = await optimisticUpdate(tenant, R.Node, undefined, node, (n) => {
    if (n.spec?.unschedulable === true) return SKIP;
    n.spec = { ...n.spec, unschedulable: true };
  });
  if (cordoned.outcome === 'gone') return { kind: 'done', note: `Node ${node} gone` };

  const pods = await podsOn(tenant, node);
  let left = 0;
  const blocked: string[] = [];
  let forbidden: string | undefined;
  if (pods === 'not served') {
    log.info('the tenant serves no Pods: nothing to drain', { node });
  } else if ('forbidden' in pods) {
    forbidden = pods.forbidden;
  } else {
    const plan = planDrain(pods);
    left = plan.remaining.length;
    for (const pod of plan.evict) {
      const ref = `${pod.metadata.namespace}/${pod.metadata.name}`;
      try {
        if (!(await tenant.evict(pod.metadata.namespace!, pod.metadata.name!))) left--;
      } catch (e) {
        if (isForbidden(e)) {
          forbidden = `create pods/eviction ${ref}: ${e.message}`;
          continue;
        }
        // 429: a PodDisruptionBudget allows no disruption now; look again later, as kubectl drain does.
        if (!(e instanceof KubeApiError) || e.code !== 429) throw e;
        blocked.push(`${ref}: ${e.message}`);
      }
    }
  }
  const deletedAt = claim.metadata.deletionTimestamp
    ? Date.parse(claim.metadata.deletionTimestamp)
    : Number.NaN;
  const elapsedSeconds = Number.isNaN(deletedAt) ? 0 : (ctx.now().getTime() - deletedAt) / 1000;
  const outcome = drainOutcome({ node, left, blocked, elapsedSeconds, forbidden });
  if (outcome.kind === 'wait') return outcome;
  if (outcome.kind === 'timedOut') log.warn('drain timed out', { node, message: outcome.message });
  await tenant.delete(R.Node, undefined, node, { preconditions: { uid: current.metadata.uid! } });
  return { kind: 'done', note: outcome.kind === 'timedOut' ? outcome.message : outcome.note };
}
