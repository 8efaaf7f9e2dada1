/**
 * renderData for a NodeClaim (issue 19, Behaviours 4-7 and 9): once selectHost has claimed the
 * claim's host (and, with a network, IPAM has served its IPClaim), render the user data (the
 * source's text or template, then the join and SSH keys always added) and the network data
 * (override > template > generated), write them once into `<claim>-user-data` /
 * `<claim>-network-data` in the host namespace, and provision the host in one held-host write
 * (network annotations, image, data refs, online). Later passes carry the claim's power and reboot
 * requests to the host; the rendered data never changes. Bad input found here fails the claim
 * after its host and address are released.
 */
import type { BareMetalHost } from '../../shared/api/baremetalhost.ts';
import type { Secret } from '../../shared/api/core.ts';
import { apiVersionOf, R } from '../../shared/api/resources.ts';
import type { NodeClaim } from '../../shared/api/vmetal/nodeclaim.ts';
import { VMETAL_CLAIM_UID_LABEL, VMETAL_HOST_ANNOTATION } from '../../shared/api/wellknown.ts';
import { getCondition } from '../../shared/capi/conditions.ts';
import { type HostConsumer, hostHeldBy } from '../../shared/hosts/consumer.ts';
import { hostState } from '../../shared/hosts/eligibility.ts';
import { updateHeldHost } from '../../shared/hosts/held.ts';
import { isAlreadyExists } from '../../shared/kube/errors.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult, requeueAfter, terminal } from '../../shared/reconcile/result.ts';
import { serializeNetworkData } from '../../shared/render/serialize.ts';
import { outcomeOf, VMetalWait } from '../../shared/vmetal/errors.ts';
import type { HostImage } from '../../shared/vmetal/image.ts';
import { type ClaimInputs, loadClaimInputs } from '../../shared/vmetal/inputs.ts';
import { buildJoin } from '../../shared/vmetal/join.ts';
import { ensureJoinToken, tenantTarget, tokenString } from '../../shared/vmetal/jointoken.ts';
import { PROP } from '../../shared/vmetal/names.ts';
import {
  type AddressAssignment,
  HOST_NETWORK_ANNOTATIONS,
  hostNetworkAnnotations,
  ipClaimName,
  serverList,
} from '../../shared/vmetal/network.ts';
import {
  bootMacAddress,
  generatedNetworkData,
  parseNetworkDataText,
} from '../../shared/vmetal/networkdata.ts';
import { type MergedProperties, mergeProperties } from '../../shared/vmetal/properties.ts';
import { claimSecretNames, deleteClaimSecrets, releaseClaim } from '../../shared/vmetal/release.ts';
import { claimConsumer, loadClaimSetting, propertyLevels } from '../../shared/vmetal/setting.ts';
import {
  CLAIM_COND,
  isRenderFailed,
  RENDER_FAILED,
  recordClaimOutcome,
  updateClaimStatus,
} from '../../shared/vmetal/status.ts';
import { renderSourceText, sourceField } from '../../shared/vmetal/templates.ts';
import { composeUserData, defaultUserData } from '../../shared/vmetal/userdata.ts';
import { templateValues } from '../../shared/vmetal/values.ts';

/** vMetal's reboot request on a claim; carried to the host as baremetal-operator's. */
export const CLAIM_REBOOT_ANNOTATION = 'machines.vcluster.com/reboot';
/** baremetal-operator reboots the host once (power off, on) and removes the annotation itself. */
export const HOST_REBOOT_ANNOTATION = 'reboot.metal3.io';
/** How often a release after a failure looks again while the host deprovisions (events wake it too). */
const RELEASE_RECHECK_SECONDS = 15;

type AddressState =
  | { kind: 'ready'; address: string; prefix: number; gateway?: string }
  | { kind: 'wait'; reason: string };

