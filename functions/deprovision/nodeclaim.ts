/**
 * deprovision for a deleting NodeClaim (issue 19, Behaviour 8; ADR 018): the tenant Node is
 * cordoned, drained and deleted (./drain.ts; continuing when the tenant cluster cannot be
 * reached), then the claim's host and address are released (shared/vmetal/release.ts, shared with
 * renderData's failure path); then the finalizer.
 */
import { removeFinalizer } from '../../shared/allocation/objects.ts';
import { R } from '../../shared/api/resources.ts';
import type { NodeClaim } from '../../shared/api/vmetal/nodeclaim.ts';
import { FINALIZER } from '../../shared/api/wellknown.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult, requeueAfter } from '../../shared/reconcile/result.ts';
import { DRAIN_RECHECK_SECONDS } from '../../shared/vmetal/drain.ts';
import { releaseClaim } from '../../shared/vmetal/release.ts';
import { drainTenantNode } from './drain.ts';

/** How often a release waiting for the host's deprovisioning looks again (events wake it too). */
const DEPROVISION_RECHECK_SECONDS = 15;

/** The claim's host namespace: its status, else its provider's (a claim that never got a host). */
async function hostNamespaceOf(ctx: ReconcileContext, claim: NodeClaim): Promise<string | undefined> {
  if (claim.status?.hostNamespace) return claim.status.hostNamespace;
  const typeName = claim.spec.typeRef || claim.status?.nodeType;
  const type = typeName ? await ctx.client.get(R.NodeType, undefined, typeName) : undefined;
  const providerName = claim.spec.providerRef || type?.spec.providerRef;
  const provider = providerName ? await ctx.client.get(R.NodeProvider, undefined, providerName) : undefined;
  return provider?.spec.metal3?.clusterRef?.namespace;
}

export async function deprovisionNodeClaim(
  ctx: ReconcileContext,
  claim: NodeClaim,
): Promise<ReconcileResult> {
  if (!claim.metadata.deletionTimestamp) return done('NodeClaim not deleting');
  if (!claim.metadata.finalizers?.includes(FINALIZER.nodeClaim)) return done('NodeClaim already released');
  const uid = claim.metadata.uid!;
  const hostNamespace = await hostNamespaceOf(ctx, claim);
  if (hostNamespace) {
    // Cordon, drain and delete the tenant Node first (its Pods leave before the machine goes).
    const node = await drainTenantNode(ctx, claim);
    if (node.kind === 'wait') return requeueAfter(DRAIN_RECHECK_SECONDS, node.message);
    const released = await releaseClaim(ctx, claim, hostNamespace);
    if (released.kind === 'waiting') return requeueAfter(DEPROVISION_RECHECK_SECONDS, released.message);
  }
  await optimisticUpdate(
    ctx.client,
    R.NodeClaim,
    claim.metadata.namespace,
    claim.metadata.name!,
    (c) => (removeFinalizer(c, FINALIZER.nodeClaim) ? undefined : SKIP),
    { expectedUid: uid },
  );
  return done('NodeClaim released');
}
