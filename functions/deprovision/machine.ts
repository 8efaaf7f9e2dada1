/**
 * deprovision for a deleting Metal3Machine (spec §9): release the data claim, clear the host's
 * provisioning spec and power it off (one optimistic update), wait for the baremetal-operator to
 * bring it back to available (event-driven: the host's events wake this function), remove the
 * cluster label from its BMC credentials Secret (when it is this cluster's), release it
 * (node-reuse label when the template asks), then drop the machine's finalizer.
 * A host consumed by another machine is never touched.
 */
import { isDeleting, removeFinalizer } from '../../shared/allocation/objects.ts';
import { V } from '../../shared/allocation/views.ts';
import type { BareMetalHost } from '../../shared/api/baremetalhost.ts';
import type { Metal3MachineTemplate } from '../../shared/api/metal3machinetemplate.ts';
import { R } from '../../shared/api/resources.ts';
import { FINALIZER, NODE_REUSE_LABEL, validHostRef } from '../../shared/api/wellknown.ts';
import { COND, falseCondition, REASON } from '../../shared/capi/conditions.ts';
import {
  clusterNameOf,
  getCluster,
  getMachine,
  machineOwnerRef,
  machineTemplateNameOf,
  reuseOwnerOf,
} from '../../shared/capi/lookups.ts';
import { StatusDraft } from '../../shared/capi/status.ts';
import { heldHosts } from '../../shared/hosts/claim.ts';
import { hostHeldBy, metal3MachineConsumer } from '../../shared/hosts/consumer.ts';
import { hostState, nodeReuseLabelValue } from '../../shared/hosts/eligibility.ts';
import { updateHeldHost } from '../../shared/hosts/held.ts';
import { applyDeprovision, hostReleasable, releaseHost } from '../../shared/hosts/release.ts';
import { releaseStrays } from '../../shared/hosts/strays.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { InvalidObjectError } from '../../shared/reconcile/errors.ts';
import { done, type ReconcileResult, requeueAfter } from '../../shared/reconcile/result.ts';
import { MACHINE_FOR_RELEASE, type MachineForRelease } from './views.ts';

/**
 * A Metal3Machine, read through the release view by the opening (shared/reconcile/object.ts): a
 * deleting machine is released whatever its spec says.
 */
export async function deprovisionMachine(
  ctx: ReconcileContext,
  raw: MachineForRelease,
): Promise<ReconcileResult> {
  const ns = raw.metadata.namespace!;
  const name = raw.metadata.name!;
  if (!raw.metadata.deletionTimestamp) return done('not deleting');
  if (!raw.metadata.finalizers?.includes(FINALIZER.machine)) return done('finalizer already removed');

  if (!machineOwnerRef(raw)) return dropFinalizer(ctx, raw, 'no owner Machine: nothing was provisioned');

  const machine = await getMachine(ctx.client, raw);
  const clusterName = clusterNameOf(machine, raw);
  const me = metal3MachineConsumer({ name, namespace: ns }, clusterName);

  // 1. Data: delete the claim (the data path releases index, addresses and Secrets); clear refs.
  await releaseDataClaim(ctx, raw);
  const draft = new StatusDraft();
  const st = raw.status ?? {};
  const spec = raw.spec ?? {};
  draft.set('renderedData', undefined);
  for (const part of ['metaData', 'networkData'] as const) {
    if (st[part] && st[part]?.name !== spec[part]?.name) draft.set(part, undefined);
  }

  // 2. Host: the associated one (or one a crashed pass claimed without annotating); any other
  //    host this machine holds is a stray claim of a concurrent pass and is given back now.
  const found = await heldHosts(ctx.client, me, validHostRef(raw));
  let host: BareMetalHost | undefined = found.host;
  await releaseStrays(ctx, raw, me, found.strays, host);
  if (!host || !hostHeldBy(host, me)) {
    await draft.flush(ctx, raw);
    return dropFinalizer(
      ctx,
      raw,
      host ? 'host held by another consumer: left untouched' : 'no host to release',
    );
  }
  const hostName = `${host.metadata.namespace}/${host.metadata.name}`;

  // 3. Clear the image and the data refs this machine set (its status says which), power off (one
  //    optimistic update, once).
  const cleared = await updateHeldHost(ctx.client, host, me, (h) =>
    applyDeprovision(h, ctx.config.fastTrack, st) ? undefined : SKIP,
  );
  if (cleared.outcome === 'gone') {
    await draft.flush(ctx, raw);
    return dropFinalizer(ctx, raw, `host ${hostName} is gone`);
  }
  host = cleared.object;
  if (cleared.outcome === 'updated') {
    await ctx.events.record(raw, 'Normal', 'Deprovisioning', `deprovisioning BareMetalHost ${hostName}`);
  }

  // 4. Wait until the baremetal-operator has brought the host back (event-driven).
  if (!hostReleasable(host) && !host.metadata.deletionTimestamp) {
    draft.condition(
      falseCondition(
        COND.AssociateBMH,
        REASON.WaitingForHostDeprovisioning,
        'Info',
        `waiting for BareMetalHost ${hostName} to be deprovisioned (state "${hostState(host)}")`,
      ),
    );
    await draft.flush(ctx, raw);
    return requeueAfter(
      ctx.config.safetyRequeueSeconds,
      `host ${hostName} is ${hostState(host) || 'not ready'}`,
    );
  }

  // 5. Release: the BMC Secret's cluster label, then consumerRef, our labels and paused
  //    annotation, and the node-reuse booking if the template asks for it.
  const reuse = await nodeReuseLabel(ctx, raw, machine, clusterName, ns);
  const released = await releaseHost(ctx, host, me, {
    addLabels: reuse ? { [NODE_REUSE_LABEL]: reuse } : {},
  });
  if (released) {
    await ctx.events.record(
      raw,
      'Normal',
      'Released',
      `released BareMetalHost ${hostName}${reuse ? ` (booked for node reuse by "${reuse}")` : ''}`,
    );
  }
  await draft.flush(ctx, raw);
  return dropFinalizer(ctx, raw, `host ${hostName} released`);
}

