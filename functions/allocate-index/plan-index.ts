/**
 * The decision of allocateIndex for one Metal3DataClaim, pure: reuse the Metal3Data that already
 * serves the claim, wait, or try to create `<template>-<index>` with the index of the claim's rank
 * among the pending claims (shared/allocation/index-allocation.ts), or in a burst among the
 * claims that joined the template's registry before it (allocating.ts, ADR 012).
 */

import { nthFreeIndex, rankAmong } from '../../shared/allocation/index-allocation.ts';
import { isDeleting } from '../../shared/allocation/objects.ts';
import { isDataOfClaim } from '../../shared/allocation/serves.ts';
import { belongsToTemplate } from '../../shared/allocation/template-match.ts';
import type { DataClaimView, Metal3DataView, TemplateView } from '../../shared/allocation/views.ts';
import type { KubeObject } from '../../shared/kube/types.ts';

/** A Metal3Data that holds an index (as listed: its other fields may be missing). */
export type IndexedData = Metal3DataView & { spec: NonNullable<Metal3DataView['spec']> & { index: number } };
export const hasIndex = (d: Metal3DataView): d is IndexedData => Number.isInteger(d.spec?.index);

export type IndexPlan =
  | { kind: 'reuse'; data: IndexedData }
  | { kind: 'wait'; reason: string }
  | { kind: 'create'; index: number; rank: number };

/**
 * Claims of this template that still wait for an index (the current one always counts): not
 * deleting, no allocation error, and not served — by a listed Metal3Data or by an entry of the
 * template's `status.indexes` (`mapped`).
 */
export function pendingClaims(
  template: TemplateView,
  claim: KubeObject,
  claims: readonly DataClaimView[],
  linked: readonly Metal3DataView[],
  mapped: Readonly<Record<string, string>> = {},
): string[] {
  const served = servedClaims(linked, mapped);
  const ns = template.metadata.namespace;
  const names = claims
    .filter(
      (c) =>
        c.metadata.namespace === ns &&
        c.spec?.template?.name === template.metadata.name &&
        (c.spec?.template?.namespace || c.metadata.namespace) === ns &&
        !isDeleting(c) &&
        !c.status?.errorMessage &&
        !served.has(c.metadata.name ?? ''),
    )
    .map((c) => c.metadata.name ?? '');
  names.push(claim.metadata.name ?? '');
  return names;
}

export interface IndexPlanInput {
  template: TemplateView;
  claim: KubeObject;
  /**
   * Every Metal3Data of the namespace, or (narrow reads) the claim's own candidates; filtered
   * here by the three template links.
   */
  datas: readonly Metal3DataView[];
  /** Every Metal3DataClaim of the namespace, or (narrow reads) the template's waiting ones. */
  claims: readonly DataClaimView[];
  /**
   * The template's `status.indexes` (index -> claim name): indexes given and the claims they
   * serve, for narrow reads that do not list every Metal3Data. It may lag the Metal3Data by a
   * moment (an index missing here fails its create with AlreadyExists and is tried no more).
   */
  mapped?: Readonly<Record<string, string>>;
  /** Indexes whose create already failed with AlreadyExists in this reconcile. */
  tried?: ReadonlySet<number>;
  /**
   * A burst (ADR 012): the claims that joined the template's registry before this one. The rank
   * is then the number of them still unserved, and `claims` is not used.
   */
  ahead?: readonly string[];
  /**
   * Spread concurrent claims by rank (default true). Off, every claim takes the plain lowest free
   * index (ProductConfig.indexSpreadByRank: the benchmark shows what the spreading saves).
   */
  spreadByRank?: boolean;
}

/** How many of `names` are not served by a listed Metal3Data or an entry of `mapped`. */
export function unservedCount(
  names: readonly string[],
  linked: readonly Metal3DataView[],
  mapped: Readonly<Record<string, string>>,
): number {
  const served = servedClaims(linked, mapped);
  return new Set(names.filter((n) => !served.has(n))).size;
}

/** The claims a listed Metal3Data or an entry of the template's `status.indexes` serves. */
const servedClaims = (
  linked: readonly Metal3DataView[],
  mapped: Readonly<Record<string, string>>,
): Set<string | undefined> => new Set([...linked.map((d) => d.spec?.claim?.name), ...Object.values(mapped)]);

export function planIndex(input: IndexPlanInput): IndexPlan {
  const { template, claim } = input;
  // Objects as listed, not parsed: a malformed neighbour must not stop allocation, but every
  // Metal3Data with an index holds it.
  const linked = input.datas.filter(hasIndex).filter((d) => belongsToTemplate(template, d));
  const mine = linked.find((d) => isDataOfClaim(d, claim));
  if (mine) {
    if (isDeleting(mine)) {
      return { kind: 'wait', reason: `Metal3Data ${mine.metadata.name} of this claim is being deleted` };
    }
    return { kind: 'reuse', data: mine };
  }
  const mapped = input.mapped ?? {};
  const used = new Set<number>(linked.map((d) => d.spec.index));
  for (const key of Object.keys(mapped)) if (/^\d+$/.test(key)) used.add(Number(key));
  for (const i of input.tried ?? []) used.add(i);
  const rank =
    input.spreadByRank === false
      ? 0
      : input.ahead
        ? unservedCount(input.ahead, linked, mapped)
        : rankAmong(claim.metadata.name ?? '', pendingClaims(template, claim, input.claims, linked, mapped));
  return { kind: 'create', index: nthFreeIndex(used, rank), rank };
}
