/**
 * deprovision for a deleting NodeClaim (issue 19, Behaviour 8; VMETAL.md): the tenant Node goes
 * (continuing when the tenant cluster cannot be reached), the host is powered off and cleared
 * (`applyDeprovision`) with its original network annotations restored exactly in the same write,
 * the IPClaim and both Secrets are deleted (only when labelled with this claim's uid); once the
 * host is back (`hostReleasable`) its consumerRef and labels go (`releaseHost`); then the finalizer.
 */
import { R } from '../../shared/api/resources.ts';
import type { NodeClaim } from '../../shared/api/vmetal/nodeclaim.ts';
import { FINALIZER } from '../../shared/api/wellknown.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult, requeueAfter } from '../../shared/reconcile/result.ts';
import { releaseClaim } from '../../shared/vmetal/release.ts';

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

/** Deletes the tenant Node `<claim name>`; an unreachable tenant cluster is not waited for. */
async function deleteTenantNode(ctx: ReconcileContext, claim: NodeClaim): Promise<void> {
  let tenant: KubeClient;
  try {
    tenant = await ctx.workloadClient(claim.metadata.namespace!, claim.spec.vClusterRef);
  } catch (e) {
    ctx.log.info('tenant cluster unreachable; its Node is left', {
      claim: `${claim.metadata.namespace}/${claim.metadata.name}`,
      error: e instanceof Error ? e.message : String(e),
    });
    return;
  }
  await tenant.delete(R.Node, undefined, claim.metadata.name!);
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
    await deleteTenantNode(ctx, claim);
    const released = await releaseClaim(ctx, claim, hostNamespace);
    if (released.kind === 'waiting') return requeueAfter(DEPROVISION_RECHECK_SECONDS, released.message);
  }
  await optimisticUpdate(
    ctx.client,
    R.NodeClaim,
    claim.metadata.namespace,
    claim.metadata.name!,
    (c) => {
      if (!c.metadata.finalizers?.includes(FINALIZER.nodeClaim)) return SKIP;
      c.metadata.finalizers = c.metadata.finalizers.filter((f) => f !== FINALIZER.nodeClaim);
    },
    { expectedUid: uid },
  );
  return done('NodeClaim released');
}