/** The claim's address, once IPAM has served its IPClaim (selectHost created it). */
async function claimAddress(
  ctx: ReconcileContext,
  claim: NodeClaim,
  namespace: string,
): Promise<AddressState> {
  const name = ipClaimName({ namespace: claim.metadata.namespace!, name: claim.metadata.name! });
  const ipClaim = await ctx.client.get(R.IPClaim, namespace, name);
  if (!ipClaim || ipClaim.metadata.labels?.[VMETAL_CLAIM_UID_LABEL] !== claim.metadata.uid)
    return { kind: 'wait', reason: `waiting for IPClaim ${namespace}/${name}` };
  if (ipClaim.status?.errorMessage)
    throw new VMetalWait(
      'AddressesExhausted',
      `IPClaim ${namespace}/${name}: ${ipClaim.status.errorMessage}`,
      {
        kind: 'IPClaim',
        namespace,
        name,
      },
    );
  const addressName = ipClaim.status?.address?.name;
  const address = addressName ? await ctx.client.get(R.IPAddress, namespace, addressName) : undefined;
  if (!address) return { kind: 'wait', reason: `waiting for the address of IPClaim ${namespace}/${name}` };
  return {
    kind: 'ready',
    address: address.spec.address,
    prefix: address.spec.prefix,
    ...(address.spec.gateway ? { gateway: address.spec.gateway } : {}),
  };
}

export interface Rendered {
  userData: string;
  /** The Secret's text; undefined when the claim has none (no network, no override or template). */
  networkData: string | undefined;
}

/** The tenant's side of the join. */
export interface JoinTarget {
  endpoint: string;
  caCertHash: string;
  /** `<id>.<secret>`. */
  token: string;
}

export interface ClaimDataInput {
  claim: NodeClaim;
  host: BareMetalHost;
  merged: MergedProperties;
  inputs: ClaimInputs;
  assignment: AddressAssignment | undefined;
  /** Called once the templates rendered (a bad one never touches the tenant). */
  join: () => Promise<JoinTarget>;
  /** `<redacted>` in place of the token (previews). */
  redactToken?: boolean;
}

/** Renders both parts (renderData, and `metal3fn render` for a preview). */
export async function renderClaimData(input: ClaimDataInput): Promise<Rendered> {
  const { claim, host, merged, inputs, assignment } = input;
  const name = claim.metadata.name!;
  const values = templateValues({
    claim,
    properties: merged.properties,
    sshKeys: inputs.sshKeys,
    host,
    address: assignment,
  });
  const base = (await renderSourceText(inputs.userData, 'user data', values)) ?? defaultUserData(name);
  const networkText = await renderSourceText(inputs.networkData, 'network data', values);
  let networkData: string | undefined;
  if (networkText !== undefined) {
    parseNetworkDataText(networkText, sourceField(inputs.networkData.source, 'network data'));
    networkData = networkText;
  } else if (assignment) {
    networkData = serializeNetworkData(generatedNetworkData(bootMacAddress(host), assignment));
  }
  const target = await input.join();
  const join = buildJoin(
    {
      ...target,
      nodeName: name,
      nodeLabels: merged.nodeLabels,
      taints: claim.spec.taints,
      startupTaints: claim.spec.startupTaints,
      kubeletArgs: claim.spec.kubeletArgs,
    },
    { redactToken: input.redactToken ?? false },
  );
  const userData = composeUserData(
    base,
    join,
    inputs.sshKeys,
    sourceField(inputs.userData.source, 'user data'),
  );
  return { userData, networkData };
}

/** The tenant's endpoint and CA hash, and its current token (created or rotated as needed). */
async function tenantJoin(ctx: ReconcileContext, claim: NodeClaim): Promise<JoinTarget> {
  const namespace = claim.metadata.namespace!;
  const tenant = () => ctx.workloadClient(namespace, claim.spec.vClusterRef);
  const target = await tenantTarget(ctx.client, tenant, namespace, claim.spec.vClusterRef);
  const token = await ensureJoinToken(ctx.client, tenant, {
    namespace,
    vcluster: claim.spec.vClusterRef,
    now: ctx.now(),
    ttlSeconds: ctx.config.joinTokenTtlSeconds,
  });
  return { ...target, token: tokenString(token) };
}

