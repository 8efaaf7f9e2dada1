import { reconcile as deprovisionCore } from '../../functions/deprovision/core.ts';
import { reconcile as selectHostCore } from '../../functions/select-host/core.ts';
import { apiVersionOf, envelopeOf, R } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { ProductConfig, ReconcileContext } from '../../shared/reconcile/context.ts';
import type { ReconcileResult } from '../../shared/reconcile/result.ts';
import { clusterContext } from './context.ts';
import { messageFor } from './messages.ts';
import { eventually } from './wait.ts';

export const NS = 'metal3';
export const CLUSTER = 'cluster';

export const makeCtx = (client: KubeClient, config: Partial<ProductConfig> = {}): ReconcileContext =>
  clusterContext(client, { config });
export const msg = messageFor;
export { eventually };

export const selectHost = (ctx: ReconcileContext, name: string, ns = NS): Promise<ReconcileResult> =>
  selectHostCore(ctx, msg('selectHost', R.Metal3Machine, name, ns));
export const deprovision = (ctx: ReconcileContext, name: string, ns = NS): Promise<ReconcileResult> =>
  deprovisionCore(ctx, msg('deprovision', R.Metal3Machine, name, ns));

export async function createCluster(
  client: KubeClient,
  opts: { name?: string; infrastructureReady?: boolean; paused?: boolean } = {},
): Promise<KubeObject> {
  const name = opts.name ?? CLUSTER;
  const c: KubeObject = await client.create(envelopeOf(R.Cluster), {
    metadata: { name, namespace: NS },
    spec: {
      ...(opts.paused ? { paused: true } : {}),
      infrastructureRef: {
        apiVersion: apiVersionOf(R.Metal3Cluster),
        kind: 'Metal3Cluster',
        name,
        namespace: NS,
      },
    },
  });
  c.status = { infrastructureReady: opts.infrastructureReady ?? true };
  return client.replaceStatus(R.Cluster, c);
}

export interface MachinePair {
  machine: KubeObject;
  m3m: KubeObject;
}

/** A Machine with bootstrap data (Secret `<name>-bootstrap`, key `value`) and its Metal3Machine. */
export async function createMachinePair(
  client: KubeClient,
  name: string,
  opts: {
    m3mSpec?: Record<string, unknown>;
    machineLabels?: Record<string, string>;
    machineOwners?: KubeObject['metadata']['ownerReferences'];
    bootstrap?: boolean;
    failureDomain?: string;
    cluster?: string;
  } = {},
): Promise<MachinePair> {
  const cluster = opts.cluster ?? CLUSTER;
  const bootstrap = opts.bootstrap ?? true;
  if (bootstrap) {
    await client.create(R.Secret, {
      metadata: {
        name: `${name}-bootstrap`,
        namespace: NS,
        labels: { 'cluster.x-k8s.io/cluster-name': cluster },
      },
      type: 'cluster.x-k8s.io/secret',
      data: {
        value: Buffer.from('#cloud-config\n').toString('base64'),
        format: Buffer.from('cloud-config').toString('base64'),
      },
    });
  }
  const machine: KubeObject = await client.create(envelopeOf(R.Machine), {
    metadata: {
      name,
      namespace: NS,
      labels: { 'cluster.x-k8s.io/cluster-name': cluster, ...(opts.machineLabels ?? {}) },
      ...(opts.machineOwners ? { ownerReferences: opts.machineOwners } : {}),
    },
    spec: {
      clusterName: cluster,
      bootstrap: bootstrap ? { dataSecretName: `${name}-bootstrap` } : {},
      infrastructureRef: {
        apiVersion: apiVersionOf(R.Metal3Machine),
        kind: 'Metal3Machine',
        name,
        namespace: NS,
      },
      ...(opts.failureDomain ? { failureDomain: opts.failureDomain } : {}),
      version: 'v1.28.1',
    },
  });
  const m3m: KubeObject = await client.create(envelopeOf(R.Metal3Machine), {
    metadata: {
      name,
      namespace: NS,
      labels: { 'cluster.x-k8s.io/cluster-name': cluster },
      ownerReferences: [
        {
          apiVersion: apiVersionOf(R.Machine),
          kind: 'Machine',
          name,
          uid: machine.metadata.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      image: {
        url: 'http://172.22.0.1/images/node.img',
        checksum: 'http://172.22.0.1/images/node.img.sha256sum',
        checksumType: 'sha256',
        format: 'raw',
      },
      automatedCleaningMode: 'metadata',
      ...(opts.m3mSpec ?? {}),
    },
  });
  return { machine, m3m };
}

export const hostState = (h: KubeObject | undefined): string =>
  String((h?.status as { provisioning?: { state?: string } } | undefined)?.provisioning?.state ?? '');
