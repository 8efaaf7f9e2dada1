/**
 * The relay (`metal3fn relay`): list + watch every kind the routing table needs in the management
 * cluster, and Nodes in each workload cluster (started and stopped as Clusters and their
 * `<cluster>-kubeconfig` Secrets come and go; a vMetal tenant cluster counts while a NodeClaim of
 * its namespace names it in `vClusterRef`, ADR 018), route each event through the table against the
 * cache, and send key-only messages in batches.
 *
 * Initial lists are routed only after every kind has been listed, so related lookups (a host's
 * consumer machine, a Node's host) see a complete cache instead of whatever was listed first.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { FunctionName } from '../../events/envelope.ts';
import { messageOf, recordOf, stringOf } from '../../shared/api/json.ts';
import type { KindName } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { withoutManagedFields } from '../../shared/kube/managed-fields.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import {
  clusterNameOfSecret,
  createWorkloadClientCache,
  kubeconfigSecretName,
  type WorkloadClientCache,
} from '../../shared/kube/workload.ts';
import { type Logger, silentLogger } from '../../shared/observability/logger.ts';
import type { RoutedMessage } from '../../shared/queue/message.ts';
import { type MessageSink, QueueSender, type SenderOptions } from '../../shared/queue/sender.ts';
import { ObjectStore, RelayCache, stripSecret } from '../../shared/routing/cache.ts';
import {
  isDeleting,
  ROUTES,
  type Route,
  type RoutingEvent,
  route,
  watchedKinds,
} from '../../shared/routing/index.ts';
import type { PipelineMetrics } from '../../shared/runtimes/metrics.ts';
import {
  noRelists,
  RELIST_CAUSES,
  type RelistCounts,
  ResourceWatcher,
  type WatcherOptions,
} from './watcher.ts';

/** Kinds whose events start or stop a workload cluster's Node watch. */
const WORKLOAD_KINDS = new Set(['Cluster', 'Secret', 'NodeClaim']);

export type WatchTuning = Partial<
  Pick<
    WatcherOptions,
    'resyncMs' | 'silenceMs' | 'jitter' | 'watchTimeoutSeconds' | 'pageSize' | 'listTimeoutMs'
  >
>;

export interface RelayOptions {
  /** The management cluster. */
  client: KubeClient;
  /** SQS and the function queues; or `sink` instead (e.g. an HTTP CloudEvents sink for Knative). */
  sqs?: SQSClient | undefined;
  queues?: { main: Partial<Record<FunctionName, string>> } | undefined;
  sink?: MessageSink | undefined;
  log?: Logger | undefined;
  metrics?: PipelineMetrics | undefined;
  /** Watch one namespace only (default: all namespaces). */
  namespace?: string | undefined;
  routes?: readonly Route[] | undefined;
  /** Workload clients for Node watches; false: do not watch workload clusters. */
  workloads?: WorkloadClientCache | false | undefined;
  watch?: WatchTuning | undefined;
  /** Tuning of the workload Node watches (default: `watch`). */
  workloadWatch?: WatchTuning | undefined;
  sender?: SenderOptions | undefined;
  /** Sees every event's messages before they are sent (tests, bench, the dev view). */
  onMessages?: ((msgs: RoutedMessage[], ev: RoutingEvent) => void) | undefined;
}

