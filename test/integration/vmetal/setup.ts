/**
 * The vMetal integration tests' setup: a provider over the `metal3` hosts with two node types whose
 * selectors overlap, the catalogue objects the properties name, claims in a project namespace,
 * and drivers for the function cores (the relay's part).
 */
import { reconcile as allocateIndex } from '../../../functions/allocate-index/core.ts';
import { reconcile as selectHost } from '../../../functions/select-host/core.ts';
import { createSampleHosts } from '../../../infra/local/sim/bmo.ts';
import { R } from '../../../shared/api/resources.ts';
import type { NodeClaim } from '../../../shared/api/vmetal/nodeclaim.ts';
import type { NodeProvider } from '../../../shared/api/vmetal/nodeprovider.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { ReconcileContext } from '../../../shared/reconcile/context.ts';
import type { ReconcileResult } from '../../../shared/reconcile/result.ts';
import { clusterContext } from '../../helpers/context.ts';
import { messageFor } from '../../helpers/messages.ts';
import { useCluster } from '../../helpers/use-cluster.ts';

export const HOST_NS = 'metal3';
export const PROJECT_NS = 'p-team-a';
export const PUBLIC_KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBy8yGHVCAb0SpN5CqdHwvDptQ3PQ1vdRT8q7VbYeWg2 admin@example.com';

let nextNet = 0;

/** A provider over the hosts labelled `pool=<pools>`, on a network of its own (10.40+n.0.0/24). */
export function provider(name: string, over: Partial<NodeProvider['spec']> = {}, pools = 'vm'): NodeProvider {
  const net = `10.${40 + nextNet++}.0`;
  return {
    metadata: { name },
    spec: {
      properties: {
        'metal3.vcluster.com/image-url': 'http://images.example.com/ubuntu.qcow2',
        'metal3.vcluster.com/image-checksum': 'http://images.example.com/ubuntu.qcow2.sha256sum',
        'metal3.vcluster.com/network-cidr': `${net}.1/24`,
        'metal3.vcluster.com/network-ip-range': `${net}.10-${net}.60`,
        'vcluster.com/ssh-keys': 'admin-key',
      },
      metal3: {
        clusterRef: { cluster: 'local', namespace: HOST_NS },
        nodeTypes: [
          { name: `${name}-any`, bareMetalHosts: { selector: { matchLabels: { pool: pools } } }, cost: 5 },
          {
            name: `${name}-rack-a`,
            bareMetalHosts: { selector: { matchLabels: { pool: pools, rack: 'a' } } },
            cost: 1,
          },
        ],
      },
      ...over,
    },
  };
}

export function nodeClaim(name: string, typeRef: string, properties: Record<string, string> = {}): NodeClaim {
  return {
    metadata: { name, namespace: PROJECT_NS },
    spec: { typeRef, vClusterRef: 'tenant-a', properties },
  };
}

export async function createCatalogue(client: KubeClient): Promise<void> {
  await client.create(R.SSHKey, { metadata: { name: 'admin-key' }, spec: { publicKey: PUBLIC_KEY } });
}

export async function createHosts(
  client: KubeClient,
  prefix: string,
  n: number,
  labels: (i: number) => Record<string, string>,
) {
  return createSampleHosts(client, HOST_NS, n, { prefix, labels });
}

export const runSelectHost = (
  ctx: ReconcileContext,
  t: typeof R.NodeClaim | typeof R.NodeProvider | typeof R.NodeType,
  name: string,
  ns?: string,
): Promise<ReconcileResult> => selectHost(ctx, messageFor('selectHost', t, name, ns));

export const runAllocate = (ctx: ReconcileContext, name: string): Promise<ReconcileResult> =>
  allocateIndex(ctx, messageFor('allocateIndex', R.IPClaim, name, HOST_NS));

/** One test cluster per file with the project namespace and the catalogue (the SSHKey the providers name). */
export const useVmetalCluster = () =>
  useCluster({
    makeCtx: (client) => clusterContext(client),
    cluster: { namespaces: [PROJECT_NS] },
    seed: async (c) => createCatalogue(c.client),
    timeout: 30_000,
  });
