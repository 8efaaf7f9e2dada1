/**
 * resolveProviderID for a NodeClaim (issue 19, Behaviours 6 and 7): Provisioned when its held host
 * is `provisioned`, Joined and phase Available once the tenant cluster's Node `<claim>` carries the
 * node-type label; a host in error fails the claim with its errorMessage. Reads, the pure decision
 * (shared/vmetal/joined.ts), one status write (shared/vmetal/status.ts).
 */
import { R } from '../../shared/api/resources.ts';
import type { NodeClaim } from '../../shared/api/vmetal/nodeclaim.ts';
import { hostHeldBy } from '../../shared/hosts/consumer.ts';
import { hostErrorMessage, hostState } from '../../shared/hosts/eligibility.ts';
import { KubeApiError } from '../../shared/kube/errors.ts';
import { isWorkloadUnavailable } from '../../shared/kube/workload.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult, requeueAfter, terminal } from '../../shared/reconcile/result.ts';
import { decideJoinStatus, JOIN_REASON, type JoinStatusInput } from '../../shared/vmetal/joined.ts';
import { claimConsumer } from '../../shared/vmetal/setting.ts';
import { updateClaimStatus } from '../../shared/vmetal/status.ts';

/** The tenant's Node `<claim>` (its labels), or why the tenant could not be read. */
async function observeTenant(ctx: ReconcileContext, claim: NodeClaim): Promise<JoinStatusInput['tenant']> {
  try {
    const tenant = await ctx.workloadClient(claim.metadata.namespace!, claim.spec.vClusterRef);
    const node = await tenant.get(R.Node, undefined, claim.metadata.name!);
    return { kind: 'node', labels: node ? (node.metadata.labels ?? {}) : undefined };
  } catch (e) {
    // No kubeconfig Secret yet, or the tenant's API server does not answer: wait, saying so. An
    // answer of the server (403, 500, ...) is an error of this pass, retried by the queue.
    if (isWorkloadUnavailable(e) || !(e instanceof KubeApiError))
      return {
        kind: 'unreachable',
        message: `tenant cluster ${claim.metadata.namespace}/${claim.spec.vClusterRef}: ${e instanceof Error ? e.message : String(e)}`,
      };
    throw e;
  }
}

export async function reconcileClaimJoin(ctx: ReconcileContext, claim: NodeClaim): Promise<ReconcileResult> {
  if (claim.metadata.deletionTimestamp) return done('NodeClaim is being deleted');
  const st = claim.status ?? {};
  // selectHost's bad input is terminal until the claim changes: not ours to overwrite.
  if (st.phase === 'Failed' && st.reason !== JOIN_REASON.HostError)
    return done(`NodeClaim failed (${st.reason ?? ''}); left as is`);
  if (!st.host || !st.hostNamespace) return done('no host held yet (selectHost)');
  const host = await ctx.client.get(R.BareMetalHost, st.hostNamespace, st.host);
  if (!host) return done(`BareMetalHost ${st.hostNamespace}/${st.host} not found`);
  if (!hostHeldBy(host, claimConsumer(claim, st.hostNamespace)))
    return done(`BareMetalHost ${st.hostNamespace}/${st.host} is not held by this claim`);
  const input: JoinStatusInput = {
    claimName: claim.metadata.name!,
    nodeType: st.nodeType || claim.spec.typeRef || undefined,
    host: {
      namespace: st.hostNamespace,
      name: st.host,
      state: hostState(host),
      errorMessage: hostErrorMessage(host),
    },
  };
  let d = decideJoinStatus(input);
  if (d.kind === 'readTenant') d = decideJoinStatus({ ...input, tenant: await observeTenant(ctx, claim) });
  if (d.kind === 'readTenant') throw new Error('decideJoinStatus asked for the tenant twice');
  await updateClaimStatus(ctx, claim, d.change);
  const why = d.change.message ?? `NodeClaim ${d.change.phase}`;
  if (d.next === 'failed') return terminal(d.change.reason ?? JOIN_REASON.HostError, why);
  // The tenant's Node events wake the claim; the requeue is a safety net.
  if (d.next === 'wait') return requeueAfter(ctx.config.safetyRequeueSeconds, why);
  return done(why);
}