export interface Relay {
  readonly cache: RelayCache;
  readonly sender: MessageSink;
  readonly watchers: ReadonlyMap<string, ResourceWatcher>;
  /** `<ns>/<cluster>` of the workload clusters whose Nodes are watched. */
  workloadClusters(): string[];
  /** LISTs by cause over every watch so far (workload Node watches stopped since included). */
  relists(): RelistCounts;
  /** Resyncs (re-emits of a store, no LIST) over the current watches. */
  resyncs(): number;
  /** WATCH requests over the current watches (the first of each, and every resume after an end). */
  watches(): number;
  /** Sends everything buffered; resolves when SQS has accepted it. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRelay(opts: RelayOptions): Promise<Relay> {
  const log = (opts.log ?? silentLogger).child({ component: 'relay' });
  const routes = opts.routes ?? ROUTES;
  const cache = new RelayCache();
  let sender: MessageSink;
  if (opts.sink) sender = opts.sink;
  else if (opts.sqs && opts.queues)
    sender = new QueueSender(opts.sqs, opts.queues.main, { log, metrics: opts.metrics, ...opts.sender });
  else throw new Error('startRelay needs either sqs and queues, or a sink');
  const workloads =
    opts.workloads === false ? undefined : (opts.workloads ?? createWorkloadClientCache(opts.client));
  const watchers = new Map<string, ResourceWatcher>();
  // `watcher` is undefined while the workload client is being built (a placeholder that marks the
  // cluster as being watched).
  const nodeWatchers = new Map<string, { watcher: ResourceWatcher | undefined; secretRv: string }>();
  let ready = false;
  let stopping = false;
  // Re-lists of workload Node watches that were stopped: the totals outlive them.
  const stoppedRelists = noRelists();
  const addRelists = (into: RelistCounts, w: ResourceWatcher | undefined) => {
    if (!w) return into;
    for (const k of RELIST_CAUSES) into[k] += w.relistsByCause[k];
    return into;
  };
  const pending: RoutingEvent[] = [];

  const dispatch = (ev: RoutingEvent) => {
    // Stamped when routed (at or after it arrived): its messages' shared reads start from here.
    const msgs = route({ ...ev, observedAt: ev.observedAt ?? Date.now() }, cache, routes);
    opts.onMessages?.(msgs, ev);
    if (msgs.length > 0) sender.enqueue(msgs);
  };

  const onEvent = (ev: RoutingEvent) => {
    if (!ready) {
      pending.push(ev);
      return;
    }
    dispatch(ev);
    if (workloads && WORKLOAD_KINDS.has(ev.object.kind ?? '')) syncWorkload(ev.object);
  };

  // ---- workload clusters: one Node watch per Cluster that has a kubeconfig Secret

  const clusterKeyOf = (o: KubeObject): { ns: string; name: string } | undefined => {
    const ns = o.metadata.namespace ?? '';
    if (o.kind === 'Cluster') return { ns, name: o.metadata.name ?? '' };
    if (o.kind === 'NodeClaim') {
      const tenant = stringOf(recordOf(o.spec).vClusterRef);
      return tenant ? { ns, name: tenant } : undefined;
    }
    const name = clusterNameOfSecret(o.metadata.name ?? '');
    return name ? { ns, name } : undefined;
  };

  const syncWorkload = (o: KubeObject) => {
    const key = clusterKeyOf(o);
    if (!key || !workloads || stopping) return;
    const id = `${key.ns}/${key.name}`;
    const cluster = cache.get('Cluster', key.ns, key.name);
    const secret = cache.get('Secret', key.ns, kubeconfigSecretName(key.name));
    // A vMetal tenant cluster (no Cluster object) is watched while a live claim of its namespace names it.
    const tenant = cache
      .list('NodeClaim', key.ns)
      .some((c) => !isDeleting(c) && stringOf(recordOf(c.spec).vClusterRef) === key.name);
    const want = ((cluster !== undefined && !isDeleting(cluster)) || tenant) && secret !== undefined;
    const current = nodeWatchers.get(id);
    const secretRv = secret?.metadata.resourceVersion ?? '';
    if (current && (!want || current.secretRv !== secretRv)) {
      nodeWatchers.delete(id);
      addRelists(stoppedRelists, current.watcher);
      void current.watcher?.stop();
      workloads.invalidate(key.ns, key.name);
      log.info('workload Node watch stopped', {
        cluster: id,
        reason: want ? 'kubeconfig changed' : 'cluster gone',
      });
    }
    if (want && !nodeWatchers.has(id)) void startNodeWatch(key.ns, key.name, secretRv);
  };

  const startNodeWatch = async (ns: string, name: string, secretRv: string) => {
    const id = `${ns}/${name}`;
    const placeholder: { watcher: ResourceWatcher | undefined; secretRv: string } = {
      watcher: undefined,
      secretRv,
    };
    nodeWatchers.set(id, placeholder);
    try {
      const client = await workloads!.get(ns, name);
      if (nodeWatchers.get(id) !== placeholder || stopping) return; // superseded meanwhile
      const watcher = new ResourceWatcher({
        client,
        kind: 'Node',
        store: new ObjectStore(),
        transform: withoutManagedFields,
        onEvent: dispatch,
        cluster: id,
        log,
        metrics: opts.metrics,
        ...opts.watch,
        ...opts.workloadWatch,
      });
      placeholder.watcher = watcher;
      log.info('workload Node watch started', { cluster: id });
      await watcher
        .start()
        .catch((e: Error) => log.warn('workload list failed; retrying', { cluster: id, error: e.message }));
    } catch (e) {
      // Secret unusable right now: forget the attempt; the Secret's next event tries again.
      if (nodeWatchers.get(id) === placeholder) nodeWatchers.delete(id);
      log.warn('workload cluster unavailable', { cluster: id, error: messageOf(e) });
    }
  };

  // ---- management watches

  const kinds: KindName[] = watchedKinds(routes).management;
  for (const k of ['Cluster', 'Secret'] as KindName[]) if (workloads && !kinds.includes(k)) kinds.push(k);
  for (const kind of kinds) {
    watchers.set(
      kind,
      new ResourceWatcher({
        client: opts.client,
        kind,
        namespace: opts.namespace,
        store: cache.store(kind),
        onEvent,
        transform: kind === 'Secret' ? stripSecret : withoutManagedFields,
        cluster: 'management',
        log,
        metrics: opts.metrics,
        ...opts.watch,
      }),
    );
  }
  const results = await Promise.allSettled([...watchers.values()].map((w) => w.start()));
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed.length > 0) {
    // Fail fast on a broken start (wrong kubeconfig, missing CRDs, no RBAC): better than a relay
    // that silently never syncs.
    await Promise.all([...watchers.values()].map((w) => w.stop()));
    throw new Error(`relay could not list: ${failed.map((f) => messageOf(f.reason)).join('; ')}`);
  }
  ready = true;
  for (const ev of pending.splice(0)) dispatch(ev);
  if (workloads)
    for (const c of [...cache.list('Cluster', opts.namespace), ...cache.list('NodeClaim', opts.namespace)])
      syncWorkload(c);
  log.info('relay synced', { objects: cache.sizes() });
  const allWatchers = () => [...watchers.values(), ...[...nodeWatchers.values()].map((n) => n.watcher)];

  return {
    cache,
    sender,
    watchers,
    workloadClusters: () => [...nodeWatchers.keys()],
    relists: () => allWatchers().reduce(addRelists, { ...stoppedRelists }),
    resyncs: () => allWatchers().reduce((n, w) => n + (w?.counts.resyncs ?? 0), 0),
    watches: () => allWatchers().reduce((n, w) => n + (w?.counts.watches ?? 0), 0),
    flush: () => sender.flush(),
    async stop() {
      stopping = true;
      await Promise.all([
        ...[...watchers.values()].map((w) => w.stop()),
        ...[...nodeWatchers.values()].map((n) => n.watcher?.stop()),
      ]);
      await sender.close();
      log.info('relay stopped');
    },
  };
}