function dataSecret(claim: NodeClaim, namespace: string, name: string, key: string, value: string): Secret {
  const sameNamespace = claim.metadata.namespace === namespace;
  return {
    metadata: {
      name,
      namespace,
      labels: { [VMETAL_CLAIM_UID_LABEL]: claim.metadata.uid! },
      // Never across namespaces: the garbage collector treats such a reference as absent (the
      // finalizer deletes these Secrets then).
      ...(sameNamespace
        ? {
            ownerReferences: [
              {
                apiVersion: apiVersionOf(R.NodeClaim),
                kind: 'NodeClaim',
                name: claim.metadata.name!,
                uid: claim.metadata.uid!,
              },
            ],
          }
        : {}),
    },
    type: 'Opaque',
    data: { [key]: Buffer.from(value, 'utf8').toString('base64') },
  };
}

/** Whose the Secret of that name is: this claim's, absent, or another's (a wait, never taken over). */
async function secretState(
  ctx: ReconcileContext,
  claim: NodeClaim,
  namespace: string,
  name: string,
): Promise<'ours' | 'absent'> {
  const s = await ctx.client.get(R.Secret, namespace, name);
  if (!s) return 'absent';
  if (s.metadata.labels?.[VMETAL_CLAIM_UID_LABEL] === claim.metadata.uid) return 'ours';
  throw new VMetalWait(
    'DataSecretInUse',
    `Secret ${namespace}/${name} belongs to another NodeClaim (being released?)`,
    { kind: 'Secret', namespace, name },
  );
}

/** Creates a data Secret once (deterministic name; AlreadyExists of ours is fine). */
async function createDataSecret(ctx: ReconcileContext, claim: NodeClaim, secret: Secret): Promise<void> {
  try {
    await ctx.client.create(R.Secret, secret);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    await secretState(ctx, claim, secret.metadata.namespace!, secret.metadata.name!);
  }
}

/** What the first provisioning write sets (after it, only power and reboot are carried). */
interface Provision {
  image: HostImage;
  userData: string;
  networkData: string | undefined;
  annotations: Record<string, string> | undefined;
}

interface HostPlan {
  provision: Provision | undefined;
  online: boolean;
  reboot: boolean;
}

/** Everything the claim asks of its host, in place; SKIP when the host already has it all. */
function provisionHost(h: BareMetalHost, plan: HostPlan, consumer: HostConsumer): undefined | typeof SKIP {
  if (!hostHeldBy(h, consumer)) return SKIP;
  const before = JSON.stringify([h.metadata.annotations, h.spec]);
  const ns = h.metadata.namespace;
  const ann = { ...(h.metadata.annotations ?? {}) };
  const spec = { ...(h.spec ?? {}) };
  const p = plan.provision;
  if (p) {
    if (p.annotations) {
      for (const k of HOST_NETWORK_ANNOTATIONS) delete ann[k];
      Object.assign(ann, p.annotations);
    }
    // Set once: a changed OSImage never re-images a provisioned host (rendered data does not change).
    if (!spec.image?.url) spec.image = { ...p.image };
    spec.userData = { name: p.userData, namespace: ns };
    if (p.networkData) spec.networkData = { name: p.networkData, namespace: ns };
  }
  if (plan.reboot) ann[HOST_REBOOT_ANNOTATION] = '';
  spec.online = plan.online;
  h.metadata.annotations = ann;
  h.spec = spec;
  return JSON.stringify([h.metadata.annotations, h.spec]) === before ? SKIP : undefined;
}

/** Drops the claim's reboot request once the host carries it (only the request we saw). */
async function clearRebootRequest(ctx: ReconcileContext, claim: NodeClaim, seen: string): Promise<void> {
  await optimisticUpdate(
    ctx.client,
    R.NodeClaim,
    claim.metadata.namespace,
    claim.metadata.name!,
    (c) => {
      if (c.metadata.annotations?.[CLAIM_REBOOT_ANNOTATION] !== seen) return SKIP;
      const { [CLAIM_REBOOT_ANNOTATION]: _done, ...rest } = c.metadata.annotations;
      c.metadata.annotations = rest;
    },
    { current: claim, expectedUid: claim.metadata.uid },
  );
}

