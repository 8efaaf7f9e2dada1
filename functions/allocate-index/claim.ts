/**
 * allocateIndex for a Metal3DataClaim: finalizer, the lowest free index of its template, the
 * Metal3Data `<template>-<index>` (the API server's create is the arbiter), claim status and the
 * template's status maps. Idempotent: a Metal3Data already serving the claim is reused.
 *
 * Before any Metal3Data is created from a template, the template carries its finalizer (with its
 * cluster label and Metal3Cluster owner, one write per template). A deleting template gives no
 * index to a new claim: the claim gets a terminal error instead (CAPM3 would still allocate and
 * keep the template waiting; we refuse, so a deletion in progress is not prolonged by new data).
 */

import { recordClaimError as recordError } from '../../shared/allocation/claim-error.ts';
import { indexReads } from '../../shared/allocation/data-reads.ts';
import {
  addFinalizer,
  copyLabels,
  dataName,
  hasFinalizer,
  isDeleting,
  isOwnedBy,
  keyOf,
  ownerRef,
  timestamp,
} from '../../shared/allocation/objects.ts';
import {
  allocatingOf,
  burstUnderWay,
  inRegistry,
  joinRegistry,
  leaveRegistry,
  type RegistryState,
} from '../../shared/allocation/registry.ts';
import { isDataOfClaim } from '../../shared/allocation/serves.ts';
import {
  type DataClaimView,
  type Metal3DataView,
  type TemplateView,
  V,
} from '../../shared/allocation/views.ts';
import { type Metal3Data, type Metal3DataClaim, R } from '../../shared/api/index.ts';
import { CLUSTER_NAME_LABEL, FINALIZER } from '../../shared/api/wellknown.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { InvalidError, isAlreadyExists } from '../../shared/kube/errors.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { isSerializedBy, type ReconcileContext } from '../../shared/reconcile/context.ts';
import { TerminalError, TransientError } from '../../shared/reconcile/errors.ts';
import { done, type ReconcileResult, requeueAfter } from '../../shared/reconcile/result.ts';
import {
  dropTemplateEntries,
  releaseDataClaim,
  releaseOrphanData,
  releaseSurplusData,
} from '../../shared/release/data.ts';
import { allocateBatch, type Batched } from './batch.ts';
import { type IndexedData, planIndex } from './plan-index.ts';
import { ensureTemplateMeta, waitsForIndex } from './template.ts';

/** Creates tried per reconcile before giving up (the queue retries later). */
export const MAX_CREATE_ATTEMPTS = 25;

