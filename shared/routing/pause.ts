/**
 * Cluster API pause in the routing table: every function leaves a paused Cluster's objects alone
 * (shared/reconcile/object.ts), so the Cluster's unpause must wake them again — by event, not by
 * the safety requeue. An object belongs to a Cluster by its cluster-name label, else its
 * `spec.clusterName` (templates, pools), as the functions read it (shared/capi/lookups.ts).
 */
import type { KindName } from '../api/resources.ts';
import { CAPI_PAUSED_ANNOTATION, CLUSTER_NAME_LABEL } from '../api/wellknown.ts';
import type { KubeObject } from '../kube/types.ts';
import { objectGroup } from '../queue/message.ts';
import type { CacheView } from './cache.ts';
import { live, nsOf, spec } from './predicates.ts';
import { poolGroup, templateGroup } from './related.ts';
import type { RoutingEvent, Target } from './types.ts';

/** A Cluster is paused: `spec.paused`, or its paused annotation. */
export const clusterPaused = (o: KubeObject): boolean =>
  spec(o).paused === true || Object.hasOwn(o.metadata.annotations ?? {}, CAPI_PAUSED_ANNOTATION);

/** The Cluster was paused and is no more (a resync of an unpaused Cluster wakes nobody). */
export const unpaused = (ev: RoutingEvent): boolean =>
  live(ev) && ev.old !== undefined && clusterPaused(ev.old) && !clusterPaused(ev.object);

const clusterOfObject = (o: KubeObject): string | undefined => {
  const label = o.metadata.labels?.[CLUSTER_NAME_LABEL];
  const fromSpec = spec(o).clusterName;
  return label || (typeof fromSpec === 'string' ? fromSpec : undefined);
};

/** The cached objects of `kinds` that belong to `cluster` (in its namespace) and satisfy `pred`. */
export function objectsOfCluster(
  cluster: KubeObject,
  cache: CacheView,
  kinds: readonly KindName[],
  pred: (o: KubeObject) => boolean = () => true,
): Target[] {
  const ns = nsOf(cluster);
  return kinds.flatMap((kind) =>
    cache
      .list(kind, ns)
      .filter((o) => clusterOfObject(o) === cluster.metadata.name && pred(o))
      .map((object) => ({ kind, object })),
  );
}

/** allocateIndex's FIFO group of any kind it reconciles (claims by template / pool). */
export const allocationGroup = (t: Target): string =>
  t.kind === 'Metal3DataClaim'
    ? templateGroup(t)
    : t.kind === 'IPClaim'
      ? poolGroup(t)
      : objectGroup(t.kind, nsOf(t.object), t.object.metadata.name ?? '');
