/**
 * Two embedded API servers (management with the project's CRDs, workload without) and the
 * objects a provisioned Metal3Machine has once selectHost is done, for the resolveProviderID tests.
 */
import type { MessageEnvelope } from '../../../events/envelope.ts';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { createWorkloadClientCache } from '../../../shared/kube/workload.ts';
import { createEventRecorder } from '../../../shared/observability/events.ts';
import { silentLogger } from '../../../shared/observability/logger.ts';
import {
  DEFAULT_CONFIG,
  type ProductConfig,
  type ReconcileContext,
} from '../../../shared/reconcile/context.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';

export const NS = 'metal3';
export const CLUSTER = 'c1';

export interface Env {
  mgmt: TestCluster;
  workload: TestCluster;
  ctx(config?: Partial<ProductConfig>): ReconcileContext;
  stop(): Promise<void>;
}

export async function startEnv(): Promise<Env> {
  const mgmt = await startTestCluster();
  const workload = await startTestCluster({ crds: false });
  await mgmt.client.create(R.Secret, {
    metadata: {
      name: `${CLUSTER}-kubeconfig`,
      namespace: NS,
      labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER },
    },
    type: 'cluster.x-k8s.io/secret',
    data: { value: Buffer.from(workload.kubeconfig).toString('base64') },
  });
  const cache = createWorkloadClientCache(mgmt.client, { revalidateMs: 0 });
  const events = createEventRecorder(mgmt.client, 'resolve-provider-id');
  return {
    mgmt,
    workload,
    ctx: (config = {}) => ({
      client: mgmt.client,
      workloadClient: (ns, c) => cache.get(ns, c),
      events,
      log: silentLogger,
      config: { ...DEFAULT_CONFIG, ...config },
      now: () => new Date(),
    }),
    stop: async () => {
      await Promise.all([mgmt.stop(), workload.stop()]);
    },
  };
}

export interface MachineSetup {
  name: string;
  host: string;
  /** Host provisioning state (default provisioned). */
  state?: string;
  providerID?: string;
  hostAnnotation?: string;
  bootstrapConfigRef?: boolean;
  addresses?: { type: string; address: string }[];
}

/** Cluster + Metal3Cluster (once per env). */
export async function createCluster(
  c: KubeClient,
  m3cSpec: Record<string, unknown> = { noCloudProvider: true },
): Promise<void> {
  await c.create(R.Metal3Cluster, {
    metadata: { name: CLUSTER, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } },
    spec: { controlPlaneEndpoint: { host: '192.168.111.249', port: 6443 }, ...m3cSpec },
  });
  await c.create(R.Cluster, {
    metadata: { name: CLUSTER, namespace: NS },
    spec: {
      infrastructureRef: {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'Metal3Cluster',
        name: CLUSTER,
        namespace: NS,
      },
    },
  });
}

