/**
 * The current cluster of a kubeconfig (its API server URL and CA), read with client-node's own
 * loader so every kubeconfig spelling it accepts is accepted here: what a join needs of a cluster.
 */
import { KubeConfig } from '@kubernetes/client-node';

export interface KubeconfigCluster {
  server: string;
  /** The CA bundle (PEM) of `certificate-authority-data`; absent when the kubeconfig has none. */
  caPem?: string | undefined;
}

/** Throws when the text is not a kubeconfig or names no current cluster. */
export function currentClusterOf(text: string): KubeconfigCluster {
  const kc = new KubeConfig();
  kc.loadFromString(text);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig names no current cluster');
  const caPem = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString('utf8') : undefined;
  return { server: cluster.server, ...(caPem ? { caPem } : {}) };
}
