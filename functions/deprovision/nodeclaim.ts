/**
 * deprovision for a deleting NodeClaim (issue 19, Behaviour 8; VMETAL.md): the tenant Node is
 * cordoned, drained and deleted (./drain.ts; continuing when the tenant cluster cannot be reached), the host is powered off and cleared
 * (`applyDeprovision`) with its original network annotations restored exactly in the same write,
 * the IPClaim and both Secrets are deleted (only when labelled with this claim's uid); once the
 * host is back (`hostReleasable`) its consumerRef and labels go (`releaseHost`); then the finalizer.
 */
import { envelopeOf, R, type ResourceType } from '../../shared/api/resources.ts';
import type { NodeClaim } from '../../shared/api/vmetal/nodeclaim.ts';
import { FINALIZER, VMETAL_CLAIM_UID_LABEL } from '../../shared/api/wellknown.ts';
import { hostsHeldBy } from '../../shared/hosts/claim.ts';
import { updateHeldHost } from '../../shared/hosts/held.ts';
import { applyDeprovision, hostReleasable, releaseHost } from '../../shared/hosts/release.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult, requeueAfter } from '../../shared/reconcile/result.ts';
import { DRAIN_RECHECK_SECONDS } from '../../shared/vmetal/drain.ts';
import { restoreOriginalAnnotations } from '../../shared/vmetal/hostannotations.ts';
import { ipClaimName } from '../../shared/vmetal/network.ts';
import { claimConsumer } from '../../shared/vmetal/setting.ts';
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

/** Deletes an object made for the claim, only while it carries the claim's uid label. */
async function deleteOwned(
  ctx: ReconcileContext,
  t: ResourceType,
  namespace: string,
  name: string,
  uid: string,
): Promise<void> {
  const obj = await ctx.client.get(envelopeOf(t), namespace, name);
  if (!obj || obj.metadata.labels?.[VMETAL_CLAIM_UID_LABEL] !== uid) return;
  await ctx.client.delete(t, namespace, name, { preconditions: { uid: obj.metadata.uid! } });
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
    const consumer = claimConsumer(claim, hostNamespace);
    for (const held of await hostsHeldBy(ctx.client, consumer)) {
      const res = await updateHeldHost(ctx.client, held, consumer, (h) => {
        // The data refs this claim set: its two Secrets (an administrator's own refs stay).
        applyDeprovision(h, false, {
          userData: { name: `${claim.metadata.name}-user-data`, namespace: hostNamespace },
          networkData: { name: `${claim.metadata.name}-network-data`, namespace: hostNamespace },
        });
        restoreOriginalAnnotations(h);
      });
      const host = res.outcome === 'gone' ? undefined : res.object;
      if (!host) continue;
      if (!hostReleasable(host))
        return requeueAfter(
          DEPROVISION_RECHECK_SECONDS,
          `waiting for BareMetalHost ${hostNamespace}/${host.metadata.name} to deprovision`,
        );
      await releaseHost(ctx, host, consumer);
    }
    const name = claim.metadata.name!;
    await deleteOwned(
      ctx,
      R.IPClaim,
      hostNamespace,
      ipClaimName({ namespace: claim.metadata.namespace!, name }),
      uid,
    );
    await deleteOwned(ctx, R.Secret, hostNamespace, `${name}-user-data`, uid);
    await deleteOwned(ctx, R.Secret, hostNamespace, `${name}-network-data`, uid);
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