/** Failed after the claim: the status first (so selectHost never gives it another host), then the release. */
async function failAndRelease(
  ctx: ReconcileContext,
  claim: NodeClaim,
  hostNamespace: string,
  failure: { reason: string; message: string } | undefined,
): Promise<ReconcileResult> {
  if (failure) {
    const updated = await updateClaimStatus(ctx, claim, {
      phase: 'Failed',
      reason: failure.reason,
      message: failure.message,
      conditions: [
        {
          type: CLAIM_COND.Provisioned,
          status: 'False',
          severity: 'Error',
          reason: RENDER_FAILED,
          message: failure.message,
        },
      ],
    });
    if (!updated) return done('NodeClaim gone');
    await ctx.events.record(claim, 'Warning', failure.reason, failure.message, { once: true });
    ctx.log.warn('NodeClaim not rendered; releasing its host and address', {
      claim: `${claim.metadata.namespace}/${claim.metadata.name}`,
      reason: failure.reason,
      message: failure.message,
    });
  }
  const released = await releaseClaim(ctx, claim, hostNamespace);
  if (released.kind === 'waiting') return requeueAfter(RELEASE_RECHECK_SECONDS, released.message);
  const status = isRenderFailed(claim) ? claim.status : undefined;
  return terminal(
    failure?.reason ?? status?.reason ?? RENDER_FAILED,
    failure?.message ?? status?.message ?? '',
  );
}

type Prepared =
  | { kind: 'ready'; provision: Provision; ipAddress: string | undefined }
  /** Nothing to write now (an address to wait for, the claim deleted meanwhile). */
  | { kind: 'done'; result: ReconcileResult };

/**
 * The first provisioning: the inputs read and checked, the address, the data rendered and its
 * Secrets written once (a pass after a partial one reuses the Secrets that exist).
 */
async function prepareProvision(
  ctx: ReconcileContext,
  claim: NodeClaim,
  host: BareMetalHost,
  hostNamespace: string,
): Promise<Prepared> {
  const setting = await loadClaimSetting(ctx.client, claim);
  const merged = mergeProperties(propertyLevels(setting, claim, host));
  const props = merged.properties;
  const inputs = await loadClaimInputs(ctx.client, claim, props);
  let assignment: AddressAssignment | undefined;
  if (inputs.network) {
    const address = await claimAddress(ctx, claim, hostNamespace);
    // The IPClaim's status event resumes the claim.
    if (address.kind === 'wait') return { kind: 'done', result: done(address.reason) };
    assignment = {
      address: address.address,
      prefix: address.prefix,
      gateway: address.gateway,
      dnsServers: serverList(props, PROP.dnsServers),
      ntpServers: serverList(props, PROP.ntpServers),
    };
  }

  const names = claimSecretNames(claim.metadata.name!);
  // The user-data Secret is written last: while it exists, everything was rendered.
  let hasNetworkData = (await secretState(ctx, claim, hostNamespace, names.networkData)) === 'ours';
  if ((await secretState(ctx, claim, hostNamespace, names.userData)) === 'absent') {
    const rendered = await renderClaimData({
      claim,
      host,
      merged,
      inputs,
      assignment,
      join: () => tenantJoin(ctx, claim),
    });
    if (rendered.networkData !== undefined) {
      await createDataSecret(
        ctx,
        claim,
        dataSecret(claim, hostNamespace, names.networkData, 'networkData', rendered.networkData),
      );
      hasNetworkData = true;
    }
    await createDataSecret(
      ctx,
      claim,
      dataSecret(claim, hostNamespace, names.userData, 'userData', rendered.userData),
    );
    // Deleted while we rendered? Its release may have run before our Secrets existed (across
    // namespaces no garbage collector takes them): they go again here.
    const now = await ctx.client.get(R.NodeClaim, claim.metadata.namespace, claim.metadata.name!);
    if (!now || now.metadata.uid !== claim.metadata.uid || now.metadata.deletionTimestamp) {
      await deleteClaimSecrets(ctx, claim, hostNamespace);
      return {
        kind: 'done',
        result: done('NodeClaim deleted while its data was rendered; its Secrets were removed'),
      };
    }
  }
  return {
    kind: 'ready',
    provision: {
      image: inputs.image,
      userData: names.userData,
      networkData: hasNetworkData ? names.networkData : undefined,
      annotations: assignment ? hostNetworkAnnotations(assignment) : undefined,
    },
    ipAddress: assignment ? `${assignment.address}/${assignment.prefix}` : undefined,
  };
}

