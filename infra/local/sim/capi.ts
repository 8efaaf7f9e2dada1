/**
 * Cluster API simulator (test and dev only; never imported by product code): the parts of Cluster
 * API core, the kubeadm control plane and the kubeadm bootstrap provider that our provider works
 * with. Event-driven (KubeClient.watch on Clusters, Metal3Clusters, Machines, Metal3Machines,
 * KubeadmConfigs, KubeadmControlPlanes, MachineDeployments, MachineSets, Metal3MachineTemplates,
 * KubeadmConfigTemplates,
 * and each workload cluster's Nodes), a keyed work queue, writes conditioned on resourceVersion.
 * The passes: ./capi-cluster.ts (Cluster; a workload API server and kubeconfig Secret per Cluster),
 * ./capi-machine.ts (Machine; ./capi-bootstrap.ts for its KubeadmConfig), ./capi-owners.ts
 * (KubeadmControlPlane, MachineDeployment, MachineSet).
 */

import { envelopeOf, R, type ResourceType } from '../../../shared/api/resources.ts';
import { CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL } from '../../../shared/api/wellknown.ts';
import type { KubeClient, WatchEvent } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { createWorkloadClientCache } from '../../../shared/kube/workload.ts';
import type { Logger } from '../../../shared/observability/logger.ts';
import type { ControlPlaneProvider } from '../workload/provider.ts';
import { handleCluster } from './capi-cluster.ts';
import type { CapiContext, SimKind } from './capi-context.ts';
import { handleMachine } from './capi-machine.ts';
import { CONTROL_PLANE_NAME_LABEL, SET_NAME_LABEL } from './capi-objects.ts';
import { handleDeployment, handleMachineOwner } from './capi-owners.ts';

export interface CapiSimulatorOptions {
  client: KubeClient;
  /** Workload cluster clients; default: from the `<cluster>-kubeconfig` Secret (shared/kube/workload.ts). */
  workloadClient?: (namespace: string, clusterName: string) => Promise<KubeClient>;
  /**
   * The control plane's part: a workload API server and `<cluster>-kubeconfig` Secret for each
   * Cluster once its infrastructure is ready (infra/local/workload/). Without it no Secret is written.
   */
  controlPlane?: ControlPlaneProvider;
  namespace?: string;
  /** Create/delete Machines for KubeadmControlPlane / MachineDeployment / MachineSet replicas (default true). */
  scale?: boolean;
  log?: Logger;
}

export interface CapiSimulator {
  stop(): void;
  ready: Promise<void>;
  /** Resolves when the work queue is empty (for tests). */
  idle(): Promise<void>;
}

const CONCURRENCY = 8;

