/**
 * Cluster API core glue simulator (test and dev only; never imported by product code). Event-driven
 * (KubeClient.watch on Clusters, Metal3Clusters, Machines, Metal3Machines, KubeadmControlPlanes,
 * MachineDeployments, and each workload cluster's Nodes), a keyed work queue, writes conditioned on
 * resourceVersion:
 *
 * - Cluster: ownerRef on its Metal3Cluster; `status.infrastructureReady` from Metal3Cluster
 *   `status.ready`; `spec.controlPlaneEndpoint` from the Metal3Cluster's.
 * - Machine: finalizer; bootstrap Secret `<machine>-bootstrap` (key `value`, `format: cloud-config`)
 *   and `spec.bootstrap.dataSecretName`; ownerRef + labels on its Metal3Machine; providerID,
 *   addresses and infrastructureReady copied from the Metal3Machine once it is ready;
 *   `status.nodeRef` and `phase: Running` once a workload Node carries the same providerID;
 *   deletion deletes the Metal3Machine and waits for it to be gone.
 * - KubeadmControlPlane / MachineDeployment: Machines + Metal3Machines cloned from the
 *   Metal3MachineTemplate up to `spec.replicas` (a MachineSet `<md>` for deployments), newest
 *   deleted first on scale-down.
 */

import { envelopeOf, K, R, type ResourceType } from '../../../shared/api/resources.ts';
import { CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL } from '../../../shared/api/wellknown.ts';
import type { KubeClient, WatchEvent } from '../../../shared/kube/client.ts';
import { isAlreadyExists } from '../../../shared/kube/errors.ts';
import { optimisticUpdate, SKIP } from '../../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { createWorkloadClientCache } from '../../../shared/kube/workload.ts';
import type { Logger } from '../../../shared/observability/logger.ts';
import {
  bootstrapSecret,
  CONTROL_PLANE_NAME_LABEL,
  cloneMetal3Machine,
  MACHINE_FINALIZER,
  type MachineOwner,
  newMachine,
  ownerLabels,
  ownerRefTo,
  randomSuffix,
  scalePlan,
} from './capi-objects.ts';

export interface CapiSimulatorOptions {
  client: KubeClient;
  /** Workload cluster clients; default: from the `<cluster>-kubeconfig` Secret (shared/kube/workload.ts). */
  workloadClient?: (namespace: string, clusterName: string) => Promise<KubeClient>;
  namespace?: string;
  /** Create/delete Machines for KubeadmControlPlane / MachineDeployment replicas (default true). */
  scale?: boolean;
  log?: Logger;
}

export interface CapiSimulator {
  stop(): void;
  ready: Promise<void>;
  /** Resolves when the work queue is empty (for tests). */
  idle(): Promise<void>;
}