/** A Metal3DataClaim, parsed by the opening (shared/reconcile/object.ts). */
export async function reconcileDataClaim(
  ctx: ReconcileContext,
  raw: Metal3DataClaim,
): Promise<ReconcileResult> {
  const { client } = ctx;
  const namespace = raw.metadata.namespace!;
  const name = raw.metadata.name!;
  if (isDeleting(raw)) return releaseDataClaim(ctx, namespace, name, raw);
  const claim = raw;
  const templateNs = claim.spec.template.namespace || namespace;
  if (templateNs !== namespace) {
    return recordClaimError(
      ctx,
      raw,
      new TerminalError('InvalidConfiguration', `spec.template.namespace must be empty or ${namespace}`),
    );
  }
  // Served already (by its own pass or by a batch, ADR 033): no template read, nothing written.
  const servedBy = await servingData(client, claim);
  if (servedBy) {
    ctx.metrics?.allocation('Metal3Data', 'reused');
    return done(`index ${servedBy.spec?.index ?? '?'} (served)`);
  }
  // Only the name and templateReference matter here (a view, shared/allocation/views.ts): a
  // template the renderer rejects still gets its indexes allocated (its Metal3Data carry the
  // rendering error).
  const templateRaw = await client.get(V.Metal3DataTemplate, namespace, claim.spec.template.name);
  if (!templateRaw) {
    // Woken by the template's creation event; the requeue is only a safety net.
    return requeueAfter(
      ctx.config.safetyRequeueSeconds,
      `Metal3DataTemplate ${claim.spec.template.name} not found`,
    );
  }
  const template = templateRaw;

  // The finalizer first: a claim deleted from now on releases whatever we create below.
  let claimObj = raw;
  if (!(raw.metadata.finalizers ?? []).includes(FINALIZER.dataClaim)) {
    const r = await optimisticUpdate(
      client,
      R.Metal3DataClaim,
      namespace,
      name,
      (o) => void addFinalizer(o, FINALIZER.dataClaim),
      {
        current: raw,
        expectedUid: raw.metadata.uid,
      },
    );
    if (r.outcome === 'gone') return done('claim gone');
    claimObj = r.object;
    if (isDeleting(claimObj)) return releaseDataClaim(ctx, namespace, name, claimObj);
  }

  // The template's finalizer (and cluster label and owner) before anything is created from it: a
  // template deleted from now on waits for what we create below. No write when all are there.
  const templateNow = await ensureTemplateMeta(
    ctx,
    templateRaw,
    claimObj.metadata.labels?.[CLUSTER_NAME_LABEL],
  );
  if (!templateNow) {
    return requeueAfter(
      ctx.config.safetyRequeueSeconds,
      `Metal3DataTemplate ${claim.spec.template.name} not found`,
    );
  }

  let data: IndexedData | undefined;
  const registry: RegistryState = { kind: V.Metal3DataTemplate, owner: templateNow, joined: false };
  const serialized = serializedByTemplate(ctx, template);
  const tried = new Set<number>();
  try {
    data = await allocate(ctx, template, claim, registry, claimObj, serialized, tried);
  } catch (e) {
    if (e instanceof TerminalError) {
      await leaveRegistry(client, registry, name);
      return recordClaimError(ctx, claimObj, e, e.reason === 'TemplateDeleting' ? e.reason : undefined);
    }
    throw e;
  }
  if (!data)
    return requeueAfter(ctx.config.safetyRequeueSeconds, 'Metal3Data of this claim is being deleted');

  // Serialized by its template: a page of its other waiting claims is served in this pass too,
  // recorded in the same template status write (ADR 033).
  const owner = registry.owner;
  const batch = serialized
    ? await allocateBatch(ctx, {
        template: owner,
        claimName: name,
        taken: [...tried, data.spec.index],
        newData: (c, index) => newData(template, owner, c, index),
      })
    : [];

  // The claim may have been deleted (and released by the deprovision function) while we created
  // its Metal3Data; then nobody else would ever release that Metal3Data. Look once more.
  const after = await client.get(R.Metal3DataClaim, namespace, name);
  if (!after || after.metadata.uid !== raw.metadata.uid || isDeleting(after)) {
    await leaveRegistry(client, registry, name);
    await recordAllocations(ctx, registry, undefined, batch);
    if (after && after.metadata.uid === raw.metadata.uid)
      return releaseDataClaim(ctx, namespace, name, after);
    await releaseOrphanData(ctx, data);
    return done('claim deleted during allocation; its Metal3Data was released');
  }

  await recordAllocations(ctx, registry, { claim: after, data }, batch);
  return done(`index ${data.spec.index}${batch.length > 0 ? `; ${batch.length} more claims served` : ''}`);
}

/**
 * The Metal3Data that already serves `claim`, by the name its status.renderedData gives: one of its
 * template, naming the claim in spec.claim, owned by it (its uid), not deleting. Only for a claim
 * with our finalizer and no error (otherwise the full pass has something to do).
 */
async function servingData(client: KubeClient, claim: Metal3DataClaim): Promise<Metal3DataView | undefined> {
  const ref = claim.status?.renderedData;
  if (!ref?.name || claim.status?.errorMessage || !hasFinalizer(claim, FINALIZER.dataClaim)) return undefined;
  const ns = claim.metadata.namespace!;
  const data = await client.get(V.Metal3Data, ref.namespace || ns, ref.name);
  if (!data || isDeleting(data) || !isDataOfClaim(data, claim) || !isOwnedBy(data, claim.metadata.uid))
    return undefined;
  const t = data.spec?.template;
  return t?.name === claim.spec.template.name && (t.namespace || data.metadata.namespace) === ns
    ? data
    : undefined;
}

