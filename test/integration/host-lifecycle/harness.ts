/**
 * Host-lifecycle test setup: a reconcile context on the embedded API server, builders for a Cluster,
 * Machines (with bootstrap data) and Metal3Machines owned by them, and drivers that play the relay's
 * part by calling the cores directly.
 */
import type { MessageEnvelope } from '../../../events/envelope.ts';
import { reconcile as deprovisionCore } from '../../../functions/deprovision/core.ts';
import { reconcile as selectHostCore } from '../../../functions/select-host/core.ts';
import { apiVersionOf, envelopeOf, R, type Resource } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { createEventRecorder } from '../../../shared/observability/events.ts';
import { silentLogger } from '../../../shared/observability/logger.ts';
import {
  DEFAULT_CONFIG,
  type ProductConfig,
  type ReconcileContext,
} from '../../../shared/reconcile/context.ts';
import type { ReconcileResult } from '../../../shared/reconcile/result.ts';

export const NS = 'metal3';
export const CLUSTER = 'cluster';

export function makeCtx(client: KubeClient, config: Partial<ProductConfig> = {}): ReconcileContext {
  return {
    client,
    workloadClient: async () => {
      throw new Error('no workload cluster in these tests');
    },
    events: createEventRecorder(client, 'metal3fn-test'),
    log: silentLogger,
    config: { ...DEFAULT_CONFIG, ...config },
    now: () => new Date(),
  };
}

export function msg(fn: MessageEnvelope['function'], t: Resource, name: string, ns = NS): MessageEnvelope {
  return {
    v: 1,
    function: fn,
    cluster: 'management',
    apiVersion: apiVersionOf(t),
    kind: t.kind,
    namespace: ns,
    name,
    reason: 'modified',
  };
}

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

/** Polls `check` (re-reading API state) until it returns a value; for tests only. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as T;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const hostState = (h: KubeObject | undefined): string =>
  String((h?.status as { provisioning?: { state?: string } } | undefined)?.provisioning?.state ?? '');

/** Runs `fn` over `items` with `workers` concurrent workers. */
export async function pool<T>(
  items: readonly T[],
  workers: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(workers, items.length) }, async () => {
      for (;;) {
        const i = next++;
        if (i >= items.length) return;
        await fn(items[i]!);
      }
    }),
  );
}