/** A provisioned host, its Machine and a Metal3Machine associated with it. Returns the host uid. */
export async function createMachine(
  c: KubeClient,
  s: MachineSetup,
): Promise<{ hostUid: string; m3m: KubeObject }> {
  const host = await c.create(R.BareMetalHost, {
    metadata: { name: s.host, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } },
    spec: {
      online: true,
      bootMACAddress: '00:11:22:33:44:55',
      consumerRef: {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'Metal3Machine',
        name: s.name,
        namespace: NS,
      },
    },
  });
  await c.replaceStatus(R.BareMetalHost, {
    ...host,
    status: {
      provisioning: { state: s.state ?? 'provisioned' },
      operationalStatus: 'OK',
      hardware: {
        hostname: s.host,
        nics: [{ name: 'eth0', mac: '00:11:22:33:44:55', ip: '192.168.111.20' }],
      },
    },
  });
  const machine = await c.create(envelopeOf(R.Machine), {
    metadata: { name: s.name, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } },
    spec: {
      clusterName: CLUSTER,
      bootstrap:
        s.bootstrapConfigRef === false
          ? { dataSecretName: `${s.name}-bootstrap` }
          : {
              configRef: {
                apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1',
                kind: 'KubeadmConfig',
                name: s.name,
                namespace: NS,
              },
              dataSecretName: `${s.name}-bootstrap`,
            },
      infrastructureRef: {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'Metal3Machine',
        name: s.name,
        namespace: NS,
      },
    },
  });
  let m3m: KubeObject = await c.create(R.Metal3Machine, {
    metadata: {
      name: s.name,
      namespace: NS,
      labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER },
      annotations: { 'metal3.io/BareMetalHost': s.hostAnnotation ?? `${NS}/${s.host}` },
      ownerReferences: [
        {
          apiVersion: 'cluster.x-k8s.io/v1beta1',
          kind: 'Machine',
          name: s.name,
          uid: machine.metadata.uid!,
          controller: true,
        },
      ],
    },
    spec: {
      image: {
        url: 'http://172.22.0.1/images/img.raw',
        checksum: 'http://172.22.0.1/images/img.raw.sha256sum',
        checksumType: 'sha256',
        format: 'raw',
      },
      ...(s.providerID ? { providerID: s.providerID } : {}),
    },
  });
  // What selectHost and renderData leave behind: association and data conditions True.
  const t = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  m3m = await c.replaceStatus(envelopeOf(R.Metal3Machine), {
    ...m3m,
    status: {
      ...(s.addresses ? { addresses: s.addresses } : {}),
      conditions: [
        { type: 'AssociateBMH', status: 'True', lastTransitionTime: t },
        { type: 'Metal3DataReady', status: 'True', lastTransitionTime: t },
      ],
    },
  });
  return { hostUid: host.metadata.uid!, m3m };
}

/** A Node as kubelet registers it. */
export async function createNode(
  w: KubeClient,
  name: string,
  opts: { uid?: string; providerID?: string; hostname?: string } = {},
): Promise<KubeObject> {
  const labels: Record<string, string> = { 'kubernetes.io/hostname': opts.hostname ?? name };
  if (opts.uid) labels['metal3.io/uuid'] = opts.uid;
  return w.create(R.Node, {
    metadata: { name, labels },
    spec: opts.providerID ? { providerID: opts.providerID } : {},
  });
}

export const msg = (name: string): MessageEnvelope => ({
  v: 1,
  function: 'resolveProviderID',
  cluster: 'management',
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'Metal3Machine',
  namespace: NS,
  name,
  reason: 'modified',
});

export async function getMachine(
  c: KubeClient,
  name: string,
): Promise<KubeObject & { spec: { providerID?: string }; status?: Record<string, any> }> {
  return (await c.get(R.Metal3Machine, NS, name)) as KubeObject & {
    spec: { providerID?: string };
    status?: Record<string, any>;
  };
}

export async function nodeProviderID(w: KubeClient, name: string): Promise<string | undefined> {
  return ((await w.get(R.Node, undefined, name))?.spec as { providerID?: string } | undefined)?.providerID;
}

export interface Write {
  server: 'mgmt' | 'workload';
  verb: string;
  resource: string;
  name?: string | undefined;
  status: number;
}

/** One timeline of the write requests both servers serve (for write-order assertions). */
export function recordWrites(env: Env): { writes: Write[]; reset(): void } {
  const writes: Write[] = [];
  const WRITE = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
  for (const [server, handle] of [
    ['mgmt', env.mgmt.server],
    ['workload', env.workload.server],
  ] as const) {
    const original = handle.log.record.bind(handle.log);
    handle.log.record = (e) => {
      if (WRITE.has(e.verb) && e.resource !== 'events')
        writes.push({ server, verb: e.verb, resource: e.resource, name: e.name, status: e.status });
      original(e);
    };
  }
  return { writes, reset: () => void writes.splice(0) };
}

/** Warning Events recorded for a machine. */
export async function warnings(
  c: KubeClient,
  machine: string,
): Promise<{ reason: string; message: string }[]> {
  const list = await c.list(R.Event, NS);
  return list.items
    .filter((e) => (e.involvedObject as { name?: string }).name === machine && e.type === 'Warning')
    .map((e) => ({ reason: e.reason as string, message: e.message as string }));
}
