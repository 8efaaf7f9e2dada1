/**
 * Routing without a relay: runtimes that receive single events (the HTTP runtime with Knative's
 * ApiServerSource, `replay --event`) have no watch cache. They route against a view that reads
 * on demand: the routes run against what was read so far, the view records what they looked for
 * and lacked, that is read from the API (a GET by name; a LIST only where a route looks at a
 * namespace's objects, and only when its `when` held), and the routes run again until nothing is
 * missing. Routing is pure, so a re-run is the same decision with more facts. With the previous
 * state of the object remembered (RoutingMemory), the relay's change predicates apply as they do
 * in the relay: a host's status heartbeat passes none of them, and reads at most what a route
 * without a predicate looks up by name (docs/adr/021-knative-oidc-cloudevents.md, bench
 * `apiserversource`).
 */
import { envelopeOf, K, type KindName } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';
import type { KubeObject } from '../kube/types.ts';
import type { RoutedMessage } from '../queue/message.ts';
import { type CacheView, stripSecret, uidOf } from './cache.ts';
import { ROUTES, route } from './index.ts';
import { INDEXES, type IndexName } from './indexes.ts';
import type { Route, RoutingEvent } from './types.ts';

/** Chained lookups (a claim, then its machine) settle in a few rounds; more means a bug. */
const MAX_ROUNDS = 6;
const ALL = '*';

/** A CacheView over what was read so far; what it lacked is in `wanted`. */
class LookupView implements CacheView {
  private readonly objects = new Map<string, KubeObject | null>();
  private readonly lists = new Map<string, KubeObject[]>();
  readonly wantedGets = new Map<string, { kind: KindName; ns: string; name: string }>();
  readonly wantedLists = new Map<string, { kind: KindName; ns: string | undefined }>();
  private readonly mayList: ReadonlySet<KindName>;

  constructor(routes: readonly Route[]) {
    this.mayList = new Set(routes.flatMap((r) => r.lists ?? []));
  }

  get(kind: KindName, namespace: string | undefined, name: string): KubeObject | undefined {
    const ns = namespace ?? '';
    const listed = this.lists.get(`${kind}|${ns}`) ?? this.lists.get(`${kind}|${ALL}`);
    if (listed) return listed.find((o) => (o.metadata.namespace ?? '') === ns && o.metadata.name === name);
    // A namespaced kind without a namespace names nothing (the relay's cache finds nothing either).
    if (!name || (K[kind].namespaced && !ns)) return undefined;
    const key = `${kind}|${ns}|${name}`;
    const o = this.objects.get(key);
    if (o === undefined) this.wantedGets.set(key, { kind, ns, name });
    return o ?? undefined;
  }

  list(kind: KindName, namespace?: string): KubeObject[] {
    if (namespace === '' && K[kind].namespaced) return [];
    const key = `${kind}|${namespace ?? ALL}`;
    const own = this.lists.get(key);
    if (own) return own;
    const all = this.lists.get(`${kind}|${ALL}`);
    if (all) return all.filter((o) => o.metadata.namespace === namespace);
    // The routing role grants list on declared kinds only: an undeclared list is a table bug.
    if (!this.mayList.has(kind)) throw new Error(`a route lists ${kind} without declaring it in \`lists\``);
    this.wantedLists.set(key, { kind, ns: namespace });
    return [];
  }

  byUid(kind: KindName, uid: string): KubeObject | undefined {
    // No GET by uid in the API: the kind is listed in every namespace (workload Node routes only).
    return this.list(kind).find((o) => uidOf(o) === uid);
  }

  byIndex(index: IndexName, namespace: string, value: string): KubeObject[] {
    // No such index in the API: the namespace is listed, the index's keys computed on what it holds.
    const { kind, keys } = INDEXES[index];
    const key = `${namespace}/${value}`;
    return this.list(kind, namespace).filter((o) => keys(o).includes(key));
  }

  /** Reads what the last routing run lacked. */
  async fill(client: KubeClient): Promise<void> {
    const keep = (kind: KindName, o: KubeObject) => (kind === 'Secret' ? stripSecret(o) : o);
    const gets = [...this.wantedGets].map(async ([key, { kind, ns, name }]) => {
      const o = await client.get(envelopeOf(K[kind]), ns, name);
      this.objects.set(key, o ? keep(kind, o) : null);
    });
    const lists = [...this.wantedLists].map(async ([key, { kind, ns }]) => {
      const list = await client.list(envelopeOf(K[kind]), ns);
      this.lists.set(
        key,
        list.items.map((o) => keep(kind, o)),
      );
    });
    this.wantedGets.clear();
    this.wantedLists.clear();
    await Promise.all([...gets, ...lists]);
  }

  get settled(): boolean {
    return this.wantedGets.size === 0 && this.wantedLists.size === 0;
  }
}

/** Routes one event, reading from the API only the related objects the routes look at. */
export async function routeWithApi(
  client: KubeClient,
  ev: RoutingEvent,
  routes: readonly Route[] = ROUTES,
): Promise<RoutedMessage[]> {
  const view = new LookupView(routes);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const out = route(ev, view, routes);
    if (view.settled) return out;
    await view.fill(client);
  }
  throw new Error(
    `routing ${ev.object.kind} ${ev.object.metadata.name} did not settle in ${MAX_ROUNDS} rounds`,
  );
}

/**
 * The last state this process routed of each object (by kind and uid), so single events get the
 * `old` the change predicates compare with. Bounded (least recently routed forgotten first); an
 * object it does not hold routes as new (more messages, never fewer). Remember an event only after
 * its messages were handled: a delivery the sender retries must route again, not compare equal.
 */
export class RoutingMemory {
  private readonly last = new Map<string, KubeObject>();
  private readonly max: number;

  constructor(max = 10_000) {
    this.max = max;
  }

  get size(): number {
    return this.last.size;
  }

  private key = (o: KubeObject) => `${o.kind ?? ''}|${uidOf(o)}`;

  /** The event with the previous state this process routed (when it holds one and has none). */
  withPrevious(ev: RoutingEvent): RoutingEvent {
    if (ev.old) return ev;
    const old = this.last.get(this.key(ev.object));
    return old ? { ...ev, old } : ev;
  }

  remember(ev: RoutingEvent): void {
    const key = this.key(ev.object);
    this.last.delete(key);
    if (ev.type === 'DELETED') return;
    this.last.set(key, ev.object.kind === 'Secret' ? stripSecret(ev.object) : ev.object);
    if (this.last.size > this.max) this.last.delete(this.last.keys().next().value!);
  }
}
