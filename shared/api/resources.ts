/**
 * Typed resource handles: a kind's names (kinds.ts) with its TypeScript type and zod schema, so the
 * kube client returns parsed objects (`client.get(R.Metal3Machine, …)` is a `Metal3Machine`) and
 * a schema failure is an InvalidObjectError naming the object, never an object of the wrong shape.
 * Every schema is loose (unknown fields pass through) and adds nothing (no defaults, no
 * transforms): an object written back after a read-modify-write is what was read plus the change.
 *
 * `view(kind, schema)` is the same kind read through another schema: a narrower one where a path
 * must act on objects the kind's full schema would reject (a deleting machine is released whatever
 * its spec says; a malformed neighbour must not stop an allocation), or `KubeObjectSchema` where
 * only the envelope matters (the relay).
 */
import type { z } from 'zod';
import { BareMetalHostSchema } from './baremetalhost.ts';
import {
  ClusterSchema,
  KubeadmControlPlaneSchema,
  MachineDeploymentSchema,
  MachineSchema,
  MachineSetSchema,
} from './capi.ts';
import {
  ConfigMapSchema,
  CustomResourceDefinitionSchema,
  EventSchema,
  LeaseSchema,
  NamespaceSchema,
  NodeSchema,
  PodSchema,
  SecretSchema,
} from './core.ts';
import { IPAddressSchema, IPClaimSchema, IPPoolSchema } from './ipam.ts';
import { K, type ResourceType } from './kinds.ts';
import { KubeadmConfigSchema, KubeadmConfigTemplateSchema } from './kubeadm.ts';
import { type KubeObject, KubeObjectSchema } from './meta.ts';
import { Metal3ClusterSchema } from './metal3cluster.ts';
import { Metal3DataClaimSchema, Metal3DataSchema } from './metal3data.ts';
import { Metal3DataTemplateSchema } from './metal3datatemplate.ts';
import { Metal3MachineSchema } from './metal3machine.ts';
import { Metal3MachineTemplateSchema } from './metal3machinetemplate.ts';
import {
  MachineConfigTemplateSchema,
  NodeEnvironmentSchema,
  OSImageSchema,
  SSHKeySchema,
} from './vmetal/catalogue.ts';
import { NodeClaimSchema } from './vmetal/nodeclaim.ts';
import { NodeProviderSchema } from './vmetal/nodeprovider.ts';
import { NodeTypeSchema } from './vmetal/nodetype.ts';

export * from './kinds.ts';

/** A kind and the schema its objects are read (and written) through. */
export interface Resource<T extends KubeObject = KubeObject> extends ResourceType {
  readonly schema: z.ZodType<T>;
}

/** The kind `t` read through `schema` (a view of it: see above). */
export function view<T extends KubeObject>(t: ResourceType, schema: z.ZodType<T>): Resource<T> {
  return Object.freeze({
    group: t.group,
    version: t.version,
    kind: t.kind,
    plural: t.plural,
    namespaced: t.namespaced,
    statusSubresource: t.statusSubresource,
    schema,
  });
}

/** The kind `t` with only its envelope typed (metadata), the body passed through unparsed. */
export const envelopeOf = (t: ResourceType): Resource<KubeObject> => view(t, KubeObjectSchema);

export const R = {
  Metal3Machine: view(K.Metal3Machine, Metal3MachineSchema),
  Metal3MachineTemplate: view(K.Metal3MachineTemplate, Metal3MachineTemplateSchema),
  Metal3Cluster: view(K.Metal3Cluster, Metal3ClusterSchema),
  Metal3DataTemplate: view(K.Metal3DataTemplate, Metal3DataTemplateSchema),
  Metal3Data: view(K.Metal3Data, Metal3DataSchema),
  Metal3DataClaim: view(K.Metal3DataClaim, Metal3DataClaimSchema),
  BareMetalHost: view(K.BareMetalHost, BareMetalHostSchema),
  IPPool: view(K.IPPool, IPPoolSchema),
  IPClaim: view(K.IPClaim, IPClaimSchema),
  IPAddress: view(K.IPAddress, IPAddressSchema),
  Cluster: view(K.Cluster, ClusterSchema),
  Machine: view(K.Machine, MachineSchema),
  MachineSet: view(K.MachineSet, MachineSetSchema),
  MachineDeployment: view(K.MachineDeployment, MachineDeploymentSchema),
  KubeadmControlPlane: view(K.KubeadmControlPlane, KubeadmControlPlaneSchema),
  KubeadmConfig: view(K.KubeadmConfig, KubeadmConfigSchema),
  KubeadmConfigTemplate: view(K.KubeadmConfigTemplate, KubeadmConfigTemplateSchema),
  NodeProvider: view(K.NodeProvider, NodeProviderSchema),
  NodeType: view(K.NodeType, NodeTypeSchema),
  NodeClaim: view(K.NodeClaim, NodeClaimSchema),
  NodeEnvironment: view(K.NodeEnvironment, NodeEnvironmentSchema),
  OSImage: view(K.OSImage, OSImageSchema),
  SSHKey: view(K.SSHKey, SSHKeySchema),
  MachineConfigTemplate: view(K.MachineConfigTemplate, MachineConfigTemplateSchema),
  Namespace: view(K.Namespace, NamespaceSchema),
  Secret: view(K.Secret, SecretSchema),
  ConfigMap: view(K.ConfigMap, ConfigMapSchema),
  Node: view(K.Node, NodeSchema),
  Pod: view(K.Pod, PodSchema),
  Event: view(K.Event, EventSchema),
  Lease: view(K.Lease, LeaseSchema),
  CustomResourceDefinition: view(K.CustomResourceDefinition, CustomResourceDefinitionSchema),
} as const satisfies Record<keyof typeof K, Resource<KubeObject>>;