/**
 * Serialized by its template (the queued runtimes, ADR 012): no other allocation of the template
 * runs in them meanwhile. Only for a template that shares its index space with no other (narrow
 * reads, ADR 009).
 */
const serializedByTemplate = (ctx: ReconcileContext, template: TemplateView): boolean =>
  !template.spec?.templateReference &&
  isSerializedBy(ctx, 'Metal3DataTemplate', template.metadata.namespace, template.metadata.name!);

/** Does the claim `name` still wait for an index of `template` (for the registry's stale check)? */
async function claimWaits(client: KubeClient, template: TemplateView, name: string): Promise<boolean> {
  const c = await client.get(V.Metal3DataClaim, template.metadata.namespace!, name);
  return c !== undefined && waitsForIndex(c, template.metadata.namespace!, template.metadata.name!);
}

/** Finds or creates the Metal3Data of the claim; undefined when it must wait. */
async function allocate(
  ctx: ReconcileContext,
  template: TemplateView,
  claim: Metal3DataClaim,
  registry: RegistryState,
  claimRaw: Metal3DataClaim,
  serialized: boolean,
  /** Indexes whose create failed with AlreadyExists (filled here: the batch skips them too). */
  tried: Set<number>,
): Promise<IndexedData | undefined> {
  const { client } = ctx;
  const ns = claim.metadata.namespace!;
  const claimName = claim.metadata.name!;
  const templateRaw = registry.owner;
  // Narrow reads only when the template shares its index space with no other template (ADR 009).
  const narrowAllowed = !template.spec?.templateReference;
  // In a burst: the claims that joined the template's registry before this one (ADR 012).
  let ahead: string[] | undefined;
  // Serialized by its template (the queued runtimes): no other claim of the template is being
  // allocated by them meanwhile, so the claim takes the lowest free index (counting only what
  // other runtimes have in flight: the registry's entries), with no page and no join.
  const spread = ctx.config.indexSpreadByRank;
  for (let attempt = 0; attempt < MAX_CREATE_ATTEMPTS; attempt++) {
    // The template as read at the start of this reconcile, then (narrow reads take the given
    // indexes from its status.indexes) fresh after each AlreadyExists.
    if (attempt > 0 && narrowAllowed) {
      const fresh = await client.get(V.Metal3DataTemplate, ns, template.metadata.name!);
      if (!fresh) throw new TransientError(`Metal3DataTemplate ${ns}/${template.metadata.name} not found`);
      registry.owner = fresh;
    }
    if (serialized) ahead = Object.keys(allocatingOf(registry.owner)).filter((n) => n !== claimName);
    const reads = await indexReads(
      client,
      ns,
      template.metadata.name!,
      claimName,
      narrowAllowed,
      serialized || (burstUnderWay(registry) && spread),
    );
    const planFor = () =>
      planIndex({
        template,
        claim,
        datas: reads.narrow ? [...reads.own, ...reads.unrendered] : reads.datas,
        claims: reads.narrow ? reads.pending : reads.claims,
        ...(reads.narrow ? { mapped: statusIndexes(registry.owner) } : {}),
        ...(ahead ? { ahead } : {}),
        tried,
        spreadByRank: spread,
      });
    let plan = planFor();
    if (
      plan.kind === 'create' &&
      !ahead &&
      reads.narrow &&
      (reads.burst || burstUnderWay(registry)) &&
      spread &&
      !isDeleting(registry.owner)
    ) {
      // A burst (more claims wait than a page holds, or one is still under way): rank by the
      // registry, not by the backlog.
      ahead = await joinRegistry(client, registry, claimName, ctx.now(), (t, n) => claimWaits(client, t, n));
      if (ahead) plan = planFor();
    }
    if (plan.kind === 'reuse') {
      ctx.metrics?.allocation('Metal3Data', 'reused');
      return plan.data;
    }
    if (plan.kind === 'wait') return undefined;
    if (isDeleting(registry.owner)) {
      // A new index would only prolong the deletion (the template waits for every Metal3Data).
      throw new TerminalError(
        'TemplateDeleting',
        `Metal3DataTemplate ${keyOf(templateRaw)} is being deleted: no index is allocated for a new claim`,
      );
    }
    const body = newData(template, templateRaw, claimRaw, plan.index);
    try {
      const created = await client.create(R.Metal3Data, body);
      ctx.metrics?.allocation('Metal3Data', 'created');
      ctx.log.debug('Metal3Data created', { name: body.metadata.name, index: plan.index, rank: plan.rank });
      return created;
    } catch (e) {
      if (e instanceof InvalidError) {
        // Rejected (validation/admission): retrying the same object cannot help.
        throw new TerminalError(
          'CreateFailed',
          `Failed to create associated Metal3Data object: ${e.message}`,
        );
      }
      if (!isAlreadyExists(e)) throw e;
      // Someone took the index: re-list at once and take the next free one (no sleep).
      ctx.metrics?.allocation('Metal3Data', 'alreadyExists');
      const existing = await client.get(V.Metal3Data, ns, body.metadata.name!);
      if (existing && existing.spec?.claim?.name === claim.metadata.name) {
        ctx.metrics?.allocation('Metal3Data', 'duplicateCreate');
      }
      tried.add(plan.index);
    }
  }
  throw new TransientError(
    `no free index could be created for ${ns}/${claim.metadata.name} after ${MAX_CREATE_ATTEMPTS} attempts`,
  );
}

