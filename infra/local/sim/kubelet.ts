/**
 * kubelet simulator (test and dev only; never imported by product code). Watches BareMetalHosts
 * on the management cluster; when a host becomes `provisioned` it registers a Node in the
 * workload cluster of the machine that holds it (its Metal3Machine's namespace and cluster label,
 * so two clusters of one name in two namespaces each get their own Nodes) as kubeadm + kubelet
 * would with seed 000's configuration:
 *
 *   name:   rendered meta_data `name` ({{ ds.meta_data.name }}), else the host name
 *   labels: metal3.io/uuid={{ ds.meta_data.uuid }} (the host uid), kubernetes.io/hostname=<name>
 *   status: Ready condition, InternalIP/Hostname addresses
 *
 * Modes per host: `label` (the above), `no-label` (no uuid label: Step 4 path), `cloud-provider`
 * (a cloud provider pre-sets the new-format ID), `legacy` (kubelet started with
 * --provider-id=metal3://<uid>, as older clusters were). A host held by a vMetal NodeClaim joins
 * its tenant cluster with the user data's `kubeadm join` instead (./kubelet-vmetal.ts); a refused
 * join leaves no Node and is tried again on the host's next event. When the host leaves
 * `provisioned` (deprovisioning) or disappears, the Node is deleted.
 */
import { parse as parseYaml } from 'yaml';
import { R } from '../../../shared/api/resources.ts';
import type { KubeClient, WatchEvent } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { Logger } from '../../../shared/observability/logger.ts';
import { JoinRefused } from './kubeadm-join.ts';
import { registerReadyNode } from './kubelet-node.ts';
import { type ClaimTarget, claimTargetOf, joinClaimHost } from './kubelet-vmetal.ts';

export type KubeletMode = 'label' | 'no-label' | 'cloud-provider' | 'legacy';

export interface KubeletSimulatorOptions {
  management: KubeClient;
  workloadClient(namespace: string, clusterName: string): Promise<KubeClient>;
  /** Boot time between `provisioned` and Node registration. Default 0. */
  delayMs?: number;
  /** Per-host mode; default `label` for every host. */
  mode?: (host: KubeObject) => KubeletMode;
  /** Restrict to one namespace (default all). */
  namespace?: string;
  log?: Logger;
}

export interface KubeletSimulator {
  stop(): void;
  /** Resolves once the initial host list has been taken and the watch is running. */
  ready: Promise<void>;
  /** Resolves when every host event seen so far has been handled (for tests). */
  idle(): Promise<void>;
}

interface Target {
  /** The workload cluster's namespace and name (its Cluster's, the machine's). */
  namespace: string;
  cluster: string;
  machine: string;
}

interface Registered {
  namespace: string;
  cluster: string;
  node: string;
}

const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
/** Where the BMO simulator exposes the meta_data it rendered for the config drive (JSON). */
const BMO_META_DATA_ANNOTATION = 'sim.metal3.io/meta-data';

