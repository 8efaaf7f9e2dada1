/**
 * CAPI simulator (test and dev only): pure builders and decisions for the Cluster API core glue —
 * the Machine + Metal3Machine pairs a KubeadmControlPlane / MachineDeployment stamps out of its
 * Metal3MachineTemplate, the bootstrap data Secret, and which machines a scale-down removes.
 */
import { randomBytes } from 'node:crypto';
import { apiVersionOf, R } from '../../../shared/api/resources.ts';
import type { KubeObject, OwnerReference } from '../../../shared/kube/types.ts';

export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
export const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';
export const CONTROL_PLANE_NAME_LABEL = 'cluster.x-k8s.io/control-plane-name';
export const DEPLOYMENT_NAME_LABEL = 'cluster.x-k8s.io/deployment-name';
export const SET_NAME_LABEL = 'cluster.x-k8s.io/set-name';
export const MACHINE_FINALIZER = 'machine.cluster.x-k8s.io';
export const CLONED_FROM_NAME = 'cluster.x-k8s.io/cloned-from-name';
export const CLONED_FROM_GROUPKIND = 'cluster.x-k8s.io/cloned-from-groupkind';

const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
export function randomSuffix(n = 5): string {
  const bytes = randomBytes(n);
  return [...bytes].map((b) => ALPHABET[b % ALPHABET.length]).join('');
}

export const ownerRefTo = (o: KubeObject, controller = true): OwnerReference => ({
  apiVersion: o.apiVersion!,
  kind: o.kind!,
  name: o.metadata.name!,
  uid: o.metadata.uid!,
  ...(controller ? { controller: true, blockOwnerDeletion: true } : {}),
});

export interface MachineOwner {
  /** The KubeadmControlPlane, or the MachineSet (a MachineDeployment's or one of its own). */
  owner: KubeObject;
  kind: 'KubeadmControlPlane' | 'MachineSet';
  /** KCP or MachineSet name. */
  name: string;
  clusterName: string;
  version?: string | undefined;
  /** Labels every machine of this owner carries (and is found by). */
  labels: Record<string, string>;
  /** The Metal3MachineTemplate name. */
  templateName: string;
  /** Machine template metadata labels (MachineSet: spec.template.metadata.labels). */
  templateLabels?: Record<string, string> | undefined;
}

/**
 * The labels that identify a KCP's / MachineSet's machines (a MachineDeployment's MachineSet adds
 * the deployment's name, which node reuse reads).
 */
export function ownerLabels(
  kind: MachineOwner['kind'],
  name: string,
  clusterName: string,
  deploymentName?: string,
): Record<string, string> {
  return kind === 'KubeadmControlPlane'
    ? { [CLUSTER_NAME_LABEL]: clusterName, [CONTROL_PLANE_LABEL]: '', [CONTROL_PLANE_NAME_LABEL]: name }
    : {
        [CLUSTER_NAME_LABEL]: clusterName,
        [SET_NAME_LABEL]: name,
        ...(deploymentName ? { [DEPLOYMENT_NAME_LABEL]: deploymentName } : {}),
      };
}

/**
 * A new Machine for an owner (its infrastructureRef names a Metal3Machine of the same name; its
 * bootstrap, when given, a KubeadmConfig or a data Secret).
 */
export function newMachine(
  o: MachineOwner,
  name: string,
  bootstrap: Record<string, unknown> = {},
): KubeObject {
  const ns = o.owner.metadata.namespace!;
  return {
    apiVersion: apiVersionOf(R.Machine),
    kind: 'Machine',
    metadata: {
      name,
      namespace: ns,
      labels: { ...(o.templateLabels ?? {}), ...o.labels },
      ownerReferences: [ownerRefTo(o.owner)],
      finalizers: [MACHINE_FINALIZER],
    },
    spec: {
      clusterName: o.clusterName,
      bootstrap,
      infrastructureRef: {
        apiVersion: apiVersionOf(R.Metal3Machine),
        kind: 'Metal3Machine',
        name,
        namespace: ns,
      },
      ...(o.version ? { version: o.version } : {}),
    },
  };
}

/** The KubeadmConfig an owner makes for one of its Machines (named after it), owned by the owner until the Machine adopts it. */
export function newKubeadmConfig(o: MachineOwner, name: string, spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: apiVersionOf(R.KubeadmConfig),
    kind: 'KubeadmConfig',
    metadata: {
      name,
      namespace: o.owner.metadata.namespace!,
      labels: { [CLUSTER_NAME_LABEL]: o.clusterName },
      ownerReferences: [ownerRefTo(o.owner)],
    },
    spec,
  };
}

/** The Metal3Machine cloned from the template (cloned-from annotations, template metadata, owner Machine). */
export function cloneMetal3Machine(template: KubeObject, machine: KubeObject): KubeObject {
  const t = (
    template.spec as {
      template?: {
        metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
        spec?: unknown;
      };
    }
  ).template;
  return {
    apiVersion: apiVersionOf(R.Metal3Machine),
    kind: 'Metal3Machine',
    metadata: {
      name: machine.metadata.name!,
      namespace: machine.metadata.namespace!,
      labels: { ...(t?.metadata?.labels ?? {}), ...(machine.metadata.labels ?? {}) },
      annotations: {
        ...(t?.metadata?.annotations ?? {}),
        [CLONED_FROM_NAME]: template.metadata.name!,
        [CLONED_FROM_GROUPKIND]: `${R.Metal3MachineTemplate.kind}.${R.Metal3MachineTemplate.group}`,
      },
      ownerReferences: [ownerRefTo(machine)],
    },
    spec: structuredClone(t?.spec ?? {}),
  };
}

/** The bootstrap data Secret CABPK would write: key `value` (cloud-config), `format`. */
export function bootstrapSecret(machine: KubeObject, clusterName: string): KubeObject {
  const name = machine.metadata.name!;
  const cloudConfig = `#cloud-config\n# simulated bootstrap data for Machine ${machine.metadata.namespace}/${name}\nruncmd:\n  - echo kubeadm join (simulated)\n`;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: `${name}-bootstrap`,
      namespace: machine.metadata.namespace!,
      labels: { [CLUSTER_NAME_LABEL]: clusterName },
      ownerReferences: [ownerRefTo(machine)],
    },
    type: 'cluster.x-k8s.io/secret',
    data: {
      value: Buffer.from(cloudConfig).toString('base64'),
      format: Buffer.from('cloud-config').toString('base64'),
    },
  };
}

/**
 * Scale decision: how many machines to create, and which to delete (newest first, never one
 * already deleting), for `replicas` desired among the owner's machines.
 */
export function scalePlan(
  machines: readonly KubeObject[],
  replicas: number,
): { create: number; remove: KubeObject[] } {
  const live = machines.filter((m) => !m.metadata.deletionTimestamp);
  if (live.length < replicas) return { create: replicas - live.length, remove: [] };
  const newestFirst = [...live].sort((a, b) => {
    const ta = a.metadata.creationTimestamp ?? '';
    const tb = b.metadata.creationTimestamp ?? '';
    return ta !== tb ? (ta < tb ? 1 : -1) : a.metadata.name! < b.metadata.name! ? 1 : -1;
  });
  return { create: 0, remove: newestFirst.slice(0, live.length - replicas) };
}