const statusIndexes = (t: TemplateView): Record<string, string> => t.status?.indexes ?? {};

/** The Metal3Data for `claim` at `index` (seed 001: template as controller owner, plus the claim). */
export function newData(
  template: TemplateView,
  templateRaw: TemplateView,
  claimRaw: DataClaimView,
  index: number,
): Metal3Data {
  const ns = template.metadata.namespace!;
  const spec: Metal3Data['spec'] = {
    index,
    template: { name: template.metadata.name!, namespace: ns },
    claim: { name: claimRaw.metadata.name!, namespace: claimRaw.metadata.namespace },
  };
  if (template.spec?.templateReference) spec.templateReference = template.spec.templateReference;
  return {
    metadata: {
      name: dataName(template.metadata.name!, index),
      namespace: ns,
      labels: copyLabels(claimRaw),
      // renderData's finalizer too: it would add it as its first write (one write fewer per machine).
      finalizers: [FINALIZER.dataClaim, FINALIZER.data],
      ownerReferences: [
        ownerRef(R.Metal3DataTemplate, templateRaw, { controller: true }),
        ownerRef(R.Metal3DataClaim, claimRaw),
      ],
    },
    spec,
  };
}

/**
 * The template's status maps for these entries (the pass's own claim, `own`, and those a batch
 * served) in one write, then each claim's status.renderedData. In this order a claim never looks
 * both unserved (no renderedData) and unmapped while its Metal3Data exists, to the narrow reads of
 * a concurrent allocation (ADR 009): it would rank that claim as still waiting and leave its index
 * free in the plan.
 */
