/**
 * Routing without a relay: runtimes that receive single events (the HTTP runtime with Knative's
 * ApiServerSource, `replay --event`) have no watch cache, so they load just the kinds the routes
 * for the event's kind read, in the event's namespace, and route against that.
 */
import { envelopeOf, K, type KindName } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';
import type { RoutedMessage } from '../queue/message.ts';
import { RelayCache, stripSecret } from './cache.ts';
import { kindsReadFor, ROUTES, type Route, type RoutingEvent, route } from './index.ts';

export async function loadCacheFor(
  client: KubeClient,
  kind: string,
  namespace: string | undefined,
  routes: readonly Route[] = ROUTES,
): Promise<RelayCache> {
  const cache = new RelayCache();
  const kinds: KindName[] = kindsReadFor(kind, routes);
  await Promise.all(
    kinds.map(async (k) => {
      // Envelopes only: routing reads objects key by key and must not choke on one a function rejects.
      const t = envelopeOf(K[k]);
      const list = await client.list(t, t.namespaced ? namespace : undefined);
      const store = cache.store(k);
      for (const o of list.items) store.upsert(k === 'Secret' ? stripSecret(o) : o);
    }),
  );
  return cache;
}

/** Routes one event, reading related objects from the API (a few LISTs in its namespace). */
export async function routeWithApi(
  client: KubeClient,
  ev: RoutingEvent,
  routes: readonly Route[] = ROUTES,
): Promise<RoutedMessage[]> {
  const cache = await loadCacheFor(client, ev.object.kind ?? '', ev.object.metadata.namespace, routes);
  return route(ev, cache, routes);
}
