/**
 * renderData (DESIGN.md §1): for a Metal3Data, claim an address from every pool its template
 * references, wait (event-driven) for IPAM, render metaData and networkData, write the two Secrets
 * once, set the refs and `status.ready`. Rendering errors name the template field, are recorded on
 * the Metal3Data (errorMessage, error: true, a Warning Event), write no Secret and are terminal.
 * Rendered data never changes: a deleted Secret is recreated from the same index and addresses.
 */

import { addFinalizer, isDeleting, ownerOfKind, statusOf } from '../../shared/allocation/objects.ts';
import type { Metal3Data, Metal3DataTemplate } from '../../shared/api/index.ts';
import { envelopeOf, K, R } from '../../shared/api/resources.ts';
import { CLUSTER_NAME_LABEL, FINALIZER } from '../../shared/api/wellknown.ts';
import { clusterLabelOrSpec } from '../../shared/capi/lookups.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { ReconcileContext, ReconcileFn } from '../../shared/reconcile/context.ts';
import { InvalidObjectError, TerminalError } from '../../shared/reconcile/errors.ts';
import { reconcileKinds, reconcileObject } from '../../shared/reconcile/object.ts';
import { done, type ReconcileResult, requeueAfter, terminal } from '../../shared/reconcile/result.ts';
import { releaseData, releaseOrphanIPClaims } from '../../shared/release/data.ts';
import { RenderError, referencedPools, renderData } from '../../shared/render/index.ts';
import { recordClaimFailure } from '../../shared/vmetal/status.ts';
import { ensureAddresses } from './addresses.ts';
import { gatherObjects } from './inputs.ts';
import { buildSecrets, createSecrets, secretNames, secretStates } from './secrets.ts';

/** A Metal3Data, parsed by the opening (shared/reconcile/object.ts). */
export async function reconcileData(ctx: ReconcileContext, raw: Metal3Data): Promise<ReconcileResult> {
  const { client } = ctx;
  const namespace = raw.metadata.namespace!;
  const name = raw.metadata.name!;
  if (isDeleting(raw)) return releaseData(ctx, namespace, name, raw);
  const data = raw;

  let dataObj = raw;
  if (!(raw.metadata.finalizers ?? []).includes(FINALIZER.data)) {
    const r = await optimisticUpdate(
      client,
      R.Metal3Data,
      namespace,
      name,
      (o) => void addFinalizer(o, FINALIZER.data),
      {
        current: raw,
        expectedUid: raw.metadata.uid,
      },
    );
    if (r.outcome === 'gone') return done('Metal3Data gone');
    dataObj = r.object;
    if (isDeleting(dataObj)) return releaseData(ctx, namespace, name, dataObj);
  }

  // Rendered before (markReady set the refs) and every Secret still there: nothing to do, and
  // neither the template (its status has an entry per machine) nor the inputs are read again.
  const rendered = renderedNames(dataObj);
  if (rendered) {
    const states = await secretStates(client, dataObj, rendered);
    if (states.every((s) => s === 'ours' || s === 'user')) return markReady(ctx, dataObj, rendered);
  }

  const templateNs = data.spec.template.namespace || namespace;
  const template = await readTemplate(ctx, dataObj, templateNs, data.spec.template.name);
  if (!template) return wait(ctx, `Metal3DataTemplate ${templateNs}/${data.spec.template.name} not found`);

  try {
    const gathered = await gatherObjects(client, data);
    if (gathered.kind === 'wait') return wait(ctx, gathered.reason);
    const { objects } = gathered;
    const m3mName = objects.metal3Machine.metadata.name!;
    const names = secretNames(m3mName, data.spec.index, Boolean(template.spec.networkData));

    // Already rendered and every Secret still there: nothing to do (never re-rendered).
    const states = await secretStates(client, dataObj, names);
    if (states.every((s) => s === 'ours' || s === 'user')) {
      return markReady(ctx, dataObj, names);
    }

    const pools = referencedPools(template.spec, objects);
    const created = { count: 0 };
    const addr = await ensureAddresses(client, dataObj, pools, created);
    if (created.count > 0) {
      // Deleted (and released) while we created IPClaims for it? Then nobody else releases them.
      const now = await client.get(R.Metal3Data, namespace, name);
      if (!now || now.metadata.uid !== dataObj.metadata.uid) {
        await releaseOrphanIPClaims(ctx, namespace, name, dataObj.metadata.uid!);
        return done('Metal3Data deleted while claiming addresses; its IPClaims were released');
      }
      if (isDeleting(now)) return releaseData(ctx, namespace, name, now);
    }
    if (addr.kind === 'wait') return wait(ctx, addr.reason);
    if (addr.kind === 'error') return recordError(ctx, dataObj, 'IPAllocationFailed', addr.message);

    const rendered = renderData(template.spec, {
      index: data.spec.index,
      namespace,
      ...objects,
      addresses: addr.addresses,
    });
    const clusterName = dataObj.metadata.labels?.[CLUSTER_NAME_LABEL] ?? objects.machine.spec?.clusterName;
    const secrets = await buildSecrets(dataObj, names, rendered, clusterName);
    if (!(await createSecrets(client, dataObj.metadata.uid, secrets))) {
      return wait(ctx, 'a Secret of an earlier Metal3Data still holds the name');
    }
    return markReady(ctx, dataObj, names);
  } catch (e) {
    if (e instanceof RenderError) return recordError(ctx, dataObj, 'RenderFailed', e.message);
    // A related object that fails its schema: the opening records it (the same way).
    if (e instanceof TerminalError && !(e instanceof InvalidObjectError))
      return recordError(ctx, dataObj, e.reason, e.message);
    throw e;
  }
}