async function recordAllocations(
  ctx: ReconcileContext,
  registry: RegistryState,
  own: { claim: Metal3DataClaim; data: IndexedData } | undefined,
  batch: readonly Batched[],
) {
  const { client } = ctx;
  const templateRaw = registry.owner;
  const ns = templateRaw.metadata.namespace!;
  const status = templateRaw.status ?? {};
  const leaving = own !== undefined && inRegistry(registry, own.claim.metadata.name!);
  const entries = [...(own ? [own] : []), ...batch]
    .map(({ claim, data }) => ({
      claim: claim.metadata.name!,
      index: String(data.spec.index),
      data: data.metadata.name!,
    }))
    .filter((e) => status.indexes?.[e.index] !== e.claim || status.dataNames?.[e.claim] !== e.data);
  if (leaving || entries.length > 0) {
    // Merge patches of map keys: commutative with every other claim's entry, so concurrent
    // allocations on one template do not conflict on it. The template reconcile rebuilds both maps
    // from the Metal3Data list (optimistic update), which corrects any stale entry.
    await client.patch(
      R.Metal3DataTemplate,
      ns,
      templateRaw.metadata.name!,
      {
        status: {
          indexes: Object.fromEntries(entries.map((e) => [e.index, e.claim])),
          dataNames: Object.fromEntries(entries.map((e) => [e.claim, e.data])),
          // Served: out of the burst registry in the same write (ADR 012).
          ...(leaving ? { allocating: { [own.claim.metadata.name!]: null } } : {}),
          lastUpdated: timestamp(ctx.now()),
        },
      },
      'merge',
      { status: true },
    );
  }
  if (own) {
    await optimisticUpdate(
      client,
      R.Metal3DataClaim,
      ns,
      own.claim.metadata.name!,
      (o) => {
        const { errorMessage: _cleared, ...rest } = o.status ?? {};
        o.status = { ...rest, renderedData: dataRef(own.data) };
      },
      // The copy read just after the allocation (fresh): a duplicate delivery that wrote the same
      // status meanwhile costs a 409 and a re-read, then nothing is written.
      { current: own.claim, expectedUid: own.claim.metadata.uid, status: true },
    );
  }
  const results = await Promise.allSettled(batch.map((b) => recordBatched(ctx, templateRaw, b)));
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

const dataRef = (data: IndexedData) => ({ name: data.metadata.name!, namespace: data.metadata.namespace });

/**
 * A batched claim's status.renderedData, from the copy the batch listed. A claim that changed
 * meanwhile is read again (a 409); one gone, replaced (another uid) or deleting is handled as the
 * pass's own claim would be when deleted during its allocation: its Metal3Data is released, never
 * leaked, and its entry leaves the template's status.
 */
async function recordBatched(ctx: ReconcileContext, template: TemplateView, b: Batched): Promise<void> {
  const ns = b.claim.metadata.namespace!;
  const name = b.claim.metadata.name!;
  const r = await optimisticUpdate(
    ctx.client,
    V.Metal3DataClaim,
    ns,
    name,
    (o) => {
      // Deleting: released below. Served meanwhile (by another runtime): its status stays.
      if (isDeleting(o) || o.status?.renderedData?.name) return SKIP;
      const { errorMessage: _cleared, ...rest } = o.status ?? {};
      o.status = { ...rest, renderedData: dataRef(b.data) };
    },
    { current: b.claim, expectedUid: b.claim.metadata.uid, status: true },
  );
  if (r.outcome === 'gone') {
    await releaseOrphanData(ctx, b.data);
    await dropTemplateEntries(ctx, ns, template.metadata.name!, name, {
      index: b.data.spec.index,
      dataName: b.data.metadata.name!,
    });
    ctx.log.info('claim deleted during its batch allocation; its Metal3Data was released', {
      claim: `${ns}/${name}`,
    });
  } else if (r.outcome === 'skipped' && isDeleting(r.object)) {
    await releaseDataClaim(ctx, ns, name, r.object);
  } else if (r.outcome === 'skipped' && r.object.status?.renderedData?.name !== b.data.metadata.name) {
    // Served by another allocation meanwhile (the serialization lapsed): ours is surplus.
    await releaseSurplusData(ctx, b.data);
    await dropTemplateEntries(ctx, ns, template.metadata.name!, name, {
      index: b.data.spec.index,
      dataName: b.data.metadata.name!,
    });
  }
}

/** Bad input on the claim: status.errorMessage, a Warning Event, terminal. */
const recordClaimError = (
  ctx: ReconcileContext,
  raw: KubeObject,
  err: Error,
  failureReason = 'InvalidConfiguration',
): Promise<ReconcileResult> =>
  recordError(ctx, R.Metal3DataClaim, raw, err.message, 'AllocationFailed', failureReason);

/** The opening's recorder: a schema failure (the claim's or a related object's), once. */
export const recordDataClaimFailure = (
  ctx: ReconcileContext,
  raw: KubeObject,
  err: TerminalError,
): Promise<ReconcileResult> =>
  recordError(ctx, R.Metal3DataClaim, raw, err.message, 'AllocationFailed', err.reason, { once: true });
