/**
 * Batch allocation (ADR 033): a pass serialized by its Metal3DataTemplate (the queued runtimes,
 * ADR 012) also serves a page of the template's other waiting claims, as CAPM3's
 * DataTemplateManager.UpdateDatas serves every waiting claim of a template in one reconcile. Each
 * gets the next lowest free index (the create of `<template>-<index>` stays the arbiter), the
 * template's status is written once for all of them (claim.ts, recordAllocations), then each
 * claim's status.renderedData.
 *
 * Only claims whose own pass could finish or release whatever a crash here leaves are served:
 * really waiting (not deleting, no error, of this template and namespace), carrying the claim
 * finalizer (a claim deleted from then on is released by its deletion path, which finds its
 * Metal3Data by spec.claim.name), and not in the template's burst registry (an unserialized runtime
 * is allocating it right now). Crash points, each safe (ADR 033):
 *  - after some creates, before the template patch: the claims still wait; their own pass (or the
 *    next batch) reads their Metal3Data by spec.claim.name and reuses it; the indexes, not yet in
 *    status.indexes, cost a later create an AlreadyExists, never a duplicate;
 *  - after the template patch, before a claim's status: the claim reads as served to narrow reads
 *    (mapped) and its own pass reuses its Metal3Data and writes its status.
 */

import { fieldSelected, fieldSelectedPage } from '../../shared/allocation/field-selected.ts';
import { nthFreeIndex } from '../../shared/allocation/index-allocation.ts';
import { hasFinalizer, isDeleting } from '../../shared/allocation/objects.ts';
import { allocatingOf } from '../../shared/allocation/registry.ts';
import { isDataOfClaim } from '../../shared/allocation/serves.ts';
import { belongsToTemplate } from '../../shared/allocation/template-match.ts';
import { type DataClaimView, type TemplateView, V } from '../../shared/allocation/views.ts';
import { type Metal3Data, R } from '../../shared/api/index.ts';
import { FINALIZER } from '../../shared/api/wellknown.ts';
import { InvalidError, isAlreadyExists } from '../../shared/kube/errors.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { hasIndex, type IndexedData, unservedCount } from './plan-index.ts';
import { waitsForIndex } from './template.ts';

/** Waiting claims served per serialized pass beyond its own (a page: bounded reads and writes). */
export const BATCH_CLAIMS = 15;

/** Create rounds per batch: each round re-aims the claims whose create lost (AlreadyExists). */
const BATCH_CREATE_ROUNDS = 5;

/** A claim served by a batch, as listed (its copy is the base of its status update). */
export interface Batched {
  claim: DataClaimView;
  data: IndexedData;
}

export interface BatchInput {
  /** The template as the pass last read it (status.indexes, the registry, uid for owner refs). */
  template: TemplateView;
  /** The claim whose pass this is (served by the pass itself, not here). */
  claimName: string;
  /** Indexes known taken: the pass's own Metal3Data and the indexes its creates lost. */
  taken: Iterable<number>;
  /** Builds the Metal3Data `<template>-<index>` for a claim (claim.ts newData). */
  newData: (claim: DataClaimView, index: number) => Metal3Data;
}

/**
 * Is `claim` one a batch may serve: waiting for an index of the template, with the claim finalizer,
 * not in its burst registry, not the pass's own?
 */
export function batchable(claim: DataClaimView, input: Pick<BatchInput, 'template' | 'claimName'>): boolean {
  const t = input.template;
  const name = claim.metadata.name ?? '';
  return (
    name !== input.claimName &&
    waitsForIndex(claim, t.metadata.namespace!, t.metadata.name!) &&
    hasFinalizer(claim, FINALIZER.dataClaim) &&
    allocatingOf(t)[name] === undefined
  );
}

/**
 * Finds or creates the Metal3Data of up to BATCH_CLAIMS waiting claims of the template; returns
 * those served (nothing recorded yet). A claim whose Metal3Data is being deleted, whose create is
 * rejected, or that lost every round is left to its own pass. A failing request stops the batch
 * with what it served so far (the pass still records those, and its own claim).
 */
