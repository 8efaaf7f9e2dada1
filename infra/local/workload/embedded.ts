/**
 * An embedded workload cluster per cluster: one embedded API server per (namespace, name), started
 * on first use, found by that key, stopped with its cluster or at the end of the run.
 *
 * The Cluster API simulator starts one for each Cluster, as a control-plane provider brings up a
 * cluster's API server, and publishes its kubeconfig in the cluster's Secret (./secret.ts); the
 * kubelet simulator registers Nodes in it; the state dump and the progress view read it. The key
 * is only a name: vMetal's tenant clusters (reached through `<vClusterRef.name>-kubeconfig`) are
 * started the same way.
 */
import { KubeClient } from '../../../shared/kube/client.ts';
import { type ApiServerHandle, type ApiServerOptions, startApiServer } from '../apiserver/index.ts';

export interface EmbeddedCluster {
  readonly namespace: string;
  readonly name: string;
  /** `<namespace>/<name>`. */
  readonly key: string;
  readonly server: ApiServerHandle;
  /** An admin client (simulators, progress view, state dump; never the product). */
  readonly admin: KubeClient;
}

export interface EmbeddedClustersOptions {
  /** The API server options of a cluster (RBAC tokens, fault injection). */
  serverOptions?: (namespace: string, name: string) => ApiServerOptions;
  /** Runs once for each cluster after its server started, before anyone is handed it (roles, logs). */
  prepare?: (cluster: EmbeddedCluster) => Promise<void> | void;
}

export const clusterKey = (namespace: string, name: string): string => `${namespace}/${name}`;

export class EmbeddedClusters {
  private readonly starting = new Map<string, Promise<EmbeddedCluster>>();
  private readonly running = new Map<string, EmbeddedCluster>();
  private readonly listeners = new Set<(c: EmbeddedCluster) => void>();
  private closed = false;
  private readonly opts: EmbeddedClustersOptions;

  constructor(opts: EmbeddedClustersOptions = {}) {
    this.opts = opts;
  }

  /** The cluster's API server, started on the first call (concurrent calls share one start). */
  ensure(namespace: string, name: string): Promise<EmbeddedCluster> {
    if (this.closed) return Promise.reject(new Error('the embedded workload clusters are stopped'));
    const key = clusterKey(namespace, name);
    let p = this.starting.get(key);
    if (!p) {
      p = this.start(namespace, name, key);
      this.starting.set(key, p);
      p.catch(() => this.starting.delete(key));
    }
    return p;
  }

  private async start(namespace: string, name: string, key: string): Promise<EmbeddedCluster> {
    const server = await startApiServer(this.opts.serverOptions?.(namespace, name) ?? {});
    const cluster: EmbeddedCluster = {
      namespace,
      name,
      key,
      server,
      admin: KubeClient.fromString(server.kubeconfig()),
    };
    try {
      if (this.closed) throw new Error('the embedded workload clusters are stopped');
      await this.opts.prepare?.(cluster);
    } catch (e) {
      await server.stop();
      throw e;
    }
    this.running.set(key, cluster);
    for (const fn of this.listeners) fn(cluster);
    return cluster;
  }

  /** A running cluster, or undefined. */
  lookup(namespace: string, name: string): EmbeddedCluster | undefined {
    return this.running.get(clusterKey(namespace, name));
  }

  list(): EmbeddedCluster[] {
    return [...this.running.values()];
  }

  /** Called for every cluster already running and every one started later; returns an unsubscribe. */
  onStarted(fn: (c: EmbeddedCluster) => void): () => void {
    for (const c of this.running.values()) fn(c);
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  async stop(namespace: string, name: string): Promise<void> {
    const key = clusterKey(namespace, name);
    const p = this.starting.get(key);
    this.starting.delete(key);
    this.running.delete(key);
    const c = await p?.catch(() => undefined);
    await c?.server.stop();
  }

  async stopAll(): Promise<void> {
    this.closed = true;
    const all = [...this.starting.values()];
    this.starting.clear();
    this.running.clear();
    this.listeners.clear();
    await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.server.stop()));
  }
}
