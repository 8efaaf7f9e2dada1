/**
 * How the simulators use the embedded workload clusters: the control plane's part (a cluster's
 * API server and the kubeconfig for its Secret) and the clients the simulators reach a workload
 * cluster with (the embedded cluster's admin client, else the cluster's Secret, as for any real one).
 */
import type { KubeClient } from '../../../shared/kube/client.ts';
import { createWorkloadClientCache } from '../../../shared/kube/workload.ts';
import type { EmbeddedClusters } from './embedded.ts';

/** What a control-plane provider does for a cluster, as the Cluster API simulator asks it. */
export interface ControlPlaneProvider {
  /**
   * The kubeconfig for the cluster's Secret, its API server started on the first call; undefined
   * when this run does not provide that cluster (its Secret comes from elsewhere).
   */
  kubeconfig(namespace: string, cluster: string): Promise<string | undefined>;
  /** The cluster is gone (or its Secret is someone else's): stop its API server. */
  release(namespace: string, cluster: string): Promise<void>;
}

export interface EmbeddedControlPlaneOptions {
  /** The bearer token the Secret's kubeconfig carries (default: the server's admin token). */
  token?: string | undefined;
  /** Clusters this run leaves alone: their Secret is the user's (e.g. in the manifests). */
  external?: (namespace: string, cluster: string) => boolean;
}

export function embeddedControlPlane(
  clusters: EmbeddedClusters,
  o: EmbeddedControlPlaneOptions = {},
): ControlPlaneProvider {
  return {
    async kubeconfig(namespace, cluster) {
      if (o.external?.(namespace, cluster)) return undefined;
      const c = await clusters.ensure(namespace, cluster);
      return c.server.kubeconfig(o.token ? { token: o.token } : {});
    },
    release: (namespace, cluster) => clusters.stop(namespace, cluster),
  };
}

/** The simulators' way into a workload cluster: the embedded one's admin client, else its Secret. */
export function simulatorWorkloadClients(
  management: KubeClient,
  clusters: EmbeddedClusters,
): (namespace: string, cluster: string) => Promise<KubeClient> {
  const viaSecret = createWorkloadClientCache(management);
  return async (namespace, cluster) =>
    clusters.lookup(namespace, cluster)?.admin ?? viaSecret.get(namespace, cluster);
}
