/**
 * The Cluster API side of a Metal3Machine: its owner Machine, its Cluster, pause, and the
 * KubeadmControlPlane / MachineDeployment that owns the Machine (node reuse).
 */
import type { Cluster, Machine } from '../api/capi.ts';
import type { Metal3Cluster } from '../api/metal3cluster.ts';
import { CAPI_GROUP, CONTROLPLANE_GROUP, R } from '../api/resources.ts';
import {
  CAPI_PAUSED_ANNOTATION,
  CLONED_FROM_GROUPKIND_ANNOTATION,
  CLONED_FROM_NAME_ANNOTATION,
  CLUSTER_NAME_LABEL,
  DEPLOYMENT_NAME_LABEL,
} from '../api/wellknown.ts';
import type { KubeClient } from '../kube/client.ts';
import type { KubeObject, OwnerReference } from '../kube/types.ts';
import type { ReconcileContext } from '../reconcile/context.ts';

/** The value of the cloned-from-groupkind annotation on a machine cloned from a Metal3MachineTemplate. */
export const M3MT_GROUPKIND = 'Metal3MachineTemplate.infrastructure.cluster.x-k8s.io';

const groupOf = (apiVersion: string | undefined): string =>
  apiVersion?.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';

export function ownerOf(obj: KubeObject, kind: string, group: string): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((o) => o.kind === kind && groupOf(o.apiVersion) === group);
}

/** The owner Machine's reference (set by the CAPI Machine controller from spec.infrastructureRef). */
export const machineOwnerRef = (m3m: KubeObject): OwnerReference | undefined =>
  ownerOf(m3m, 'Machine', CAPI_GROUP);

export async function getMachine(client: KubeClient, m3m: KubeObject): Promise<Machine | undefined> {
  const ref = machineOwnerRef(m3m);
  if (!ref) return undefined;
  const machine = await client.get(R.Machine, m3m.metadata.namespace, ref.name);
  if (!machine || (ref.uid && machine.metadata.uid && machine.metadata.uid !== ref.uid)) return undefined;
  return machine;
}

export const clusterNameOf = (machine: Machine | undefined, m3m: KubeObject): string | undefined =>
  machine?.spec?.clusterName ||
  machine?.metadata.labels?.[CLUSTER_NAME_LABEL] ||
  m3m.metadata.labels?.[CLUSTER_NAME_LABEL];

/** What a Cluster read needs: the client, and the function's shared reads where the runtime gives them. */
type ClusterReader = Pick<ReconcileContext, 'client' | 'reads'>;

/**
 * The Cluster `name`, as every function reads it: through the function's shared reads (a GET in
 * flight joined, an answer up to `sharedReadMaxAgeMs` old reused) when the answer lets the pass
 * go on (`proceeds`), else one GET: a pass stops and waits on a fresh answer only.
 */
export async function getCluster(
  ctx: ClusterReader,
  ns: string,
  name: string | undefined,
  proceeds: (c: Cluster | undefined) => boolean,
): Promise<Cluster | undefined> {
  if (!name) return undefined;
  return ctx.reads ? ctx.reads.cluster(ns, name, proceeds) : ctx.client.get(R.Cluster, ns, name);
}

/** The Metal3Cluster `name` (a Cluster's infrastructureRef), read like the Cluster; absent is read fresh. */
export async function getMetal3Cluster(
  ctx: ClusterReader,
  ns: string,
  name: string,
): Promise<Metal3Cluster | undefined> {
  return ctx.reads
    ? ctx.reads.metal3Cluster(ns, name, (m) => m !== undefined)
    : ctx.client.get(R.Metal3Cluster, ns, name);
}

const hasPausedAnnotation = (o: KubeObject | undefined): boolean =>
  Object.hasOwn(o?.metadata.annotations ?? {}, CAPI_PAUSED_ANNOTATION);

/**
 * Cluster API pause (`clusterctl move`, maintenance): the Cluster's `spec.paused`, or the annotation
 * `cluster.x-k8s.io/paused` on the Cluster or on the object. Every function leaves a paused
 * object alone, its deletion included, until it is unpaused.
 */
export const isPaused = (cluster: Cluster | undefined, obj: KubeObject): boolean =>
  cluster?.spec?.paused === true || hasPausedAnnotation(cluster) || hasPausedAnnotation(obj);

/**
 * Whether `obj` is paused: its own annotation (no read), else its Cluster `clusterName` (one GET);
 * an object naming no Cluster, or a Cluster that does not exist, is paused only by its annotation.
 */