/** The Secret names a render recorded in the refs (both at once, by markReady), or undefined. */
function renderedNames(d: Metal3Data): { metaData: string; networkData: string | undefined } | undefined {
  const metaData = d.spec.metaData?.name;
  return metaData ? { metaData, networkData: d.spec.networkData?.name } : undefined;
}

const wait = (ctx: ReconcileContext, reason: string): ReconcileResult =>
  // The awaited object's event wakes us; this requeue is only the safety net.
  requeueAfter(ctx.config.safetyRequeueSeconds, reason);

/** spec.metaData/networkData refs, then status.ready (and a cleared error). */
async function markReady(
  ctx: ReconcileContext,
  dataObj: Metal3Data,
  names: { metaData: string; networkData: string | undefined },
): Promise<ReconcileResult> {
  const ns = dataObj.metadata.namespace!;
  const name = dataObj.metadata.name!;
  const specDone = await optimisticUpdate(
    ctx.client,
    R.Metal3Data,
    ns,
    name,
    (o) => {
      o.spec.metaData = { name: names.metaData, namespace: ns };
      if (names.networkData) o.spec.networkData = { name: names.networkData, namespace: ns };
    },
    { current: dataObj, expectedUid: dataObj.metadata.uid },
  );
  if (specDone.outcome === 'gone') return done('Metal3Data gone');
  await optimisticUpdate(
    ctx.client,
    R.Metal3Data,
    ns,
    name,
    (o) => {
      const { errorMessage: _cleared, ...status } = o.status ?? {};
      o.status = { ...status, ready: true, error: false };
    },
    { current: specDone.object, expectedUid: dataObj.metadata.uid, status: true },
  );
  return done('rendered');
}

/**
 * The template's spec. Its spec is immutable, so the function's shared reads keep it by the uid
 * this Metal3Data's owner reference names (ADR 034): the template's status, an entry per machine,
 * is not read again per render. A Metal3Data without that owner, or a runtime without shared
 * reads, reads it fresh. A template that fails its schema is recorded on this Metal3Data by the
 * opening.
 */
async function readTemplate(
  ctx: ReconcileContext,
  data: Metal3Data,
  ns: string,
  name: string,
): Promise<Pick<Metal3DataTemplate, 'spec'> | undefined> {
  const owner = ownerOfKind(data, K.Metal3DataTemplate.kind, K.Metal3DataTemplate.group);
  if (ctx.reads && owner?.name === name && owner.uid) return ctx.reads.templateSpec(ns, name, owner.uid);
  return ctx.client.get(R.Metal3DataTemplate, ns, name);
}

/**
 * Bad input: errorMessage (naming the template field), error: true, a Warning Event; no Secret.
 * Once: nothing is written (no Event either) when the same error is recorded already. The
 * Metal3Data is read through its envelope: a failure is recorded on one that fails its schema too.
 */
async function recordError(
  ctx: ReconcileContext,
  dataObj: KubeObject,
  reason: string,
  message: string,
): Promise<ReconcileResult> {
  const r = await optimisticUpdate(
    ctx.client,
    METAL3DATA_ENVELOPE,
    dataObj.metadata.namespace,
    dataObj.metadata.name!,
    (o) => {
      const status = statusOf(o);
      if (status.errorMessage === message && status.error === true && status.ready === false) return SKIP;
      status.ready = false;
      status.error = true;
      status.errorMessage = message;
    },
    { current: dataObj, expectedUid: dataObj.metadata.uid, status: true },
  );
  if (r.outcome === 'updated') await ctx.events.record(dataObj, 'Warning', reason, message);
  ctx.log.warn('Metal3Data not rendered', {
    data: `${dataObj.metadata.namespace}/${dataObj.metadata.name}`,
    reason,
    message,
  });
  return terminal(reason, message);
}

const METAL3DATA_ENVELOPE = envelopeOf(K.Metal3Data);

export const reconcile: ReconcileFn = reconcileKinds(
  {
    Metal3Data: reconcileObject({
      resource: R.Metal3Data,
      gone: 'Metal3Data gone',
      reconcile: reconcileData,
      recordFailure: (ctx, obj, err) => recordError(ctx, obj, err.reason, err.message),
      cluster: clusterLabelOrSpec,
    }),
    NodeClaim: reconcileObject({
      resource: R.NodeClaim,
      gone: 'NodeClaim gone',
      // Loaded on the first NodeClaim: the vMetal path (and its YAML reader and writer) is not
      // part of renderData's start (docs/adr/011-cold-start.md).
      reconcile: async (ctx, claim) => (await import('./nodeclaim.ts')).renderNodeClaim(ctx, claim),
      recordFailure: recordClaimFailure,
      // vMetal objects belong to no Cluster API Cluster: Cluster API pause does not apply.
      cluster: () => undefined,
    }),
  },
  (kind) => `renderData: ignoring kind ${kind}`,
);
