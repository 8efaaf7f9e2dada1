/**
 * allocateIndex for a Metal3DataTemplate: the status maps rebuilt from the Metal3Data that belong
 * to it (seed 001's three links), and the label and owner reference pointing at its Metal3Cluster
 * (the cluster named by its claims' cluster-name label). Both are derived state: level-triggered,
 * written only when different, through optimisticUpdate.
 *
 * Deletion protection (CAPM3's DataTemplateFinalizer): the template carries
 * `metal3datatemplate.infrastructure.cluster.x-k8s.io`, added in the same write as the label and
 * owner (and before any Metal3Data is created from it: the claim path ensures it too). A deleting
 * template keeps it while any live claim of it (woken by the claim's disappearance, no requeue) or
 * any Metal3Data of it (woken by the Metal3Data's disappearance; a requeue as safety net) is left;
 * then the finalizer goes. Claims of a deleting template get no new index (claim.ts).
 */

import {
  addFinalizer,
  controllerOf,
  hasFinalizer,
  isDeleting,
  isOwnedBy,
  ownerOfKind,
  ownerRef,
  statusOf,
  timestamp,
} from '../../shared/allocation/objects.ts';
import { oldEntries } from '../../shared/allocation/registry.ts';
import { isDataOfClaim } from '../../shared/allocation/serves.ts';
import { belongsToTemplate } from '../../shared/allocation/template-match.ts';
import {
  type DataClaimView,
  type Metal3DataView,
  type TemplateView,
  V,
} from '../../shared/allocation/views.ts';
import { envelopeOf, K, R } from '../../shared/api/resources.ts';
import { CLUSTER_NAME_LABEL, FINALIZER } from '../../shared/api/wellknown.ts';
import { getCluster } from '../../shared/capi/lookups.ts';
import { optimisticUpdate, SKIP, sameJson } from '../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult } from '../../shared/reconcile/result.ts';
import { dropFinalizerWhenUnheld, releaseOrphanData } from '../../shared/release/data.ts';
import { hasIndex } from './plan-index.ts';

export interface TemplateMaps {
  indexes: Record<string, string>;
  dataNames: Record<string, string>;
}

/** The status maps of `template` from the Metal3Data list (pure). */
export function templateMaps(template: TemplateView, datas: readonly Metal3DataView[]): TemplateMaps {
  const indexes: Record<string, string> = {};
  const dataNames: Record<string, string> = {};
  const linked = datas
    .filter(hasIndex)
    .filter((d) => d.spec.claim?.name && belongsToTemplate(template, d))
    .sort((a, b) => a.spec.index - b.spec.index);
  for (const d of linked) {
    const claim = d.spec.claim?.name ?? '';
    indexes[String(d.spec.index)] = claim;
    dataNames[claim] = d.metadata.name ?? '';
  }
  return { indexes, dataNames };
}

/** A Metal3DataTemplate as allocateIndex reads it (a view: its links and status maps), parsed by the opening. */
export async function reconcileTemplate(ctx: ReconcileContext, raw: TemplateView): Promise<ReconcileResult> {
  const { client } = ctx;
  const namespace = raw.metadata.namespace!;
  const name = raw.metadata.name!;
  const [datas, claims] = await Promise.all([
    client.list(V.Metal3Data, namespace),
    client.list(V.Metal3DataClaim, namespace),
  ]);
  const maps = templateMaps(raw, datas.items);
  const waiting = new Set(
    claims.items.filter((c) => waitsForIndex(c, namespace, name)).map((c) => c.metadata.name),
  );
  const written = await optimisticUpdate(
    client,
    V.Metal3DataTemplate,
    namespace,
    name,
    (o) => {
      const status = statusOf(o);
      // Burst registry entries (ADR 012) of claims that no longer wait, old enough that the
      // list above cannot predate their claim.
      const stale = oldEntries(o, ctx.now()).filter((n) => !waiting.has(n));
      if (
        stale.length === 0 &&
        sameJson(status.indexes ?? {}, maps.indexes) &&
        sameJson(status.dataNames ?? {}, maps.dataNames)
      )
        return SKIP;
      status.indexes = maps.indexes;
      status.dataNames = maps.dataNames;
      const allocating = o.status?.allocating;
      for (const n of stale) delete allocating?.[n];
      status.lastUpdated = timestamp(ctx.now());
    },
    { status: true, current: raw, expectedUid: raw.metadata.uid },
  );
  if (written.outcome === 'gone') return done('template gone');
  const current = written.object;

  if (isDeleting(current)) return releaseTemplate(ctx, current, datas.items, claims.items);

  const clusterName =
    current.metadata.labels?.[CLUSTER_NAME_LABEL] ??
    claims.items
      .filter((c) => c.spec?.template?.name === name)
      .map((c) => c.metadata.labels?.[CLUSTER_NAME_LABEL])
      .find((v) => v);
  await ensureTemplateMeta(ctx, current, clusterName, { always: true });
  return done();
}