type Kind = 'Cluster' | 'Machine' | 'KubeadmControlPlane' | 'MachineDeployment';

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
  const CONCURRENCY = 8;

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

  function enqueue(kind: Kind, ns: string | undefined, name: string | undefined): void {
    if (stopped || !ns || !name) return;
    const key = `${kind}/${ns}/${name}`;
    if (active.has(key)) redo.add(key);
    else queue.add(key);
    pump();
  }

  function pump(): void {
    while (!stopped && running < CONCURRENCY) {
      const key = [...queue].find((k) => !active.has(k));
      if (!key) break;
      queue.delete(key);
      active.add(key);
      running++;
      const [kind, ns, name] = key.split('/') as [Kind, string, string];
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

  async function handle(kind: Kind, ns: string, name: string): Promise<void> {
    if (stopped) return;
    if (kind === 'Cluster') return handleCluster(ns, name);
    if (kind === 'Machine') return handleMachine(ns, name);
    if (scale) return handleOwner(kind, ns, name);
  }

  // ---- Cluster ---------------------------------------------------------------------------------

  async function handleCluster(ns: string, name: string): Promise<void> {
    const cluster = await client.get(R.Cluster, ns, name);
    if (!cluster || cluster.metadata.deletionTimestamp) return;
    ensureNodeWatch(ns, name);
    const ref = (cluster.spec as { infrastructureRef?: { kind?: string; name?: string } } | undefined)
      ?.infrastructureRef;
    if (ref?.kind !== 'Metal3Cluster' || !ref.name) return;
    let m3c = await client.get(R.Metal3Cluster, ns, ref.name);
    if (!m3c) return;
    const res = await optimisticUpdate(
      client,
      R.Metal3Cluster,
      ns,
      ref.name,
      (o) => {
        const owners = o.metadata.ownerReferences ?? [];
        const labels = o.metadata.labels ?? {};
        if (
          owners.some((x) => x.kind === 'Cluster' && x.uid === cluster.metadata.uid) &&
          labels[CLUSTER_NAME_LABEL] === name
        )
          return SKIP;
        o.metadata.ownerReferences = [
          ...owners.filter((x) => x.kind !== 'Cluster'),
          ownerRefTo(cluster, false),
        ];
        o.metadata.labels = { ...labels, [CLUSTER_NAME_LABEL]: name };
      },
      { current: m3c },
    );
    if (res.outcome !== 'gone') m3c = res.object;
    const endpoint = (m3c.spec as { controlPlaneEndpoint?: { host?: string; port?: number } } | undefined)
      ?.controlPlaneEndpoint;
    const ready = (m3c.status as { ready?: boolean } | undefined)?.ready === true;
    const spec = await optimisticUpdate(
      client,
      R.Cluster,
      ns,
      name,
      (o) => {
        const s = (o.spec ?? {}) as { controlPlaneEndpoint?: { host?: string; port?: number } };
        if (!endpoint?.host || s.controlPlaneEndpoint?.host) return SKIP;
        s.controlPlaneEndpoint = { host: endpoint.host, port: endpoint.port ?? 6443 };
        o.spec = s;
      },
      { current: cluster },
    );
    await optimisticUpdate(
      client,
      R.Cluster,
      ns,
      name,
      (o) => {
        o.status ??= {};
        const st = o.status as Record<string, unknown>;
        st.infrastructureReady = ready;
        st.phase = ready ? 'Provisioned' : 'Provisioning';
      },
      { status: true, current: spec.outcome === 'gone' ? undefined : spec.object },
    );
  }

  function ensureNodeWatch(ns: string, cluster: string): void {
    const key = `${ns}/${cluster}`;
    if (stopped || nodeWatches.has(key)) return;
    nodeWatches.set(key, 'starting');
    const start = async (): Promise<void> => {
      if (stopped) return;
      try {
        const wc = await workloadClient(ns, cluster);
        const ctl = await wc.watch(
          R.Node,
          undefined,
          {},
          (ev) => onNode(ns, cluster, ev),
          (err) => {
            if (stopped) return;
            nodeWatches.set(key, 'starting');
            setTimeout(() => void start(), err ? 500 : 0);
          },
        );
        nodeWatches.set(key, ctl);
      } catch {
        // The workload cluster is not reachable yet (kubeconfig Secret): try again shortly.
        setTimeout(() => void start(), 500);
      }
    };
    void start();
  }

  function onNode(ns: string, cluster: string, ev: WatchEvent): void {
    const providerID = (ev.object.spec as { providerID?: string } | undefined)?.providerID;
    if (!providerID || ev.type === 'BOOKMARK') return;
    void client
      .list(R.Machine, ns, { labelSelector: `${CLUSTER_NAME_LABEL}=${cluster}` })
      .then(({ items }) => {
        for (const m of items) {
          const st = (m.status ?? {}) as { nodeRef?: { name?: string } };
          if (
            (m.spec as { providerID?: string } | undefined)?.providerID === providerID ||
            st.nodeRef?.name === ev.object.metadata.name
          ) {
            enqueue('Machine', ns, m.metadata.name);
          }
        }
      })
      .catch(() => {});
  }

  // ---- Machine ---------------------------------------------------------------------------------

  async function handleMachine(ns: string, name: string): Promise<void> {
    let machine = await client.get(R.Machine, ns, name);
    if (!machine) return;
    const spec = (machine.spec ?? {}) as {
      clusterName?: string;
      bootstrap?: { dataSecretName?: string };
      infrastructureRef?: { kind?: string; name?: string };
      providerID?: string;
    };
    const infraName =
      spec.infrastructureRef?.kind === 'Metal3Machine' ? spec.infrastructureRef.name : undefined;
    const clusterName = spec.clusterName ?? machine.metadata.labels?.[CLUSTER_NAME_LABEL] ?? '';

    if (machine.metadata.deletionTimestamp) {
      const m3m = infraName ? await client.get(R.Metal3Machine, ns, infraName) : undefined;
      if (m3m) {
        if (!m3m.metadata.deletionTimestamp) await client.delete(R.Metal3Machine, ns, infraName!);
        return; // the Metal3Machine's deletion event brings us back
      }
      await optimisticUpdate(client, R.Machine, ns, name, (o) => {
        if (!o.metadata.finalizers?.includes(MACHINE_FINALIZER)) return SKIP;
        o.metadata.finalizers = o.metadata.finalizers.filter((f) => f !== MACHINE_FINALIZER);
      });
      return;
    }

    // Bootstrap data (CABPK's part): the Secret, then dataSecretName and the finalizer.
    if (!spec.bootstrap?.dataSecretName) {
      try {
        await client.create(R.Secret, bootstrapSecret(machine, clusterName));
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
    }
    const upd = await optimisticUpdate(
      client,
      R.Machine,
      ns,
      name,
      (o) => {
        const s = (o.spec ?? {}) as typeof spec;
        const f = o.metadata.finalizers ?? [];
        if (s.bootstrap?.dataSecretName && f.includes(MACHINE_FINALIZER)) return SKIP;
        s.bootstrap = {
          ...(s.bootstrap ?? {}),
          dataSecretName: s.bootstrap?.dataSecretName ?? `${name}-bootstrap`,
        };
        o.spec = s;
        if (!f.includes(MACHINE_FINALIZER)) o.metadata.finalizers = [...f, MACHINE_FINALIZER];
      },
      { current: machine },
    );
    if (upd.outcome === 'gone') return;
    machine = upd.object;

    // The infrastructure machine: ownerRef to the Machine, the Machine's labels.
    if (!infraName) return;
    let m3m = await client.get(R.Metal3Machine, ns, infraName);
    if (m3m && !m3m.metadata.deletionTimestamp) {
      const res = await optimisticUpdate(
        client,
        R.Metal3Machine,
        ns,
        infraName,
        (o) => {
          const owners = o.metadata.ownerReferences ?? [];
          const labels = o.metadata.labels ?? {};
          const want = machine!.metadata.labels ?? {};
          const hasOwner = owners.some((x) => x.kind === 'Machine' && x.uid === machine!.metadata.uid);
          const hasLabels = Object.entries(want).every(([k, v]) => labels[k] === v);
          if (hasOwner && hasLabels) return SKIP;
          if (!hasOwner)
            o.metadata.ownerReferences = [
              ...owners.filter((x) => x.kind !== 'Machine'),
              ownerRefTo(machine!),
            ];
          o.metadata.labels = { ...labels, ...want };
        },
        { current: m3m },
      );
      if (res.outcome !== 'gone') m3m = res.object;
    }

    // Infrastructure ready => providerID, addresses; a Node with that providerID => nodeRef, Running.
    const m3mSpec = (m3m?.spec ?? {}) as { providerID?: string };
    const m3mStatus = (m3m?.status ?? {}) as { ready?: boolean; addresses?: unknown[] };
    const infraReady = Boolean(m3mSpec.providerID && m3mStatus.ready);
    if (infraReady) {
      const r = await optimisticUpdate(
        client,
        R.Machine,
        ns,
        name,
        (o) => {
          const s = (o.spec ?? {}) as typeof spec;
          if (s.providerID) return SKIP;
          s.providerID = m3mSpec.providerID;
          o.spec = s;
        },
        { current: machine },
      );
      if (r.outcome !== 'gone') machine = r.object;
    }
    const providerID = (machine.spec as typeof spec).providerID;
    let nodeRef: { apiVersion: string; kind: string; name: string; uid: string } | undefined;
    if (providerID && clusterName) {
      try {
        const wc = await workloadClient(ns, clusterName);
        const node = (await wc.list(R.Node)).items.find(
          (n) => (n.spec as { providerID?: string } | undefined)?.providerID === providerID,
        );
        if (node)
          nodeRef = { apiVersion: 'v1', kind: 'Node', name: node.metadata.name!, uid: node.metadata.uid! };
      } catch {
        // No workload cluster yet: the Node watch (or a later event) brings us back.
      }
    }
    await optimisticUpdate(
      client,
      R.Machine,
      ns,
      name,
      (o) => {
        o.status ??= {};
        const st = o.status as Record<string, unknown>;
        st.bootstrapReady = true;
        st.infrastructureReady = infraReady;
        if (infraReady && m3mStatus.addresses) st.addresses = m3mStatus.addresses;
        if (nodeRef) st.nodeRef = nodeRef;
        st.phase = st.nodeRef ? 'Running' : infraReady ? 'Provisioned' : 'Provisioning';
      },
      { status: true, current: machine },
    );
  }

  // ---- KubeadmControlPlane / MachineDeployment -------------------------------------------------------

  async function handleOwner(
    kind: 'KubeadmControlPlane' | 'MachineDeployment',
    ns: string,
    name: string,
  ): Promise<void> {
    const t = envelopeOf(kind === 'KubeadmControlPlane' ? K.KubeadmControlPlane : K.MachineDeployment);
    const obj = await client.get(t, ns, name);
    if (!obj || obj.metadata.deletionTimestamp) return;
    obj.apiVersion ??= `${t.group}/${t.version}`;
    obj.kind ??= kind;
    const owner = await ownerOf(kind, obj);
    if (!owner) return;
    const selector = Object.entries(ownerLabels(kind, name, owner.clusterName))
      .filter(([k]) => k === CONTROL_PLANE_NAME_LABEL || k === DEPLOYMENT_NAME_LABEL)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const { items } = await client.list(R.Machine, ns, { labelSelector: selector });
    const replicas = (obj.spec as { replicas?: number } | undefined)?.replicas ?? 1;
    const plan = scalePlan(items, replicas);
    for (const m of plan.remove) await client.delete(R.Machine, ns, m.metadata.name!);
    if (plan.create === 0) return;
    const template = await client.get(R.Metal3MachineTemplate, ns, owner.templateName);
    if (!template) {
      log?.warn('capi sim: Metal3MachineTemplate not found', {
        owner: `${ns}/${name}`,
        template: owner.templateName,
      });
      return;
    }
    template.apiVersion ??= `${R.Metal3MachineTemplate.group}/${R.Metal3MachineTemplate.version}`;
    template.kind ??= 'Metal3MachineTemplate';
    for (let i = 0; i < plan.create; i++) {
      const machine = await client.create<KubeObject>(
        R.Machine,
        newMachine(owner, `${name}-${randomSuffix()}`),
      );
      machine.apiVersion ??= `${R.Machine.group}/${R.Machine.version}`;
      machine.kind ??= 'Machine';
      await client.create(R.Metal3Machine, cloneMetal3Machine(template, machine));
    }
  }

  async function ownerOf(
    kind: 'KubeadmControlPlane' | 'MachineDeployment',
    obj: KubeObject,
  ): Promise<MachineOwner | undefined> {
    const ns = obj.metadata.namespace!;
    const name = obj.metadata.name!;
    const spec = (obj.spec ?? {}) as any;
    if (kind === 'KubeadmControlPlane') {
      const clusterName =
        obj.metadata.labels?.[CLUSTER_NAME_LABEL] ?? (await clusterOfControlPlane(ns, name));
      const templateName = spec.machineTemplate?.infrastructureRef?.name;
      if (!clusterName || !templateName) return undefined;
      return {
        owner: obj,
        kind,
        name,
        clusterName,
        version: spec.version,
        labels: ownerLabels(kind, name, clusterName),
        templateName,
        templateLabels: spec.machineTemplate?.metadata?.labels,
      };
    }
    const clusterName = spec.clusterName ?? obj.metadata.labels?.[CLUSTER_NAME_LABEL];
    const templateName = spec.template?.spec?.infrastructureRef?.name;
    if (!clusterName || !templateName) return undefined;
    // One MachineSet per deployment (named after it), the Machines' owner, as CAPI's would be.
    const msName = name;
    let ms = await client.get(R.MachineSet, ns, msName);
    if (!ms) {
      try {
        ms = await client.create(R.MachineSet, {
          metadata: {
            name: msName,
            namespace: ns,
            labels: {
              ...(spec.template?.metadata?.labels ?? {}),
              [CLUSTER_NAME_LABEL]: clusterName,
              [DEPLOYMENT_NAME_LABEL]: name,
            },
            ownerReferences: [ownerRefTo(obj)],
          },
          spec: {
            clusterName,
            replicas: spec.replicas ?? 1,
            selector: spec.selector ?? { matchLabels: { [DEPLOYMENT_NAME_LABEL]: name } },
            template: spec.template,
          },
        });
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
        ms = await client.get(R.MachineSet, ns, msName);
      }
    }
    if (!ms) return undefined;
    ms.apiVersion ??= `${R.MachineSet.group}/${R.MachineSet.version}`;
    ms.kind ??= 'MachineSet';
    return {
      owner: ms,
      kind,
      name,
      clusterName,
      version: spec.template?.spec?.version,
      labels: ownerLabels(kind, name, clusterName, msName),
      templateName,
      templateLabels: spec.template?.metadata?.labels,
    };
  }

  async function clusterOfControlPlane(ns: string, kcp: string): Promise<string | undefined> {
    const { items } = await client.list(R.Cluster, ns);
    return items.find(
      (c) => (c.spec as { controlPlaneRef?: { name?: string } } | undefined)?.controlPlaneRef?.name === kcp,
    )?.metadata.name;
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

  const machineOf = (o: KubeObject): string | undefined =>
    o.metadata.ownerReferences?.find((x) => x.kind === 'Machine')?.name ?? o.metadata.name;

  const ready = Promise.all([
    watchKind(R.Cluster, (ev) => enqueue('Cluster', ev.object.metadata.namespace, ev.object.metadata.name)),
    watchKind(R.Metal3Cluster, (ev) => {
      const o = ev.object;
      const owner =
        o.metadata.ownerReferences?.find((x) => x.kind === 'Cluster')?.name ??
        o.metadata.labels?.[CLUSTER_NAME_LABEL];
      if (owner) enqueue('Cluster', o.metadata.namespace, owner);
      else
        void client
          .list(R.Cluster, o.metadata.namespace)
          .then(({ items }) => {
            for (const c of items)
              if ((c.spec as any)?.infrastructureRef?.name === o.metadata.name)
                enqueue('Cluster', c.metadata.namespace, c.metadata.name);
          })
          .catch(() => {});
    }),
    watchKind(R.Machine, (ev) => {
      const o = ev.object;
      enqueue('Machine', o.metadata.namespace, o.metadata.name);
      const cp = o.metadata.labels?.[CONTROL_PLANE_NAME_LABEL];
      const md = o.metadata.labels?.[DEPLOYMENT_NAME_LABEL];
      if (ev.type === 'DELETED' && cp) enqueue('KubeadmControlPlane', o.metadata.namespace, cp);
      if (ev.type === 'DELETED' && md) enqueue('MachineDeployment', o.metadata.namespace, md);
    }),
    watchKind(R.Metal3Machine, (ev) =>
      enqueue('Machine', ev.object.metadata.namespace, machineOf(ev.object)),
    ),
    watchKind(R.KubeadmControlPlane, (ev) =>
      enqueue('KubeadmControlPlane', ev.object.metadata.namespace, ev.object.metadata.name),
    ),
    watchKind(R.MachineDeployment, (ev) =>
      enqueue('MachineDeployment', ev.object.metadata.namespace, ev.object.metadata.name),
    ),
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
