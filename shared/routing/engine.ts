/**
 * The routing engine: one event against the table, the messages it causes (one per function and
 * object at most); and what the table implies for watching (the kinds to watch).
 */
import { MessageEnvelope } from '../../events/envelope.ts';
import { apiVersionOf, type KindName, R } from '../api/resources.ts';
import { groupId, objectGroup, type RoutedMessage } from '../queue/message.ts';
import type { CacheView } from './cache.ts';
import { ROUTES } from './table.ts';
import type { Route, RoutingEvent, RoutingEventType, Target } from './types.ts';

/** Kinds the relay watches in the management cluster, and in each workload cluster. */
export function watchedKinds(routes: readonly Route[] = ROUTES): {
  management: KindName[];
  workload: KindName[];
} {
  const mgmt = new Set<KindName>();
  const workload = new Set<KindName>();
  for (const r of routes) {
    (r.scope === 'workload' ? workload : mgmt).add(r.on);
    for (const k of r.reads) mgmt.add(k);
  }
  return { management: [...mgmt], workload: [...workload] };
}

const REASON_OF: Record<RoutingEventType, 'added' | 'modified' | 'deleted'> = {
  ADDED: 'added',
  MODIFIED: 'modified',
  DELETED: 'deleted',
};

/** Routes one event: the messages it causes, one per function and object at most. */
export function route(
  ev: RoutingEvent,
  cache: CacheView,
  routes: readonly Route[] = ROUTES,
): RoutedMessage[] {
  const kind = ev.object.kind;
  const scope = ev.cluster && ev.cluster !== 'management' ? 'workload' : 'management';
  const out: RoutedMessage[] = [];
  const seen = new Set<string>();
  for (const r of routes) {
    if (r.on !== kind || (r.scope ?? 'management') !== scope) continue;
    if (r.when && !r.when(ev)) continue;
    const self = r.targets === 'self';
    if (self && scope === 'workload') continue; // functions take management keys only
    const targets: Target[] =
      r.targets === 'self' ? [{ kind: r.on, object: ev.object }] : r.targets(ev, cache);
    for (const t of targets) {
      const md = t.object.metadata;
      if (!md.name) continue;
      const dedup = `${r.fn}|${t.kind}|${md.namespace ?? ''}|${md.name}`;
      if (seen.has(dedup)) continue;
      seen.add(dedup);
      const candidate = {
        v: 1,
        function: r.fn,
        cluster: 'management',
        apiVersion: t.object.apiVersion ?? apiVersionOf(R[t.kind]),
        kind: t.kind,
        ...(md.namespace ? { namespace: md.namespace } : {}),
        name: md.name,
        ...(md.uid ? { uid: md.uid } : {}),
        ...(md.resourceVersion ? { resourceVersion: md.resourceVersion } : {}),
        reason: self ? (ev.resync ? 'resync' : REASON_OF[ev.type]) : 'related',
        ...(self ? {} : { cause: causeOf(ev) }),
        ...(ev.observedAt !== undefined ? { observedAt: ev.observedAt } : {}),
      };
      const parsed = MessageEnvelope.safeParse(candidate);
      if (!parsed.success) continue; // an object name no envelope can carry; nothing to do for it
      const group = r.group ? r.group(t) : objectGroup(t.kind, md.namespace, md.name);
      out.push({ msg: parsed.data, group: groupId(group) });
    }
  }
  return out;
}

/** `Kind/namespace/name@resourceVersion` (with `cluster:` for workload objects; `#resync` on resyncs). */
export function causeOf(ev: RoutingEvent): string {
  const md = ev.object.metadata;
  const where = ev.cluster && ev.cluster !== 'management' ? `${ev.cluster}:` : '';
  return `${where}${ev.object.kind}/${md.namespace ?? ''}/${md.name ?? ''}@${md.resourceVersion ?? ''}${ev.type === 'DELETED' ? '#deleted' : ''}${ev.resync ? `#resync` : ''}`.slice(
    0,
    400,
  );
}
