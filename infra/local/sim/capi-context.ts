/** What every part of the Cluster API simulator works with (test and dev only). */
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { Logger } from '../../../shared/observability/logger.ts';
import type { ControlPlaneProvider } from '../workload/provider.ts';

export type SimKind = 'Cluster' | 'Machine' | 'KubeadmControlPlane' | 'MachineDeployment' | 'MachineSet';

export interface CapiContext {
  client: KubeClient;
  workloadClient(namespace: string, clusterName: string): Promise<KubeClient>;
  controlPlane?: ControlPlaneProvider | undefined;
  log?: Logger | undefined;
  /** Queue an object for (another) pass. */
  enqueue(kind: SimKind, namespace: string | undefined, name: string | undefined): void;
  /**
   * The workload cluster's Node with this providerID, from the simulator's Node watch (as Cluster
   * API's providerID index); `unknown` while that watch is not running (the caller lists instead).
   */
  nodeByProviderID?(
    namespace: string,
    clusterName: string,
    providerID: string,
  ): { name: string; uid: string } | undefined | 'unknown';
}
