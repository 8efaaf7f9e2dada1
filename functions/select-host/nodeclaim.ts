/**
 * selectHost for a NodeClaim (issue 19, Behaviours 1, 2, 3, 9): everything that needs no host is
 * checked first (setting, property merge, network, image, SSH keys, data sources, the join's
 * flags); then a host is chosen (shared/vmetal/eligibility.ts) and claimed through the one host
 * lock (consumerRef and node-claim label, the original network annotations saved in the same
 * write); then the claim's IPClaim in the host namespace (deterministic name, labelled with the
 * claim's uid; no cross-namespace ownerReference: the finalizer deletes it).
 */

import { addFinalizer as withFinalizer } from '../../shared/allocation/objects.ts';
import type { BareMetalHost } from '../../shared/api/baremetalhost.ts';
import { R } from '../../shared/api/resources.ts';
import { resourceTexts } from '../../shared/api/vmetal/common.ts';
import type { NodeClaim } from '../../shared/api/vmetal/nodeclaim.ts';
import { FINALIZER, NODE_TYPE_LABEL, VMETAL_CLAIM_UID_LABEL } from '../../shared/api/wellknown.ts';
import { CandidateSampler, freeHostSelector } from '../../shared/hosts/candidates.ts';
import { heldHosts } from '../../shared/hosts/claim.ts';
import { hostHeldBy } from '../../shared/hosts/consumer.ts';
import { hostErrorMessage, pickRandom } from '../../shared/hosts/eligibility.ts';
import { updateHeldHost } from '../../shared/hosts/held.ts';
import { takeChosenHost } from '../../shared/hosts/take.ts';
import { isAlreadyExists } from '../../shared/kube/errors.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult, requeueAfter, terminal } from '../../shared/reconcile/result.ts';
import {
  chooseClaimHost,
  compileTypeSelection,
  type ExclusionReason,
  formatExclusions,
  hostVerdict,
  summarizeExclusions,
  type TypeSelection,
} from '../../shared/vmetal/eligibility.ts';
import { outcomeOf, propertyField, VMetalInputError, VMetalWait } from '../../shared/vmetal/errors.ts';
import { saveOriginalAnnotations } from '../../shared/vmetal/hostannotations.ts';
import { loadClaimInputs } from '../../shared/vmetal/inputs.ts';
import { buildJoin } from '../../shared/vmetal/join.ts';
import { PROP } from '../../shared/vmetal/names.ts';
import { ipClaimName } from '../../shared/vmetal/network.ts';
import { mergeProperties } from '../../shared/vmetal/properties.ts';
import { type ClaimSetting, loadClaimSetting, propertyLevels } from '../../shared/vmetal/setting.ts';
import {
  CLAIM_COND,
  isRenderFailed,
  isScheduled,
  RENDER_FAILED,
  recordClaimOutcome,
  updateClaimStatus,
  WAIT_RECHECK_SECONDS,
} from '../../shared/vmetal/status.ts';
import { checkClaimTemplates } from '../../shared/vmetal/templates.ts';
import { ensureNetworkPool } from './vmetal-pool.ts';

/** Claim attempts per pass when other consumers take the chosen hosts first. */
const TAKE_ATTEMPTS = 8;
/** Placeholders that let buildJoin check the claim's own fields before the tenant is known. */
const CHECK_ONLY = {
  endpoint: 'join-check.invalid:443',
  token: 'abcdef.0123456789abcdef',
  caCertHash: '0'.repeat(64),
};

/** The claim's own join fields (taints, kubeletArgs, Node labels) checked without the tenant. */
function checkJoinFields(claim: NodeClaim, nodeLabels: Record<string, string>): void {
  buildJoin(
    {
      ...CHECK_ONLY,
      nodeName: claim.metadata.name!,
      nodeLabels,
      taints: claim.spec.taints,
      startupTaints: claim.spec.startupTaints,
      kubeletArgs: claim.spec.kubeletArgs,
    },
    { redactToken: true },
  );
}

function checkPower(claim: NodeClaim): void {
  const power = claim.spec.power;
  if (power !== undefined && power !== '' && power !== 'On' && power !== 'Off')
    throw new VMetalInputError('spec.power', `${JSON.stringify(power)} is not On or Off`);
}

async function addFinalizer(ctx: ReconcileContext, claim: NodeClaim): Promise<NodeClaim | undefined> {
  const res = await optimisticUpdate(
    ctx.client,
    R.NodeClaim,
    claim.metadata.namespace,
    claim.metadata.name!,
    (c) => (withFinalizer(c, FINALIZER.nodeClaim) ? undefined : SKIP),
    { current: claim, expectedUid: claim.metadata.uid },
  );
  return res.outcome === 'gone' ? undefined : res.object;
}

/**
 * The claim's host when it holds one: the host its status names, read by name, else (a pass that
 * stopped between the claim and the status write) one it holds, found by the consumer label (ADR
 * 022 "Own host"). Hosts it holds besides are released with the claim (shared/vmetal/release.ts).
 */