export async function renderNodeClaim(ctx: ReconcileContext, claim: NodeClaim): Promise<ReconcileResult> {
  if (claim.metadata.deletionTimestamp) return done('NodeClaim deleting: deprovision releases it');
  const hostNamespace = claim.status?.hostNamespace;
  const hostName = claim.status?.host;
  if (!hostNamespace || !hostName) return done('NodeClaim not scheduled yet');
  // A release after a failure that had to wait for the host goes on; any other Failed claim stays.
  if (isRenderFailed(claim)) return failAndRelease(ctx, claim, hostNamespace, undefined);
  if (claim.status?.phase === 'Failed') return done('NodeClaim failed');
  const consumer = claimConsumer(claim, hostNamespace);
  const host = await ctx.client.get(R.BareMetalHost, hostNamespace, hostName);
  if (!host || !hostHeldBy(host, consumer))
    return done(`BareMetalHost ${hostNamespace}/${hostName} not held by the claim`);
  const names = claimSecretNames(claim.metadata.name!);
  try {
    // Provisioned already (its user data on the host): only power and reboot from here on. The
    // inputs are not read again, so a later change to a template, SSHKey or property never fails
    // or releases a claim whose host runs.
    const steady =
      host.spec?.userData?.name === names.userData &&
      (await secretState(ctx, claim, hostNamespace, names.userData)) === 'ours';
    let provision: Provision | undefined;
    let ipAddress = host.metadata.annotations?.[VMETAL_HOST_ANNOTATION.ipAddress];
    if (!steady) {
      const prepared = await prepareProvision(ctx, claim, host, hostNamespace);
      if (prepared.kind === 'done') return prepared.result;
      provision = prepared.provision;
      ipAddress = prepared.ipAddress;
    }

    const reboot = claim.metadata.annotations?.[CLAIM_REBOOT_ANNOTATION];
    const plan: HostPlan = {
      provision,
      online: claim.spec.power !== 'Off',
      // A host not yet provisioned is booting into its image anyway: the request is dropped, not
      // kept to reboot it again once provisioned.
      reboot: reboot !== undefined && hostState(host) === 'provisioned',
    };
    const written = await updateHeldHost(ctx.client, host, consumer, (h) => provisionHost(h, plan, consumer));
    if (written.outcome === 'gone' || !hostHeldBy(written.object, consumer))
      return done(`BareMetalHost ${hostNamespace}/${hostName} no longer held by the claim`);
    if (reboot !== undefined) await clearRebootRequest(ctx, claim, reboot);

    const provisioned = getCondition(claim.status?.conditions, CLAIM_COND.Provisioned)?.status === 'True';
    await updateClaimStatus(ctx, claim, {
      reason: undefined,
      message: undefined,
      fields: ipAddress ? { ipAddress } : {},
      // Provisioned=True is resolveProviderID's, once the host is provisioned.
      conditions: provisioned
        ? []
        : [
            {
              type: CLAIM_COND.Provisioned,
              status: 'False',
              severity: 'Info',
              reason: 'DataRendered',
              message: `user data and network data rendered; BareMetalHost ${hostNamespace}/${hostName} provisioning`,
            },
          ],
    });
    return done(`NodeClaim data rendered; host ${hostName} provisioning`);
  } catch (e) {
    const outcome = outcomeOf(e);
    if (outcome?.phase === 'Failed') return failAndRelease(ctx, claim, hostNamespace, outcome);
    return recordClaimOutcome(ctx, claim, e, CLAIM_COND.Provisioned);
  }
}
