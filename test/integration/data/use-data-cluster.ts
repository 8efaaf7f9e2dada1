/**
 * The cluster set-up the data-path test files share. Not in harness.ts: the allocation benchmark
 * imports harness.ts under plain node, and this file pulls in vitest's hooks.
 */
import { R } from '../../../shared/api/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { ReconcileContext } from '../../../shared/reconcile/context.ts';
import { converge, createMachine, makeCtx, POOL_1, POOL6_1, seedTemplate } from '../../helpers/data.ts';
import { type ClusterWithCtx, type UseClusterOptions, useCluster } from '../../helpers/use-cluster.ts';

export type DataCluster = ClusterWithCtx<ReconcileContext>;

export interface DataClusterOptions extends Omit<UseClusterOptions<ReconcileContext>, 'makeCtx'> {
  /** Create POOL_1 and POOL6_1 first. */
  pools?: boolean;
  /** Then create this Metal3DataTemplate (before `seed`). */
  template?: KubeObject;
}

/** A cluster for the calling file or describe block, with a data-path context; see useCluster. */
export function useDataCluster(opts: DataClusterOptions = {}): DataCluster {
  const { pools, template, seed, ...rest } = opts;
  return useCluster({
    ...rest,
    makeCtx,
    seed: async (tc) => {
      if (pools) {
        await tc.client.create(R.IPPool, POOL_1);
        await tc.client.create(R.IPPool, POOL6_1);
      }
      if (template) await tc.client.create(R.Metal3DataTemplate, template);
      await seed?.(tc);
    },
  });
}

/** POOL_1, POOL6_1 and template nodepool-1, with `machines` created and converged to rendered. */
export function useRenderedMachines(machines: string[]): DataCluster {
  return useDataCluster({
    pools: true,
    template: seedTemplate('nodepool-1'),
    seed: async ({ client, ctx }) => {
      for (const m of machines) await createMachine(client, m, 'nodepool-1');
      await converge(ctx);
    },
  });
}
