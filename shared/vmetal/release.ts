/**
 * Giving back what a NodeClaim was given (issue 19, Behaviours 8 and 9), one home for deprovision
 * (a deleting claim) and renderData (a claim that failed after it took a host): each host the
 * claim holds is cleared (`applyDeprovision`) with its original network annotations restored in
 * the same held-host write; once the host is back (`hostReleasable`) its consumerRef and labels go
 * (`releaseHost`); then the IPClaim and the two Secrets, each only while labelled with the claim's
 * uid (an object of a later claim of the same name is never touched).
 */
import { envelopeOf, R, type ResourceType } from '../api/resources.ts';
import type { NodeClaim } from '../api/vmetal/nodeclaim.ts';
import { VMETAL_CLAIM_UID_LABEL } from '../api/wellknown.ts';
import { hostsHeldBy } from '../hosts/claim.ts';
import { updateHeldHost } from '../hosts/held.ts';
import { applyDeprovision, hostReleasable, releaseHost } from '../hosts/release.ts';
import type { ReconcileContext } from '../reconcile/context.ts';
import { restoreOriginalAnnotations } from './hostannotations.ts';
import { ipClaimName } from './network.ts';
import { claimConsumer } from './setting.ts';

/** The Secrets a claim's data is rendered into, in the host namespace. */
export const claimSecretNames = (claimName: string): { userData: string; networkData: string } => ({
  userData: `${claimName}-user-data`,
  networkData: `${claimName}-network-data`,
});

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

export type ClaimRelease =
  | { kind: 'released' }
  /** A host is still deprovisioning: look again later (its events wake the claim too). */
  | { kind: 'waiting'; message: string };

/**
 * Releases the claim's hosts, address and Secrets in `hostNamespace`. Idempotent: a pass after a
 * partial one finishes it.
 */
export async function releaseClaim(
  ctx: ReconcileContext,
  claim: NodeClaim,
  hostNamespace: string,
): Promise<ClaimRelease> {
  const uid = claim.metadata.uid!;
  const name = claim.metadata.name!;
  const secrets = claimSecretNames(name);
  const consumer = claimConsumer(claim, hostNamespace);
  for (const held of await hostsHeldBy(ctx.client, consumer)) {
    const res = await updateHeldHost(ctx.client, held, consumer, (h) => {
      // The data refs this claim set: its two Secrets (an administrator's own refs stay).
      applyDeprovision(h, false, {
        userData: { name: secrets.userData, namespace: hostNamespace },
        networkData: { name: secrets.networkData, namespace: hostNamespace },
      });
      restoreOriginalAnnotations(h);
    });
    const host = res.outcome === 'gone' ? undefined : res.object;
    if (!host) continue;
    if (!hostReleasable(host))
      return {
        kind: 'waiting',
        message: `waiting for BareMetalHost ${hostNamespace}/${host.metadata.name} to deprovision`,
      };
    await releaseHost(ctx, host, consumer);
  }
  await deleteOwned(
    ctx,
    R.IPClaim,
    hostNamespace,
    ipClaimName({ namespace: claim.metadata.namespace!, name }),
    uid,
  );
  await deleteClaimSecrets(ctx, claim, hostNamespace);
  return { kind: 'released' };
}

/** Deletes the claim's two data Secrets (only while labelled with its uid). */
export async function deleteClaimSecrets(
  ctx: ReconcileContext,
  claim: NodeClaim,
  hostNamespace: string,
): Promise<void> {
  const secrets = claimSecretNames(claim.metadata.name!);
  await deleteOwned(ctx, R.Secret, hostNamespace, secrets.userData, claim.metadata.uid!);
  await deleteOwned(ctx, R.Secret, hostNamespace, secrets.networkData, claim.metadata.uid!);
}