export function startCapiSimulator(opts: CapiSimulatorOptions): CapiSimulator {
  const { client, log } = opts;
  const scale = opts.scale ?? true;
  const cache = opts.workloadClient ? undefined : createWorkloadClientCache(client);
  const workloadClient = opts.workloadClient ?? ((ns: string, c: string) => cache!.get(ns, c));
  const queue = new Set<string>();
  const active = new Set<string>();
  const redo = new Set<string>();
  const watches: AbortController[] = [];
  const nodeWatches = new Map<string, AbortController | 'starting'>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  let running = 0;
  let idleWaiters: (() => void)[] = [];

  const checkIdle = () => {
    if (queue.size === 0 && active.size === 0 && timers.size === 0) {
      const w = idleWaiters;
      idleWaiters = [];
      for (const f of w) f();
    }
  };
  const later = (fn: () => void, ms: number) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
      checkIdle();
    }, ms);
    timers.add(t);
  };

  function enqueue(kind: SimKind, ns: string | undefined, name: string | undefined): void {
    if (stopped || !ns || !name) return;
    const key = `${kind}/${ns}/${name}`;
    if (active.has(key)) redo.add(key);
    else queue.add(key);
    pump();
  }

  /**
   * Indexes from the watches, so a Node, KubeadmConfig or unowned Metal3Machine event finds its
   * Machines and a Machine pass its Node without listing every Machine or Node (each list was
   * O(fleet), per event and per pass). Nodes: per `ns/cluster` while its watch runs, providerID →
   * Node. Machines: `ns|cluster|pid|providerID`, `ns|cluster|node|name`, `ns|KubeadmConfig|name`
   * (bootstrap configRef) and `ns|Metal3Machine|name` (infrastructureRef) → Machine names.
   */
  const nodesByCluster = new Map<string, Map<string, { name: string; uid: string }>>();
  /** Per `ns/cluster`, Node name → the providerID it is under in nodesByCluster (one per name). */
  const pidsByName = new Map<string, Map<string, string>>();
  const machinesByKey = new Map<string, Set<string>>();
  const keysOfMachine = new Map<string, string[]>();
  const nodeKey = (ns: string, cluster: string, what: 'pid' | 'node', v: string) =>
    `${ns}|${cluster}|${what}|${v}`;
  const refKey = (ns: string, kind: string, name: string) => `${ns}|${kind}|${name}`;
  /** The Machines whose configRef or infrastructureRef names this object. */
  const enqueueReferrers = (o: KubeObject) => {
    const ns = o.metadata.namespace ?? '';
    for (const m of [...(machinesByKey.get(refKey(ns, o.kind ?? '', o.metadata.name ?? '')) ?? [])])
      enqueue('Machine', ns, m);
  };
  function indexMachine(o: KubeObject, deleted: boolean): void {
    const ns = o.metadata.namespace ?? '';
    const id = `${ns}/${o.metadata.name}`;
    for (const k of keysOfMachine.get(id) ?? []) {
      const set = machinesByKey.get(k);
      set?.delete(o.metadata.name!);
      if (set?.size === 0) machinesByKey.delete(k);
    }
    keysOfMachine.delete(id);
    if (deleted) return;
    const spec = (o.spec ?? {}) as {
      providerID?: string;
      clusterName?: string;
      bootstrap?: { configRef?: { kind?: string; name?: string } };
      infrastructureRef?: { kind?: string; name?: string };
    };
    const cluster = spec.clusterName ?? o.metadata.labels?.[CLUSTER_NAME_LABEL] ?? '';
    const nodeName = (o.status as { nodeRef?: { name?: string } } | undefined)?.nodeRef?.name;
    const refs = [spec.bootstrap?.configRef, spec.infrastructureRef].filter(
      (r) => (r?.kind === 'KubeadmConfig' || r?.kind === 'Metal3Machine') && r.name,
    );
    const keys = [
      ...(spec.providerID ? [nodeKey(ns, cluster, 'pid', spec.providerID)] : []),
      ...(nodeName ? [nodeKey(ns, cluster, 'node', nodeName)] : []),
      ...refs.map((r) => refKey(ns, r!.kind!, r!.name!)),
    ];
    for (const k of keys) {
      let set = machinesByKey.get(k);
      if (!set) {
        set = new Set();
        machinesByKey.set(k, set);
      }
      set.add(o.metadata.name!);
    }
    if (keys.length) keysOfMachine.set(id, keys);
  }

  const ctx: CapiContext = {
    client,
    workloadClient,
    controlPlane: opts.controlPlane,
    log,
    enqueue,
    nodeByProviderID: (ns, cluster, providerID) => {
      const nodes = nodesByCluster.get(`${ns}/${cluster}`);
      return nodes ? nodes.get(providerID) : 'unknown';
    },
  };

  function pump(): void {
    while (!stopped && running < CONCURRENCY) {
      // Queued keys are never active (an active key is queued again through `redo`): take the first.
      const key: string | undefined = queue.values().next().value;
      if (!key) break;
      queue.delete(key);
      active.add(key);
      running++;
      const [kind, ns, name] = key.split('/') as [SimKind, string, string];
      handle(kind, ns, name)
        .catch((e: unknown) => {
          log?.debug('capi sim: retrying', { key, error: (e as Error).message });
          later(() => enqueue(kind, ns, name), 200);
        })
        .finally(() => {
          active.delete(key);
          running--;
          if (redo.delete(key)) queue.add(key);
          pump();
          checkIdle();
        });
    }
  }

  async function handle(kind: SimKind, ns: string, name: string): Promise<void> {
    if (stopped) return;
    if (kind === 'Cluster') {
      ensureNodeWatch(ns, name);
      return handleCluster(ctx, ns, name);
    }
    if (kind === 'Machine') return handleMachine(ctx, ns, name);
    if (!scale) return;
    if (kind === 'MachineDeployment') return handleDeployment(ctx, ns, name);
    return handleMachineOwner(ctx, kind, ns, name);
  }

  /** Each workload cluster's Nodes: a Node with a Machine's providerID gives it its nodeRef. */
  function ensureNodeWatch(ns: string, cluster: string): void {
    const key = `${ns}/${cluster}`;
    if (stopped || nodeWatches.has(key)) return;
    nodeWatches.set(key, 'starting');
    // Not `later`: a workload cluster that is not up yet must not keep idle() waiting.
    const retry = (ms: number) => setTimeout(() => void start(), ms).unref();
    const start = async (): Promise<void> => {
      if (stopped) return;
      try {
        const wc = await workloadClient(ns, cluster);
        // Filled by the watch's initial events; absent (callers list) while no watch runs.
        nodesByCluster.set(key, new Map());
        pidsByName.set(key, new Map());
        const ctl = await wc.watch(
          R.Node,
          undefined,
          {},
          (ev) => onNode(ns, cluster, ev),
          (err) => {
            if (stopped) return;
            nodesByCluster.delete(key);
            pidsByName.delete(key);
            nodeWatches.set(key, 'starting');
            retry(err ? 500 : 0);
          },
        );
        nodeWatches.set(key, ctl);
      } catch {
        nodesByCluster.delete(key);
        pidsByName.delete(key);
        // The workload cluster is not reachable yet (its kubeconfig Secret): try again shortly.
        retry(500);
      }
    };
    void start();
  }

  function onNode(ns: string, cluster: string, ev: WatchEvent): void {
    const providerID = (ev.object.spec as { providerID?: string } | undefined)?.providerID;
    if (ev.type === 'BOOKMARK') return;
    const nodes = nodesByCluster.get(`${ns}/${cluster}`);
    const pids = pidsByName.get(`${ns}/${cluster}`);
    const name = ev.object.metadata.name!;
    if (nodes && pids) {
      const before = pids.get(name);
      if (before !== undefined && before !== providerID) {
        if (nodes.get(before)?.name === name) nodes.delete(before);
        pids.delete(name);
      }
      if (providerID && ev.type !== 'DELETED') {
        nodes.set(providerID, { name, uid: ev.object.metadata.uid! });
        pids.set(name, providerID);
      } else if (providerID) {
        if (nodes.get(providerID)?.name === name) nodes.delete(providerID);
        pids.delete(name);
      }
    }
    if (!providerID) return;
    const keys = [nodeKey(ns, cluster, 'pid', providerID), nodeKey(ns, cluster, 'node', name)];
    for (const k of keys) for (const m of [...(machinesByKey.get(k) ?? [])]) enqueue('Machine', ns, m);
  }

  // ---- watches -----------------------------------------------------------------------------------

  function watchKind(t: ResourceType, on: (ev: WatchEvent) => void): Promise<void> {
    const start = async (): Promise<void> => {
      if (stopped) return;
      const ctl = await client.watch(t, opts.namespace, {}, on, (err) => {
        if (stopped) return;
        setTimeout(() => void start().catch(() => {}), err ? 200 : 0);
      });
      watches.push(ctl);
    };
    return start();
  }

  /** Enqueue every object of a kind in a namespace that `matches`. */
  const enqueueMatching = (
    kind: SimKind,
    t: ResourceType,
    ns: string | undefined,
    matches: (o: KubeObject) => boolean,
  ) =>
    void client
      .list(envelopeOf(t), ns)
      .then(({ items }) => {
        for (const o of items) if (matches(o)) enqueue(kind, o.metadata.namespace, o.metadata.name);
      })
      .catch(() => {});
  const specOf = (o: KubeObject): Record<string, any> => (o.spec ?? {}) as Record<string, any>;

  const ready = Promise.all([
    watchKind(R.Cluster, (ev) => {
      const o = ev.object;
      enqueue('Cluster', o.metadata.namespace, o.metadata.name);
      // A KubeadmControlPlane applied before its Cluster learns its cluster name from it.
      const cp = specOf(o).controlPlaneRef;
      if (cp?.kind === 'KubeadmControlPlane') enqueue('KubeadmControlPlane', o.metadata.namespace, cp.name);
    }),
    watchKind(R.Metal3Cluster, (ev) => {
      const o = ev.object;
      const owner =
        o.metadata.ownerReferences?.find((x) => x.kind === 'Cluster')?.name ??
        o.metadata.labels?.[CLUSTER_NAME_LABEL];
      if (owner) enqueue('Cluster', o.metadata.namespace, owner);
      else
        enqueueMatching(
          'Cluster',
          R.Cluster,
          o.metadata.namespace,
          (c) => specOf(c).infrastructureRef?.name === o.metadata.name,
        );
    }),
    watchKind(R.Machine, (ev) => {
      const o = ev.object;
      if (ev.type !== 'BOOKMARK') indexMachine(o, ev.type === 'DELETED');
      enqueue('Machine', o.metadata.namespace, o.metadata.name);
      const cp = o.metadata.labels?.[CONTROL_PLANE_NAME_LABEL];
      const ms = o.metadata.labels?.[SET_NAME_LABEL];
      if (ev.type === 'DELETED' && cp) enqueue('KubeadmControlPlane', o.metadata.namespace, cp);
      if (ev.type === 'DELETED' && ms) enqueue('MachineSet', o.metadata.namespace, ms);
    }),
    watchKind(R.Metal3Machine, (ev) => {
      const o = ev.object;
      const owner = o.metadata.ownerReferences?.find((x) => x.kind === 'Machine')?.name;
      if (owner) enqueue('Machine', o.metadata.namespace, owner);
      // Not owned yet (applied before or after its Machine): the Machines that name it.
      else enqueueReferrers({ ...o, kind: 'Metal3Machine' });
    }),
    watchKind(R.KubeadmConfig, (ev) => {
      const o = ev.object;
      const owner = o.metadata.ownerReferences?.find((x) => x.kind === 'Machine')?.name;
      if (owner) enqueue('Machine', o.metadata.namespace, owner);
      // Owned by its KubeadmControlPlane or MachineSet until its Machine adopts it.
      else enqueueReferrers({ ...o, kind: 'KubeadmConfig' });
    }),
    watchKind(R.KubeadmControlPlane, (ev) => {
      const o = ev.object;
      enqueue('KubeadmControlPlane', o.metadata.namespace, o.metadata.name);
      // Its Cluster's kubeconfig Secret is owned by it (capi-cluster.ts).
      enqueueMatching(
        'Cluster',
        R.Cluster,
        o.metadata.namespace,
        (c) => specOf(c).controlPlaneRef?.name === o.metadata.name,
      );
    }),
    watchKind(R.MachineDeployment, (ev) =>
      enqueue('MachineDeployment', ev.object.metadata.namespace, ev.object.metadata.name),
    ),
    watchKind(R.MachineSet, (ev) => {
      const o = ev.object;
      enqueue('MachineSet', o.metadata.namespace, o.metadata.name);
      const md = o.metadata.labels?.[DEPLOYMENT_NAME_LABEL];
      if (ev.type === 'DELETED' && md) enqueue('MachineDeployment', o.metadata.namespace, md);
    }),
    watchKind(R.KubeadmConfigTemplate, (ev) => {
      if (ev.type !== 'ADDED') return;
      const name = ev.object.metadata.name;
      enqueueMatching('MachineSet', R.MachineSet, ev.object.metadata.namespace, (m) => {
        const ref = specOf(m).template?.spec?.bootstrap?.configRef;
        return ref?.kind === 'KubeadmConfigTemplate' && ref.name === name;
      });
    }),
    watchKind(R.Metal3MachineTemplate, (ev) => {
      if (ev.type !== 'ADDED') return;
      const ns = ev.object.metadata.namespace;
      const name = ev.object.metadata.name;
      enqueueMatching(
        'KubeadmControlPlane',
        R.KubeadmControlPlane,
        ns,
        (k) => specOf(k).machineTemplate?.infrastructureRef?.name === name,
      );
      enqueueMatching(
        'MachineSet',
        R.MachineSet,
        ns,
        (m) => specOf(m).template?.spec?.infrastructureRef?.name === name,
      );
    }),
  ]).then(() => undefined);

  return {
    ready,
    stop() {
      stopped = true;
      for (const w of watches) w.abort();
      for (const w of nodeWatches.values()) if (w !== 'starting') w.abort();
      for (const t of timers) clearTimeout(t);
      timers.clear();
      queue.clear();
      checkIdle();
    },
    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        checkIdle();
      }),
  };
}