export async function allocateBatch(ctx: ReconcileContext, input: BatchInput): Promise<Batched[]> {
  const { client } = ctx;
  const t = input.template;
  if (isDeleting(t)) return [];
  const ns = t.metadata.namespace!;
  const page = await fieldSelectedPage(
    client,
    V.Metal3DataClaim,
    ns,
    `spec.template.name=${t.metadata.name},status.renderedData.name=`,
    // The pass's own claim still reads as waiting: one more than the batch.
    BATCH_CLAIMS + 1,
  );
  if (!page) return [];
  const claims = page.items.filter((c) => batchable(c, input)).slice(0, BATCH_CLAIMS);
  if (claims.length === 0) return [];

  // Each claim's own Metal3Data (a crashed earlier batch may have made it): reused, never doubled.
  const owns = await Promise.all(
    claims.map((c) => fieldSelected(client, V.Metal3Data, ns, `spec.claim.name=${c.metadata.name}`)),
  );
  const mapped = t.status?.indexes ?? {};
  const used = new Set<number>(input.taken);
  for (const key of Object.keys(mapped)) if (/^\d+$/.test(key)) used.add(Number(key));
  // Room for what unserialized runtimes have in flight (the registry), as the pass's own plan.
  const ahead = unservedCount(Object.keys(allocatingOf(t)), [], mapped);

  const served: Batched[] = [];
  const waiting: DataClaimView[] = [];
  claims.forEach((claim, i) => {
    const own = owns[i];
    if (!own) return; // field selectors refused: the claim's own pass plans from full lists
    const mine = own.filter(hasIndex).find((d) => belongsToTemplate(t, d) && isDataOfClaim(d, claim));
    if (!mine) {
      waiting.push(claim);
      return;
    }
    if (isDeleting(mine)) return;
    used.add(mine.spec.index);
    ctx.metrics?.allocation('Metal3Data', 'reused');
    served.push({ claim, data: mine });
  });

  const created = await createInRounds(ctx, 'Metal3Data', waiting, (claim) => {
    const index = nthFreeIndex(used, ahead);
    used.add(index);
    return () => client.create(R.Metal3Data, input.newData(claim, index));
  });
  for (const { claim, object } of created) served.push({ claim, data: object });
  return served;
}

/**
 * Creates, concurrently, one object per waiting claim, each aimed (`aim`: it marks what it aims at
 * as taken, or gives undefined when nothing is free) at the next free index or address; a create
 * that lost (AlreadyExists) re-aims its claim in the next round. A rejected create (validation,
 * admission) drops its claim (its own pass records the error); any other failure ends the rounds.
 */
export async function createInRounds<C, O>(
  ctx: ReconcileContext,
  resource: 'Metal3Data' | 'IPAddress',
  claims: readonly C[],
  aim: (claim: C) => (() => Promise<O>) | undefined,
): Promise<{ claim: C; object: O }[]> {
  const out: { claim: C; object: O }[] = [];
  let waiting = [...claims];
  for (let round = 0; round < BATCH_CREATE_ROUNDS && waiting.length > 0; round++) {
    const aims: { claim: C; create: () => Promise<O> }[] = [];
    for (const claim of waiting) {
      const create = aim(claim);
      if (!create) break; // nothing free: the rest are left to their own passes
      aims.push({ claim, create });
    }
    const results = await Promise.allSettled(aims.map((a) => a.create()));
    waiting = [];
    let failed: unknown;
    results.forEach((r, i) => {
      const { claim } = aims[i]!;
      if (r.status === 'fulfilled') {
        ctx.metrics?.allocation(resource, 'created');
        out.push({ claim, object: r.value });
      } else if (isAlreadyExists(r.reason)) {
        // Taken (it stays marked so): the claim aims at the next free one.
        ctx.metrics?.allocation(resource, 'alreadyExists');
        waiting.push(claim);
      } else if (!(r.reason instanceof InvalidError)) {
        failed = r.reason;
      }
    });
    if (failed !== undefined) {
      ctx.log.warn('batch allocation stopped', { resource, error: String(failed) });
      break;
    }
  }
  return out;
}