/** The node-reuse label value when the machine's template has nodeReuse (and the Cluster is not being deleted). */
async function nodeReuseLabel(
  ctx: ReconcileContext,
  raw: MachineForRelease,
  machine: Awaited<ReturnType<typeof getMachine>>,
  clusterName: string | undefined,
  ns: string,
): Promise<string | undefined> {
  if (!machine) return undefined;
  const cluster = await getCluster(
    ctx,
    ns,
    clusterName,
    (c) => c !== undefined && !c.metadata.deletionTimestamp,
  );
  if (!cluster || cluster.metadata.deletionTimestamp) return undefined;
  const tname = await machineTemplateNameOf(ctx.client, machine, raw);
  if (!tname) return undefined;
  let tmpl: Metal3MachineTemplate | undefined;
  try {
    tmpl = await ctx.client.get(R.Metal3MachineTemplate, ns, tname);
  } catch (e) {
    // A template that fails its schema books nothing: the host is released all the same.
    if (e instanceof InvalidObjectError) return undefined;
    throw e;
  }
  if (!tmpl) return undefined;
  const traw = tmpl;
  if (!tmpl.spec.nodeReuse) return undefined;
  const owner = await reuseOwnerOf(ctx.client, machine);
  if (!owner) return undefined;
  if (tmpl.spec.template.spec.automatedCleaningMode !== 'disabled') {
    await ctx.events.record(
      traw,
      'Warning',
      'NodeReuseWithCleaning',
      `nodeReuse is set but spec.template.spec.automatedCleaningMode is "${tmpl.spec.template.spec.automatedCleaningMode ?? 'metadata'}": hosts are cleaned before reuse, set it to "disabled" to keep their disks (seed 001)`,
    );
  }
  return nodeReuseLabelValue(owner.name);
}

/** Deletes the machine's Metal3DataClaim after removing our finalizer from it. */
async function releaseDataClaim(ctx: ReconcileContext, m3m: MachineForRelease): Promise<void> {
  const ns = m3m.metadata.namespace!;
  const name = m3m.metadata.name!;
  const claim = await ctx.client.get(V.Metal3DataClaim, ns, name);
  if (!claim) return;
  const owned = claim.metadata.ownerReferences?.some(
    (o) => o.kind === 'Metal3Machine' && o.uid === m3m.metadata.uid,
  );
  if (!owned) return;
  const res = await optimisticUpdate(
    ctx.client,
    V.Metal3DataClaim,
    ns,
    name,
    (c) => (removeFinalizer(c, FINALIZER.machine) ? undefined : SKIP),
    { current: claim, expectedUid: claim.metadata.uid },
  );
  if (res.outcome === 'gone') return;
  if (!isDeleting(claim))
    await ctx.client.delete(V.Metal3DataClaim, ns, name, { preconditions: { uid: claim.metadata.uid! } });
}

async function dropFinalizer(
  ctx: ReconcileContext,
  raw: MachineForRelease,
  why: string,
): Promise<ReconcileResult> {
  await optimisticUpdate(
    ctx.client,
    MACHINE_FOR_RELEASE,
    raw.metadata.namespace,
    raw.metadata.name!,
    (o) => (removeFinalizer(o, FINALIZER.machine) ? undefined : SKIP),
    { expectedUid: raw.metadata.uid },
  );
  return done(why);
}