async function ownHost(
  ctx: ReconcileContext,
  claim: NodeClaim,
  setting: ClaimSetting,
): Promise<BareMetalHost | undefined> {
  const named = claim.status?.host;
  const key =
    named && (claim.status?.hostNamespace ?? setting.hostNamespace) === setting.hostNamespace
      ? { namespace: setting.hostNamespace, name: named }
      : undefined;
  const { host, strays } = await heldHosts(ctx.client, setting.consumer, key);
  const own = host && hostHeldBy(host, setting.consumer) ? host : strays[0];
  return own ? withTypeLabel(ctx, own, setting) : undefined;
}

/**
 * A host claimed before claims labelled hosts with their NodeType (ADR 025) gets the label on its
 * claim's next pass (a resync at the latest), so the type's `provisioned` counts it; once.
 */
async function withTypeLabel(
  ctx: ReconcileContext,
  host: BareMetalHost,
  setting: ClaimSetting,
): Promise<BareMetalHost> {
  const want = setting.consumer.labels?.[NODE_TYPE_LABEL];
  if (!want || host.metadata.labels?.[NODE_TYPE_LABEL] !== undefined) return host;
  const res = await updateHeldHost(ctx.client, host, setting.consumer, (h) => {
    if (h.metadata.labels?.[NODE_TYPE_LABEL] !== undefined) return SKIP;
    h.metadata.labels = { ...h.metadata.labels, [NODE_TYPE_LABEL]: want };
  });
  return res.outcome === 'gone' ? host : res.object;
}

/** The host `serverName` pins, read by name on each attempt; a wait when it can not be taken. */
function pinnedHost(
  ctx: ReconcileContext,
  setting: ClaimSetting,
  type: TypeSelection,
  serverName: string,
): (attempt: number) => Promise<BareMetalHost> {
  const namespace = setting.hostNamespace;
  return async () => {
    const pinned = await ctx.client.get(R.BareMetalHost, namespace, serverName);
    const choice = chooseClaimHost(pinned ? [pinned] : [], {
      type,
      namespace,
      consumer: setting.consumer,
      serverName,
    });
    if (choice.kind === 'wait') throw choice.wait;
    return choice.host;
  };
}

/**
 * A host picked at random among the first page of free candidates with an eligible one (ADR 022),
 * a further page when other consumers took those; a wait when the list shows none.
 */
function sampledHost(
  ctx: ReconcileContext,
  setting: ClaimSetting,
  type: TypeSelection,
): (attempt: number) => Promise<BareMetalHost> {
  const namespace = setting.hostNamespace;
  // What the pages showed, for the wait message when none of their hosts is eligible.
  const excluded: { name: string; reason: ExclusionReason }[] = [];
  const sampler = new CandidateSampler(ctx.client, namespace, freeHostSelector(type.selector), (h) => {
    const v = hostVerdict(h, type);
    if (!v.eligible) excluded.push({ name: h.metadata.name ?? '', reason: v.reason });
    return v.eligible;
  });
  return async (attempt) => {
    const chosen = await sampler.pick(
      (hosts) => pickRandom(hosts),
      (h) => h,
    );
    if (chosen) return chosen;
    if (attempt === 0) {
      const summary = summarizeExclusions(excluded, sampler.considered);
      throw new VMetalWait('NoEligibleHost', formatExclusions(summary, type.typeName, namespace, 'unheld'));
    }
    throw new VMetalWait(
      'NoEligibleHost',
      'other consumers took every eligible host the candidate list showed; trying again',
    );
  };
}

/**
 * Finds the claim's host or claims one; throws VMetalWait when none can be taken now. A host is
 * chosen among the first page of free candidates with an eligible one (ADR 022), or is the one
 * `serverName` pins (read by name); hosts are never listed whole.
 */
async function claimHost(
  ctx: ReconcileContext,
  claim: NodeClaim,
  setting: ClaimSetting,
  serverName: string | undefined,
): Promise<BareMetalHost> {
  const own = await ownHost(ctx, claim, setting);
  if (own) return own;
  const type = compileTypeSelection({
    name: setting.type.metadata.name!,
    selector: setting.type.spec.bareMetalHosts?.selector,
    resources: resourceTexts(setting.type.spec.resources),
  });
  const next = serverName ? pinnedHost(ctx, setting, type, serverName) : sampledHost(ctx, setting, type);
  for (let attempt = 0; attempt < TAKE_ATTEMPTS; attempt++) {
    const chosen = await next(attempt);
    const taken = await takeChosenHost(
      ctx.client,
      chosen,
      setting.consumer,
      (h) => hostVerdict(h, type).eligible,
      saveOriginalAnnotations,
    );
    if (taken.kind !== 'lost') return taken.host;
  }
  throw new VMetalWait(
    'NoEligibleHost',
    `other consumers took the chosen hosts ${TAKE_ATTEMPTS} times in a row; trying again`,
  );
}