/**
 * Does `claim` still wait for an index of the template `namespace/name`: a live claim of it with
 * neither its index (status.renderedData) nor an error that stops its allocation?
 */
export function waitsForIndex(claim: DataClaimView, namespace: string, name: string): boolean {
  const status = claim.status;
  return (
    isClaimOfTemplate(claim, namespace, name) &&
    !isDeleting(claim) &&
    !status?.renderedData?.name &&
    !status?.errorMessage
  );
}

/** Is `claim` a claim of the template `namespace/name` (spec.template, namespace defaulted)? */
export function isClaimOfTemplate(claim: DataClaimView, namespace: string, name: string): boolean {
  const ref = claim.spec?.template;
  return (
    claim.metadata.namespace === namespace &&
    ref?.name === name &&
    (ref.namespace || claim.metadata.namespace) === namespace
  );
}

/**
 * The Metal3Data that depend on this template object: created from it (spec.template names it) or
 * owned by it. Data linked only through a shared templateReference belong to another template.
 */
export function isDataOfTemplateObject(template: KubeObject, data: Metal3DataView): boolean {
  if (data.metadata.namespace !== template.metadata.namespace) return false;
  if (isOwnedBy(data, template.metadata.uid)) return true;
  const ref = data.spec?.template;
  return (
    ref?.name === template.metadata.name &&
    (ref?.namespace || data.metadata.namespace) === template.metadata.namespace
  );
}

/**
 * A deleting template: wait while a live claim of it or a Metal3Data of it is left, then drop our
 * finalizer. A Metal3Data whose claim is gone would hold the template for ever (CAPM3 issue 1994):
 * it is released here as its claim's release would have done.
 */
async function releaseTemplate(
  ctx: ReconcileContext,
  raw: TemplateView,
  datas: Metal3DataView[],
  claims: DataClaimView[],
): Promise<ReconcileResult> {
  const { client } = ctx;
  const ns = raw.metadata.namespace!;
  const name = raw.metadata.name!;
  if (!hasFinalizer(raw, FINALIZER.dataTemplate)) return done('template deleting, not held by us');

  let dependents = datas.filter((d) => isDataOfTemplateObject(raw, d));
  let releasedOrphans = 0;
  for (const data of dependents) {
    if (claims.some((c) => isDataOfClaim(data, c))) continue;
    // Not among the listed claims: read the claim itself before calling the data an orphan.
    const claimName = data.spec?.claim?.name;
    const claim = claimName
      ? await client.get(V.Metal3DataClaim, data.spec?.claim?.namespace || ns, claimName)
      : undefined;
    if (claim && isDataOfClaim(data, claim)) continue;
    await releaseOrphanData(ctx, data);
    releasedOrphans++;
  }
  if (releasedOrphans > 0) {
    ctx.log.info('orphaned Metal3Data of a deleting template released', {
      template: `${ns}/${name}`,
      count: releasedOrphans,
    });
    dependents = (await client.list(V.Metal3Data, ns)).items.filter((d) => isDataOfTemplateObject(raw, d));
  }

  const live = claims.filter((c) => isClaimOfTemplate(c, ns, name) && !isDeleting(c));
  return dropFinalizerWhenUnheld(ctx, V.Metal3DataTemplate, raw, FINALIZER.dataTemplate, {
    claims: live,
    claimsNoun: 'Metal3DataClaim(s)',
    handedOut: dependents,
    handedOutNoun: 'Metal3Data',
    releasedNote: 'no claim or Metal3Data left: template finalizer removed',
    logField: 'template',
  });
}

