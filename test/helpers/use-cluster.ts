/**
 * One test cluster per test file (or per describe block), started in beforeAll and stopped in
 * afterAll, with a reconcile context on its client. Kept apart from cluster.ts because that file is
 * also imported by the benchmarks, which run outside vitest.
 */
import { afterAll, beforeAll } from 'vitest';
import type { KubeClient } from '../../shared/kube/client.ts';
import { startTestCluster, type TestCluster, type TestClusterOptions } from './cluster.ts';

/** The running cluster and a context on its client; filled in by beforeAll. */
export type ClusterWithCtx<C> = TestCluster & { ctx: C };

export interface UseClusterOptions<C> {
  cluster?: TestClusterOptions;
  /** The reconcile context the tests use (each corpus has its own event component). */
  makeCtx: (client: KubeClient) => C;
  /** Creates what the tests start from, once the cluster is up. */
  seed?: (tc: ClusterWithCtx<C>) => Promise<void>;
  /** beforeAll's timeout, for a long seed (default: the config's hookTimeout). */
  timeout?: number;
}

/**
 * Registers the hooks in the calling scope and returns the holder at once. The holder is empty
 * until beforeAll has run, so read it inside hooks and tests, never at module level.
 */
export function useCluster<C>(opts: UseClusterOptions<C>): ClusterWithCtx<C> {
  const tc = {} as ClusterWithCtx<C>;
  beforeAll(async () => {
    const started = await startTestCluster(opts.cluster);
    Object.assign(tc, started, { ctx: opts.makeCtx(started.client) });
    await opts.seed?.(tc);
  }, opts.timeout);
  afterAll(async () => {
    // stop is missing when the start failed: there is nothing to stop then.
    await tc.stop?.();
  });
  return tc;
}
