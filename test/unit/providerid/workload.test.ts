import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { RequestStats } from '../../../shared/kube/stats.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import {
  clusterNameOfSecret,
  createWorkloadClientCache,
  WorkloadClusterUnavailableError,
} from '../../../shared/kube/workload.ts';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{name: w, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: w, user: u}}]
current-context: c
`;

function fakeMgmt(secrets: Map<string, KubeObject>) {
  const reads: string[] = [];
  const mgmt = {
    stats: new RequestStats(),
    async get(_t: unknown, ns: string, name: string) {
      reads.push(`${ns}/${name}`);
      return structuredClone(secrets.get(`${ns}/${name}`));
    },
  } as unknown as KubeClient;
  return { mgmt, reads };
}

const secret = (rv: string, value: string | null = KUBECONFIG): KubeObject => ({
  metadata: { name: 'c1-kubeconfig', namespace: 'ns', resourceVersion: rv },
  data: value === null ? {} : { value: Buffer.from(value).toString('base64') },
});

describe('workload client cache', () => {
  it('builds a client from <cluster>-kubeconfig key value, sharing the management stats', async () => {
    const { mgmt } = fakeMgmt(new Map([['ns/c1-kubeconfig', secret('1')]]));
    const cache = createWorkloadClientCache(mgmt);
    const c = await cache.get('ns', 'c1');
    expect(c.kc.getCurrentCluster()?.server).toBe('http://127.0.0.1:1');
    expect(c.stats).toBe(mgmt.stats);
  });

  it('caches per cluster and revalidates by resourceVersion', async () => {
    const secrets = new Map([['ns/c1-kubeconfig', secret('1')]]);
    let t = 0;
    const { mgmt, reads } = fakeMgmt(secrets);
    const cache = createWorkloadClientCache(mgmt, { revalidateMs: 1000, now: () => t });
    const a = await cache.get('ns', 'c1');
    expect(await cache.get('ns', 'c1')).toBe(a);
    expect(reads).toEqual(['ns/c1-kubeconfig']);
    t = 2000; // stale: one GET, same resourceVersion -> same client
    expect(await cache.get('ns', 'c1')).toBe(a);
    expect(reads).toHaveLength(2);
    secrets.set('ns/c1-kubeconfig', secret('2'));
    t = 4000;
    const b = await cache.get('ns', 'c1');
    expect(b).not.toBe(a);
  });

  it('invalidate and invalidateBySecret drop the entry', async () => {
    const { mgmt, reads } = fakeMgmt(new Map([['ns/c1-kubeconfig', secret('1')]]));
    const cache = createWorkloadClientCache(mgmt, { revalidateMs: 60_000 });
    await cache.get('ns', 'c1');
    cache.invalidateBySecret('ns', 'unrelated');
    await cache.get('ns', 'c1');
    expect(reads).toHaveLength(1);
    cache.invalidateBySecret('ns', 'c1-kubeconfig');
    await cache.get('ns', 'c1');
    expect(reads).toHaveLength(2);
    cache.invalidate('ns', 'c1');
    await cache.get('ns', 'c1');
    expect(reads).toHaveLength(3);
  });

  it('concurrent gets share one read', async () => {
    const { mgmt, reads } = fakeMgmt(new Map([['ns/c1-kubeconfig', secret('1')]]));
    const cache = createWorkloadClientCache(mgmt);
    const [a, b] = await Promise.all([cache.get('ns', 'c1'), cache.get('ns', 'c1')]);
    expect(a).toBe(b);
    expect(reads).toHaveLength(1);
  });

  it.each([
    ['SecretNotFound', undefined],
    ['KeyMissing', secret('1', null)],
    ['InvalidKubeconfig', secret('1', 'not: [a kubeconfig')],
  ] as const)('%s is a typed waiting error naming the Secret', async (reason, s) => {
    const { mgmt } = fakeMgmt(new Map(s ? [['ns/c1-kubeconfig', s]] : []));
    const cache = createWorkloadClientCache(mgmt);
    const err = await cache.get('ns', 'c1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkloadClusterUnavailableError);
    expect((err as WorkloadClusterUnavailableError).reason).toBe(reason);
    expect((err as Error).message).toContain('Secret ns/c1-kubeconfig');
  });

  it('recovers once the Secret appears', async () => {
    const secrets = new Map<string, KubeObject>();
    const { mgmt } = fakeMgmt(secrets);
    const cache = createWorkloadClientCache(mgmt);
    await expect(cache.get('ns', 'c1')).rejects.toBeInstanceOf(WorkloadClusterUnavailableError);
    secrets.set('ns/c1-kubeconfig', secret('3'));
    await expect(cache.get('ns', 'c1')).resolves.toBeDefined();
  });

  it('maps Secret names to clusters', () => {
    expect(clusterNameOfSecret('c1-kubeconfig')).toBe('c1');
    expect(clusterNameOfSecret('-kubeconfig')).toBeUndefined();
    expect(clusterNameOfSecret('c1-ca')).toBeUndefined();
  });
});