/** Does the template lack its finalizer, or (for `clusterName`) its cluster label or Metal3Cluster owner? */
export function templateMetaMissing(template: KubeObject, clusterName: string | undefined): boolean {
  if (isDeleting(template)) return false;
  if (!hasFinalizer(template, FINALIZER.dataTemplate)) return true;
  if (!clusterName) return false;
  return !template.metadata.labels?.[CLUSTER_NAME_LABEL] || !ownerOfKind(template, 'Metal3Cluster');
}

/** The Metal3Cluster of the Cluster `clusterName` (its infrastructureRef), if it exists. */
async function metal3ClusterOf(
  ctx: ReconcileContext,
  namespace: string,
  clusterName: string,
): Promise<KubeObject | undefined> {
  const { client } = ctx;
  const cluster = await getCluster(
    ctx,
    namespace,
    clusterName,
    (c) => c?.spec?.infrastructureRef !== undefined,
  );
  const infra = cluster?.spec?.infrastructureRef;
  // Only its name and uid are used (an owner reference): read through its envelope.
  return infra?.kind === 'Metal3Cluster' && infra.name
    ? await client.get(METAL3CLUSTER_ENVELOPE, infra.namespace || namespace, infra.name)
    : undefined;
}

/**
 * The template's metadata in one write: our finalizer (deletion protection), and for
 * `clusterName` the label `cluster.x-k8s.io/cluster-name` and an owner reference to the cluster's
 * Metal3Cluster. Nothing is written when all are there, or when the template is deleting (no
 * finalizer can be added then). `always`: look the Metal3Cluster up even when an owner of that
 * kind is there (the template reconcile); otherwise only when something is missing (the claim
 * path, before it creates a Metal3Data). Returns the template as it is now (undefined when gone).
 */
const METAL3CLUSTER_ENVELOPE = envelopeOf(K.Metal3Cluster);

export async function ensureTemplateMeta(
  ctx: ReconcileContext,
  current: TemplateView,
  clusterName: string | undefined,
  opts: { always?: boolean } = {},
): Promise<TemplateView | undefined> {
  if (isDeleting(current)) return current;
  if (!opts.always && !templateMetaMissing(current, clusterName)) return current;
  const namespace = current.metadata.namespace!;
  const m3c = clusterName ? await metal3ClusterOf(ctx, namespace, clusterName) : undefined;
  const r = await optimisticUpdate(
    ctx.client,
    V.Metal3DataTemplate,
    namespace,
    current.metadata.name!,
    (o) => {
      if (isDeleting(o)) return SKIP;
      let changed = addFinalizer(o, FINALIZER.dataTemplate);
      if (clusterName && !o.metadata.labels?.[CLUSTER_NAME_LABEL]) {
        o.metadata.labels = { ...(o.metadata.labels ?? {}), [CLUSTER_NAME_LABEL]: clusterName };
        changed = true;
      }
      if (m3c && !isOwnedBy(o, m3c.metadata.uid)) {
        // The seed shows the Metal3Cluster as controller; never steal the role from another controller.
        const ref = ownerRef(R.Metal3Cluster, m3c, { controller: !controllerOf(o) });
        o.metadata.ownerReferences = [...(o.metadata.ownerReferences ?? []), ref];
        changed = true;
      }
      return changed ? undefined : SKIP;
    },
    { current, expectedUid: current.metadata.uid },
  );
  return r.outcome === 'gone' ? undefined : r.object;
}
