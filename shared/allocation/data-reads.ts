/**
 * What allocateIndex reads about a template's Metal3Data and claims (ADR 009). With the CRDs'
 * selectableFields (Kubernetes 1.31+) the server returns only what one claim needs:
 *  - the claim's own Metal3Data (`spec.claim.name`), about one object;
 *  - the template's claims still waiting for an index (`spec.template.name` and an empty
 *    `status.renderedData.name`), a page of them: more than a page waiting is a burst, ranked
 *    through the template's registry of claims being allocated instead (ADR 012);
 *  - the template's Metal3Data not yet rendered (`spec.template.name`, `status.ready!=true`): the
 *    ones just created, whose index may not be in the template's status yet — without them a
 *    concurrent plan sees that index free and that claim still waiting, and its create fails;
 * and the other indexes already given come from the template's `status.indexes`, the arbiter staying
 * the create of `<template>-<index>`. That arbiter only covers the template's own names, so a
 * template with a `templateReference` (its index space shared with other templates' Metal3Data,
 * under their names) is always planned from full lists. A server without those field labels answers 400: then
 * every Metal3Data and claim of the namespace is listed, as the reference does, for the rest of
 * this process (field-selected.ts: one refused request, not one per claim).
 */
import type { KubeClient } from '../kube/client.ts';
import {
  fieldSelectedOrAll,
  fieldSelectedPage as page,
  fieldSelected as selected,
  selectorsRefused,
} from './field-selected.ts';
import { PENDING_PAGE } from './registry.ts';
import { type DataClaimView, type Metal3DataView, V } from './views.ts';

/** The Metal3Data that may belong to `claimName` (narrow), or every one of the namespace. */
export const dataOfClaimCandidates = (
  client: KubeClient,
  namespace: string,
  claimName: string,
): Promise<Metal3DataView[]> =>
  fieldSelectedOrAll(client, V.Metal3Data, namespace, `spec.claim.name=${claimName}`);

export type IndexReads =
  | {
      narrow: true;
      own: Metal3DataView[];
      /** The first PENDING_PAGE waiting claims; `burst` when more wait (ADR 012). */
      pending: DataClaimView[];
      burst: boolean;
      /** Unrendered Metal3Data: all of them, or (a burst) the first page, a hint only. */
      unrendered: Metal3DataView[];
    }
  | { narrow: false; datas: Metal3DataView[]; claims: DataClaimView[] };

/**
 * The reads of one allocation attempt for `claimName` on `templateName`; narrow ones only when
 * `narrowAllowed` (the template shares its index space with no other template). Narrow reads are
 * bounded by a page: when more claims wait than it holds, the attempt is a burst, ranked through
 * the template's registry instead of the backlog (allocating.ts), and the unrendered page is only
 * a hint; otherwise the unrendered Metal3Data are read whole (they are given indexes). With
 * `ownOnly` (a burst under way: the template's registry has entries; or the claim delivered in its
 * template's FIFO group) only the claim's own Metal3Data is read.
 */
export async function indexReads(
  client: KubeClient,
  namespace: string,
  templateName: string,
  claimName: string,
  narrowAllowed: boolean,
  ownOnly = false,
): Promise<IndexReads> {
  if (
    narrowAllowed &&
    !selectorsRefused(client, V.Metal3Data) &&
    !selectorsRefused(client, V.Metal3DataClaim)
  ) {
    if (ownOnly) {
      // The claim ranks by the registry (or is the only allocation of its FIFO group): only its
      // own Metal3Data matters.
      const own = await selected(client, V.Metal3Data, namespace, `spec.claim.name=${claimName}`);
      if (own) return { narrow: true, own, pending: [], burst: true, unrendered: [] };
    }
    const unrenderedSelector = `spec.template.name=${templateName},status.ready!=true`;
    const [own, pending, unrendered] = await Promise.all([
      selected(client, V.Metal3Data, namespace, `spec.claim.name=${claimName}`),
      page(
        client,
        V.Metal3DataClaim,
        namespace,
        `spec.template.name=${templateName},status.renderedData.name=`,
        PENDING_PAGE,
      ),
      page(client, V.Metal3Data, namespace, unrenderedSelector, PENDING_PAGE),
    ]);
    if (own && pending && unrendered) {
      const burst = !pending.complete;
      const rest =
        burst || unrendered.complete
          ? unrendered.items
          : await selected(client, V.Metal3Data, namespace, unrenderedSelector);
      if (rest) return { narrow: true, own, pending: pending.items, burst, unrendered: rest };
    }
  }
  const [datas, claims] = await Promise.all([
    client.list(V.Metal3Data, namespace),
    client.list(V.Metal3DataClaim, namespace),
  ]);
  return { narrow: false, datas: datas.items, claims: claims.items };
}