export async function pausedObject(
  ctx: ClusterReader,
  obj: KubeObject,
  clusterName: string | undefined,
): Promise<boolean> {
  if (hasPausedAnnotation(obj)) return true;
  if (!clusterName) return false;
  const proceeds = (c: Cluster | undefined): boolean => !isPaused(c, obj);
  return isPaused(await getCluster(ctx, obj.metadata.namespace ?? '', clusterName, proceeds), obj);
}

/** The Cluster an object of the data path names: its cluster-name label, else its `spec.clusterName`. */
export const clusterLabelOrSpec = (obj: KubeObject & { spec?: unknown }): string | undefined => {
  const label = obj.metadata.labels?.[CLUSTER_NAME_LABEL];
  if (label) return label;
  const spec = obj.spec;
  const fromSpec =
    spec && typeof spec === 'object' ? (spec as { clusterName?: unknown }).clusterName : undefined;
  return typeof fromSpec === 'string' && fromSpec ? fromSpec : undefined;
};

/** Cluster infrastructure ready: v1beta1 status.infrastructureReady, v1beta2 initialization, or the condition. */
export function clusterInfrastructureReady(cluster: Cluster): boolean {
  const st = cluster.status ?? {};
  if (st.infrastructureReady === true) return true;
  if (st.initialization?.infrastructureProvisioned === true) return true;
  return (st.conditions ?? []).some((c) => c.type === 'InfrastructureReady' && c.status === 'True');
}

export type ReuseOwner = { kind: 'KubeadmControlPlane' | 'MachineDeployment'; name: string };

/**
 * The KubeadmControlPlane (owner of the Machine in the control-plane group) or MachineDeployment
 * (the Machine's deployment-name label, else MachineSet -> MachineDeployment owner) of a Machine.
 */
export async function reuseOwnerOf(client: KubeClient, machine: Machine): Promise<ReuseOwner | undefined> {
  const cp = machine.metadata.ownerReferences?.find((o) => groupOf(o.apiVersion) === CONTROLPLANE_GROUP);
  if (cp) return { kind: 'KubeadmControlPlane', name: cp.name };
  const ms = machine.metadata.ownerReferences?.find(
    (o) => o.kind === 'MachineSet' && groupOf(o.apiVersion) === CAPI_GROUP,
  );
  if (!ms) return undefined;
  const label = machine.metadata.labels?.[DEPLOYMENT_NAME_LABEL];
  if (label) return { kind: 'MachineDeployment', name: label };
  const set = await client.get(R.MachineSet, machine.metadata.namespace, ms.name);
  if (!set || (ms.uid && set.metadata.uid !== ms.uid)) return undefined;
  const md = ownerOf(set, 'MachineDeployment', CAPI_GROUP);
  return md ? { kind: 'MachineDeployment', name: md.name } : undefined;
}

/**
 * The Metal3MachineTemplate a Machine's owner stamps machines from: MachineSet
 * `.spec.template.spec.infrastructureRef` (workers) or the control plane's
 * `.spec.machineTemplate.infrastructureRef`; falls back to the machine's cloned-from annotation.
 */
export async function machineTemplateNameOf(
  client: KubeClient,
  machine: Machine | undefined,
  m3m: KubeObject,
): Promise<string | undefined> {
  if (machine) {
    const ns = machine.metadata.namespace;
    const cp = machine.metadata.ownerReferences?.find((o) => groupOf(o.apiVersion) === CONTROLPLANE_GROUP);
    if (cp) {
      const kcp = await client.get(R.KubeadmControlPlane, ns, cp.name);
      const ref =
        kcp?.spec?.machineTemplate?.infrastructureRef ?? kcp?.spec?.machineTemplate?.spec?.infrastructureRef;
      if (ref?.kind === 'Metal3MachineTemplate' && ref.name) return ref.name;
    }
    const ms = machine.metadata.ownerReferences?.find(
      (o) => o.kind === 'MachineSet' && groupOf(o.apiVersion) === CAPI_GROUP,
    );
    if (ms) {
      const set = await client.get(R.MachineSet, ns, ms.name);
      const ref = set?.spec?.template?.spec?.infrastructureRef;
      if (ref?.kind === 'Metal3MachineTemplate' && ref.name) return ref.name;
    }
  }
  const ann = m3m.metadata.annotations ?? {};
  if (ann[CLONED_FROM_NAME_ANNOTATION] && ann[CLONED_FROM_GROUPKIND_ANNOTATION] === M3MT_GROUPKIND)
    return ann[CLONED_FROM_NAME_ANNOTATION];
  return undefined;
}