/** The claim's IPClaim (created once; a same-named one of another claim is a wait, never taken over). */
async function ensureIPClaim(
  ctx: ReconcileContext,
  claim: NodeClaim,
  namespace: string,
  pool: string,
): Promise<string> {
  const name = ipClaimName({ namespace: claim.metadata.namespace!, name: claim.metadata.name! });
  const uid = claim.metadata.uid!;
  try {
    await ctx.client.create(R.IPClaim, {
      metadata: { name, namespace, labels: { [VMETAL_CLAIM_UID_LABEL]: uid } },
      spec: { pool: { name: pool } },
    });
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    const existing = await ctx.client.get(R.IPClaim, namespace, name);
    if (existing && existing.metadata.labels?.[VMETAL_CLAIM_UID_LABEL] !== uid)
      throw new VMetalWait(
        'AddressesExhausted',
        `IPClaim ${namespace}/${name} belongs to another NodeClaim (being released?)`,
        {
          kind: 'IPClaim',
          namespace,
          name,
        },
      );
  }
  return name;
}

export async function reconcileNodeClaim(ctx: ReconcileContext, obj: NodeClaim): Promise<ReconcileResult> {
  if (obj.metadata.deletionTimestamp) return done('NodeClaim deleting: deprovision releases it');
  // Failed after it took a host (renderData released it): never given another.
  if (isRenderFailed(obj)) return terminal(obj.status?.reason ?? RENDER_FAILED, obj.status?.message ?? '');
  let claim = obj;
  try {
    checkPower(claim);
    const setting = await loadClaimSetting(ctx.client, claim);
    const before = mergeProperties(propertyLevels(setting, claim));
    checkJoinFields(claim, before.nodeLabels);
    const inputs = await loadClaimInputs(ctx.client, claim, before.properties);
    // A template that does not parse fails here, before any host is taken (renderData executes it).
    await checkClaimTemplates(inputs);

    // The network's pool needs no host either: an overlap fails the claim before any host is taken.
    let pool: string | undefined;
    if (inputs.network) {
      const made = await ensureNetworkPool(
        ctx.client,
        setting.provider,
        setting.hostNamespace,
        inputs.network,
      );
      if (made.kind === 'overlap') throw new VMetalInputError(propertyField(PROP.networkCidr), made.message);
      pool = made.name;
    }

    const withFinalizer = await addFinalizer(ctx, claim);
    if (!withFinalizer) return done('NodeClaim gone');
    claim = withFinalizer;

    const host = await claimHost(ctx, claim, setting, before.properties[PROP.serverName] || undefined);
    const merged = mergeProperties(propertyLevels(setting, claim, host));
    const hostName = host.metadata.name!;
    if (hostErrorMessage(host)) {
      await updateClaimStatus(ctx, claim, {
        phase: 'Failed',
        reason: 'HostError',
        message: `BareMetalHost ${setting.hostNamespace}/${hostName}: ${hostErrorMessage(host)}`,
        fields: { host: hostName, hostNamespace: setting.hostNamespace },
        conditions: [
          {
            type: CLAIM_COND.Provisioned,
            status: 'False',
            severity: 'Error',
            reason: 'HostError',
            message: hostErrorMessage(host),
          },
        ],
      });
      return terminal('HostError', hostErrorMessage(host));
    }
    // Once scheduled, the phase and its reason belong to the later steps (renderData's waits,
    // resolveProviderID's Available): a later pass here only keeps its own fields.
    const later = isScheduled(claim) && claim.status?.host === hostName;
    await updateClaimStatus(ctx, claim, {
      ...(later ? {} : { phase: 'Pending' as const, reason: undefined, message: undefined }),
      fields: {
        host: hostName,
        hostNamespace: setting.hostNamespace,
        nodeType: setting.type.metadata.name,
        properties: merged.properties,
      },
      conditions: [
        {
          type: CLAIM_COND.Scheduled,
          status: 'True',
          reason: 'HostClaimed',
          message: `BareMetalHost ${setting.hostNamespace}/${hostName}`,
        },
      ],
    });
    if (pool) {
      const ipClaim = await ensureIPClaim(ctx, claim, setting.hostNamespace, pool);
      return done(`host ${hostName} claimed, IPClaim ${ipClaim}`);
    }
    return done(`host ${hostName} claimed`);
  } catch (e) {
    // A claim that holds its host is not sent back to Pending or Failed by an input edited later
    // (its data is rendered once, ADR 018): the problem is a Warning Event on it.
    const outcome = isScheduled(claim) ? outcomeOf(e) : undefined;
    if (!outcome) return recordClaimOutcome(ctx, claim, e, CLAIM_COND.Scheduled);
    await ctx.events.record(claim, 'Warning', outcome.reason, outcome.message, { once: true });
    return outcome.phase === 'Failed'
      ? terminal(outcome.reason, outcome.message)
      : requeueAfter(WAIT_RECHECK_SECONDS, outcome.message);
  }
}
