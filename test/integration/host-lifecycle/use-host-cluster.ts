/**
 * One test cluster with the Cluster the host tests associate against, and the small readers they
 * share. Apart from harness.ts, which the host-claim benchmark imports outside vitest.
 */
import type { BareMetalHost } from '../../../shared/api/baremetalhost.ts';
import { R } from '../../../shared/api/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { ReconcileContext } from '../../../shared/reconcile/context.ts';
import { testClient } from '../../helpers/cluster.ts';
import { createCluster, makeCtx, NS } from '../../helpers/hosts.ts';
import { type ClusterWithCtx, useCluster } from '../../helpers/use-cluster.ts';

export type HostCluster = ClusterWithCtx<ReconcileContext> & {
  /** A fresh client (its own request counters) and a reconcile context on it. */
  freshCtx(): ReconcileContext;
  getHost(name: string): Promise<BareMetalHost>;
  getSecret(name: string): Promise<KubeObject | undefined>;
};

export function useHostCluster(): HostCluster {
  const tc = useCluster({
    makeCtx,
    seed: async (c) => void (await createCluster(c.client)),
    timeout: 30_000,
  }) as HostCluster;
  tc.freshCtx = () => makeCtx(testClient(tc.kubeconfig));
  tc.getHost = async (name) => (await tc.client.get(R.BareMetalHost, NS, name))!;
  tc.getSecret = (name) => tc.client.get(R.Secret, NS, name);
  return tc;
}

/** The host's BMC credentials Secret name. */
export const bmcName = (host: KubeObject): string =>
  (host.spec as { bmc: { credentialsName: string } }).bmc.credentialsName;