export function startKubeletSimulator(opts: KubeletSimulatorOptions): KubeletSimulator {
  const { management: mgmt, log } = opts;
  const registered = new Map<string, Registered>(); // host uid -> Node
  const chains = new Map<string, Promise<void>>(); // per-host serialization
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  let watch: AbortController | undefined;

  const enqueue = (host: KubeObject, deleted: boolean): void => {
    const uid = host.metadata.uid!;
    const prev = chains.get(uid) ?? Promise.resolve();
    const next = prev
      .then(() => handle(host, deleted, 0))
      .catch((e: unknown) =>
        log?.warn('kubelet sim: host not handled', { host: host.metadata.name, error: (e as Error).message }),
      );
    chains.set(uid, next);
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (ms <= 0) return resolve();
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  async function handle(host: KubeObject, deleted: boolean, attempt: number): Promise<void> {
    if (stopped) return;
    const uid = host.metadata.uid!;
    const state = (host.status as { provisioning?: { state?: string } } | undefined)?.provisioning?.state;
    if (deleted || state !== 'provisioned') {
      await unregister(host);
      return;
    }
    if (registered.has(uid)) return;
    const claimTarget = await claimTargetOf(mgmt, host);
    const target = claimTarget ? undefined : await targetOf(host);
    if (!target && !claimTarget) return; // no consumer yet: a later host event (consumerRef set) brings us back
    if (opts.delayMs) await sleep(opts.delayMs);
    // Still provisioned after the boot delay?
    const fresh = await mgmt.get(R.BareMetalHost, host.metadata.namespace, host.metadata.name!);
    if (stopped || !fresh || fresh.metadata.uid !== uid) return;
    if (
      (fresh.status as { provisioning?: { state?: string } } | undefined)?.provisioning?.state !==
      'provisioned'
    )
      return;
    try {
      if (claimTarget) await joinClaim(fresh, claimTarget);
      else if (target) await register(fresh, target);
    } catch (e) {
      if (e instanceof JoinRefused) {
        // As a node whose kubeadm join failed: no Node; the next host event tries again.
        log?.warn('kubelet sim: join refused', { host: host.metadata.name, reason: e.message });
        return;
      }
      // The workload cluster may not be reachable yet (kubeconfig Secret not written): retry a few times.
      if (attempt >= 20 || stopped) throw e;
      await sleep(Math.min(2000, 100 * 2 ** attempt));
      return handle(fresh, false, attempt + 1);
    }
  }

  /** The workload cluster (namespace, name) and machine of a host, from its consumerRef (a Metal3Machine). */
  async function targetOf(host: KubeObject): Promise<Target | undefined> {
    const consumer = (
      host.spec as { consumerRef?: { kind?: string; name?: string; namespace?: string } } | undefined
    )?.consumerRef;
    if (!consumer?.name || consumer.kind !== 'Metal3Machine') return undefined;
    const ns = consumer.namespace || host.metadata.namespace!;
    const m3m = await mgmt.get(R.Metal3Machine, ns, consumer.name);
    const cluster = m3m?.metadata.labels?.[CLUSTER_NAME_LABEL] ?? host.metadata.labels?.[CLUSTER_NAME_LABEL];
    return cluster ? { namespace: ns, cluster, machine: consumer.name } : undefined;
  }

  /**
   * The rendered meta_data as cloud-init sees it: the BMO simulator's computed copy (annotation
   * `sim.metal3.io/meta-data`) when present, else BMO defaults overlaid by the metaData Secret.
   */
  async function metaDataOf(host: KubeObject): Promise<Record<string, string>> {
    const computed = host.metadata.annotations?.[BMO_META_DATA_ANNOTATION];
    if (computed) {
      try {
        const parsed = JSON.parse(computed) as unknown;
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
          return Object.fromEntries(
            Object.entries(parsed as Record<string, unknown>).map(([k, v]) => [k, String(v)]),
          );
        }
      } catch {
        // fall through to the Secret
      }
    }
    const meta: Record<string, string> = {
      uuid: host.metadata.uid!,
      'metal3-namespace': host.metadata.namespace!,
      'metal3-name': host.metadata.name!,
      'local-hostname': host.metadata.name!,
      local_hostname: host.metadata.name!,
      name: host.metadata.name!,
    };
    const ref = (host.spec as { metaData?: { name?: string; namespace?: string } } | undefined)?.metaData;
    if (ref?.name) {
      const secret = await mgmt.get(R.Secret, ref.namespace || host.metadata.namespace, ref.name);
      const data = (secret?.data ?? {}) as Record<string, string>;
      const b64 = data.metaData ?? data.value;
      if (b64) {
        const parsed = parseYaml(Buffer.from(b64, 'base64').toString('utf8')) as unknown;
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
          for (const [k, v] of Object.entries(parsed as Record<string, unknown>))
            if (v !== null && v !== undefined) meta[k] = String(v);
        }
      }
    }
    return meta;
  }

  async function register(host: KubeObject, target: Target): Promise<void> {
    const ns = host.metadata.namespace!;
    const workload = await opts.workloadClient(target.namespace, target.cluster);
    const meta = await metaDataOf(host);
    const name = meta.name || host.metadata.name!;
    const mode = opts.mode?.(host) ?? 'label';
    const labels: Record<string, string> = { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' };
    if (mode !== 'no-label') labels['metal3.io/uuid'] = meta.uuid || host.metadata.uid!;
    const spec: Record<string, unknown> = {};
    if (mode === 'cloud-provider') spec.providerID = `metal3://${ns}/${host.metadata.name}/${target.machine}`;
    if (mode === 'legacy') spec.providerID = `metal3://${host.metadata.uid}`;
    const ips = (
      (host.status as { hardware?: { nics?: { ip?: string }[] } } | undefined)?.hardware?.nics ?? []
    )
      .map((n) => n.ip)
      .filter((ip): ip is string => Boolean(ip));
    await registerReadyNode(workload, {
      name,
      labels,
      spec,
      addresses: [
        ...ips.map((address) => ({ type: 'InternalIP', address })),
        { type: 'Hostname', address: name },
      ],
      machineID: meta.uuid,
    });
    registered.set(host.metadata.uid!, { namespace: target.namespace, cluster: target.cluster, node: name });
    log?.info('kubelet sim: Node registered', {
      host: `${ns}/${host.metadata.name}`,
      node: name,
      cluster: target.cluster,
      mode,
    });
  }

  async function joinClaim(host: KubeObject, t: ClaimTarget): Promise<void> {
    const { node, identity } = await joinClaimHost(mgmt, opts.workloadClient, host, t);
    registered.set(host.metadata.uid!, { namespace: t.namespace, cluster: t.cluster, node });
    log?.info('kubelet sim: Node joined', {
      host: `${host.metadata.namespace}/${host.metadata.name}`,
      node,
      tenant: `${t.namespace}/${t.cluster}`,
      identity,
    });
  }

  async function unregister(host: KubeObject): Promise<void> {
    const uid = host.metadata.uid!;
    const reg = registered.get(uid);
    if (reg) {
      const workload = await opts.workloadClient(reg.namespace, reg.cluster);
      await workload.delete(R.Node, undefined, reg.node);
      registered.delete(uid);
      log?.info('kubelet sim: Node deleted', {
        host: `${reg.namespace}/${host.metadata.name}`,
        node: reg.node,
      });
      return;
    }
    // Not registered by this process (restart): remove a Node still labelled with the host uid.
    const cluster = host.metadata.labels?.[CLUSTER_NAME_LABEL];
    if (!cluster) return;
    const workload = await opts.workloadClient(host.metadata.namespace!, cluster).catch(() => undefined);
    if (!workload) return;
    const stale = await workload.list(R.Node, undefined, { labelSelector: `metal3.io/uuid=${uid}` });
    for (const n of stale.items) await workload.delete(R.Node, undefined, n.metadata.name!);
  }

  async function startWatch(): Promise<void> {
    if (stopped) return;
    const list = await mgmt.list(R.BareMetalHost, opts.namespace);
    for (const h of list.items) enqueue(h, false);
    watch = await mgmt.watch(
      R.BareMetalHost,
      opts.namespace,
      { resourceVersion: list.resourceVersion },
      (ev: WatchEvent) => {
        if (ev.type === 'ADDED' || ev.type === 'MODIFIED') enqueue(ev.object, false);
        else if (ev.type === 'DELETED') enqueue(ev.object, true);
      },
      () => {
        // Stream ended (timeout, 410, server restart): re-list and watch again.
        if (!stopped)
          void sleep(200).then(() =>
            startWatch().catch((e: unknown) =>
              log?.warn('kubelet sim: rewatch failed', { error: (e as Error).message }),
            ),
          );
      },
    );
  }

  const ready = startWatch();
  ready.catch((e: unknown) => log?.error('kubelet sim: cannot watch hosts', { error: (e as Error).message }));

  return {
    ready,
    stop() {
      stopped = true;
      watch?.abort();
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
    async idle() {
      await ready;
      let size = -1;
      while (size !== chains.size) {
        size = chains.size;
        await Promise.all([...chains.values()]);
      }
    },
  };
}
