/**
 * Clients for workload clusters, built from the CAPI Secret `<cluster>-kubeconfig` (key `value`,
 * a base64 kubeconfig) in the cluster's namespace, cached per cluster.
 *
 * A cached client is revalidated cheaply: at most every `revalidateMs` the Secret is re-read and
 * its resourceVersion compared; a new resourceVersion (rotated credentials, pivot) rebuilds the
 * client. The relay's Secret events call `invalidateBySecret` so a change is seen at once.
 * A missing Secret or key is a waiting condition (`WorkloadClusterUnavailableError`, transient),
 * never a crash: the Secret's creation wakes the machine again.
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { Secret } from '../api/core.ts';
import { messageOf } from '../api/json.ts';
import { R } from '../api/resources.ts';
import { TransientError } from '../reconcile/errors.ts';
import { KubeClient } from './client.ts';

export type WorkloadUnavailableReason = 'SecretNotFound' | 'KeyMissing' | 'InvalidKubeconfig';

/** The workload cluster cannot be reached yet (its kubeconfig Secret is absent or unusable). */
export class WorkloadClusterUnavailableError extends TransientError {
  readonly reason: WorkloadUnavailableReason;
  readonly namespace: string;
  readonly clusterName: string;
  readonly secretName: string;
  constructor(reason: WorkloadUnavailableReason, namespace: string, clusterName: string, detail: string) {
    const secretName = kubeconfigSecretName(clusterName);
    super(
      `workload cluster ${namespace}/${clusterName} unavailable: ${detail} (Secret ${namespace}/${secretName}, key "value")`,
    );
    this.reason = reason;
    this.namespace = namespace;
    this.clusterName = clusterName;
    this.secretName = secretName;
  }
}

export const isWorkloadUnavailable = (e: unknown): e is WorkloadClusterUnavailableError =>
  e instanceof WorkloadClusterUnavailableError;

/** `<cluster>-kubeconfig`, the CAPI convention. */
export const kubeconfigSecretName = (clusterName: string): string => `${clusterName}-kubeconfig`;

/** The cluster name a kubeconfig Secret belongs to, or undefined when the name is not one. */
export function clusterNameOfSecret(secretName: string): string | undefined {
  return secretName.endsWith('-kubeconfig') && secretName.length > '-kubeconfig'.length
    ? secretName.slice(0, -'-kubeconfig'.length)
    : undefined;
}

export interface WorkloadClientCache {
  get(namespace: string, clusterName: string): Promise<KubeClient>;
  invalidate(namespace: string, clusterName: string): void;
  invalidateBySecret(namespace: string, secretName: string): void;
}

export interface WorkloadClientCacheOptions {
  /** Re-read the Secret (one GET) to compare its resourceVersion at most this often; 0 = on every use. Default 30 s. */
  revalidateMs?: number;
  /** Builds a client from kubeconfig text; default: a KubeClient sharing the management client's RequestStats and fieldValidation. */
  clientFactory?: (kubeconfig: string) => KubeClient;
  /** Clock (ms), for tests. */
  now?: () => number;
}

interface Entry {
  client: KubeClient;
  resourceVersion: string;
  checkedAt: number;
}

/** Decodes the `value` key of a kubeconfig Secret; throws the typed unavailable error. */
export function kubeconfigFromSecret(
  secret: Secret | undefined,
  namespace: string,
  clusterName: string,
): string {
  if (!secret)
    throw new WorkloadClusterUnavailableError(
      'SecretNotFound',
      namespace,
      clusterName,
      'kubeconfig Secret not found',
    );
  const data = secret.data ?? {};
  const stringData = secret.stringData ?? {};
  const raw =
    data.value !== undefined ? Buffer.from(data.value, 'base64').toString('utf8') : stringData.value;
  if (raw === undefined || raw.trim() === '') {
    throw new WorkloadClusterUnavailableError(
      'KeyMissing',
      namespace,
      clusterName,
      'kubeconfig Secret has no key "value"',
    );
  }
  return raw;
}

export function createWorkloadClientCache(
  mgmt: KubeClient,
  opts: WorkloadClientCacheOptions = {},
): WorkloadClientCache {
  const revalidateMs = opts.revalidateMs ?? 30_000;
  const now = opts.now ?? (() => Date.now());
  const factory =
    opts.clientFactory ??
    ((text: string) => {
      const kc = new KubeConfig();
      kc.loadFromString(text);
      if (!kc.getCurrentCluster()) throw new Error('kubeconfig names no current cluster');
      return new KubeClient(kc, {
        stats: mgmt.stats,
        ...(mgmt.fieldValidation ? { fieldValidation: mgmt.fieldValidation } : {}),
      });
    });
  const entries = new Map<string, Entry>();
  const inflight = new Map<string, Promise<KubeClient>>();
  const key = (ns: string, cluster: string) => `${ns}/${cluster}`;

  async function load(ns: string, cluster: string): Promise<KubeClient> {
    const k = key(ns, cluster);
    const secret = await mgmt.get(R.Secret, ns, kubeconfigSecretName(cluster));
    const rv = secret?.metadata.resourceVersion ?? '';
    const cached = entries.get(k);
    if (secret && cached && cached.resourceVersion === rv) {
      cached.checkedAt = now();
      return cached.client;
    }
    entries.delete(k);
    const text = kubeconfigFromSecret(secret, ns, cluster);
    let client: KubeClient;
    try {
      client = factory(text);
    } catch (e) {
      throw new WorkloadClusterUnavailableError(
        'InvalidKubeconfig',
        ns,
        cluster,
        `kubeconfig cannot be loaded: ${messageOf(e)}`,
      );
    }
    entries.set(k, { client, resourceVersion: rv, checkedAt: now() });
    return client;
  }

  return {
    async get(ns, cluster) {
      const k = key(ns, cluster);
      const cached = entries.get(k);
      if (cached && now() - cached.checkedAt < revalidateMs) return cached.client;
      let p = inflight.get(k);
      if (!p) {
        p = load(ns, cluster).finally(() => inflight.delete(k));
        inflight.set(k, p);
      }
      return p;
    },
    invalidate(ns, cluster) {
      entries.delete(key(ns, cluster));
    },
    invalidateBySecret(ns, secretName) {
      const cluster = clusterNameOfSecret(secretName);
      if (cluster) entries.delete(key(ns, cluster));
    },
  };
}
