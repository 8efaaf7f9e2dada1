/**
 * How the kubelet simulator registers a Node in a workload or tenant cluster: created (a 409 from
 * a restart is the same Node), then its status posted Ready with its addresses, as a kubelet's
 * first status update does.
 */
import { R } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';

export interface NodeRegistration {
  name: string;
  labels: Record<string, string>;
  spec: Record<string, unknown>;
  addresses: { type: string; address: string }[];
  machineID: string | undefined;
}

export async function registerReadyNode(workload: KubeClient, n: NodeRegistration): Promise<void> {
  let node = await workload.get(R.Node, undefined, n.name);
  if (!node) {
    try {
      node = await workload.create(R.Node, { metadata: { name: n.name, labels: n.labels }, spec: n.spec });
    } catch (e) {
      if ((e as { code?: number }).code !== 409) throw e;
      node = await workload.get(R.Node, undefined, n.name);
    }
  }
  if (!node) throw new Error(`Node ${n.name} vanished while registering`);
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await workload.patch(
    R.Node,
    undefined,
    n.name,
    {
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            message: 'kubelet is posting ready status (simulated)',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
        addresses: n.addresses,
        nodeInfo: {
          kubeletVersion: 'v1.28.1',
          machineID: n.machineID,
          systemUUID: n.machineID,
          operatingSystem: 'linux',
          architecture: 'amd64',
        },
      },
    },
    'merge',
    { status: true },
  );
}
