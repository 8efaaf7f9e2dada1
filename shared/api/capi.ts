import { z } from 'zod';
import { LooseConditionSchema } from './conditions.ts';
import { ObjectMetaSchema, StringMapSchema } from './meta.ts';
import { parseObject } from './parse.ts';
import { LooseObjectReferenceSchema } from './refs.ts';

// Cluster API kinds (cluster.x-k8s.io/v1beta1, controlplane.cluster.x-k8s.io/v1beta1). Read, owned
// by CAPI: every object is passthrough. Fields CAPI requires but the seeds omit (Machine
// spec.clusterName) are optional here; readers fall back to the cluster-name label.

/** An int-or-string (maxSurge: 1 or "25%"). */
export const IntOrStringSchema = z.union([z.int(), z.string()]).meta({ 'x-kubernetes-int-or-string': true });

export const LabelSelectorSchema = z.lazy(() =>
  z.looseObject({
    matchLabels: StringMapSchema.optional(),
    matchExpressions: z
      .array(z.looseObject({ key: z.string(), operator: z.string(), values: z.array(z.string()).optional() }))
      .optional(),
  }),
);
export type LabelSelector = z.infer<typeof LabelSelectorSchema>;

const TemplateMeta = z.lazy(() =>
  z.looseObject({
    labels: StringMapSchema.optional(),
    annotations: StringMapSchema.optional(),
  }),
);

export const APIEndpointLooseSchema = z.lazy(() =>
  z.looseObject({
    host: z.string().optional(),
    port: z.int().optional(),
  }),
);

// ---- Cluster --------------------------------------------------------------------------------

const CidrBlocks = z.lazy(() => z.looseObject({ cidrBlocks: z.array(z.string()).optional() }));

export const ClusterSpecSchema = z.lazy(() =>
  z.looseObject({
    paused: z.boolean().optional(),
    infrastructureRef: LooseObjectReferenceSchema.optional(),
    controlPlaneRef: LooseObjectReferenceSchema.optional(),
    controlPlaneEndpoint: APIEndpointLooseSchema.optional(),
    clusterNetwork: z
      .looseObject({
        services: CidrBlocks.optional(),
        pods: CidrBlocks.optional(),
        serviceDomain: z.string().optional(),
        apiServerPort: z.int().optional(),
      })
      .optional(),
  }),
);
export const ClusterStatusSchema = z.lazy(() =>
  z.looseObject({
    infrastructureReady: z.boolean().optional(),
    controlPlaneReady: z.boolean().optional(),
    /** v1beta2's place for infrastructureReady. */
    initialization: z.looseObject({ infrastructureProvisioned: z.boolean().optional() }).optional(),
    conditions: z.array(LooseConditionSchema).optional(),
    phase: z.string().optional(),
  }),
);
export const ClusterSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('Cluster').optional(),
    metadata: ObjectMetaSchema,
    spec: ClusterSpecSchema.optional(),
    status: ClusterStatusSchema.optional(),
  }),
);
export type Cluster = z.infer<typeof ClusterSchema>;

// ---- Machine --------------------------------------------------------------------------------

export const BootstrapSchema = z.lazy(() =>
  z.looseObject({
    configRef: LooseObjectReferenceSchema.optional(),
    dataSecretName: z.string().optional(),
  }),
);
export const MachineSpecSchema = z.lazy(() =>
  z.looseObject({
    clusterName: z.string().optional(),
    bootstrap: BootstrapSchema.optional(),
    infrastructureRef: LooseObjectReferenceSchema.optional(),
    providerID: z.string().optional(),
    failureDomain: z.string().optional(),
    version: z.string().optional(),
    nodeDrainTimeout: z.string().optional(),
  }),
);
export type MachineSpec = z.infer<typeof MachineSpecSchema>;
export const MachineStatusSchema = z.lazy(() =>
  z.looseObject({
    nodeRef: LooseObjectReferenceSchema.optional(),
    phase: z.string().optional(),
    bootstrapReady: z.boolean().optional(),
    infrastructureReady: z.boolean().optional(),
    conditions: z.array(LooseConditionSchema).optional(),
  }),
);
export const MachineSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('Machine').optional(),
    metadata: ObjectMetaSchema,
    spec: MachineSpecSchema.optional(),
    status: MachineStatusSchema.optional(),
  }),
);
export type Machine = z.infer<typeof MachineSchema>;

export const MachineTemplateSpecSchema = z.lazy(() =>
  z.looseObject({
    metadata: TemplateMeta.optional(),
    spec: MachineSpecSchema.optional(),
  }),
);

const RollingUpdate = z.lazy(() =>
  z.looseObject({
    maxSurge: IntOrStringSchema.optional(),
    maxUnavailable: IntOrStringSchema.optional(),
  }),
);
const Strategy = z.lazy(() =>
  z.looseObject({ type: z.string().optional(), rollingUpdate: RollingUpdate.optional() }),
);

const MachineSetLikeSpec = {
  clusterName: z.string().optional(),
  replicas: z.int().min(0).optional(),
  selector: LabelSelectorSchema.optional(),
  template: MachineTemplateSpecSchema.optional(),
};
const ReplicaStatus = z.lazy(() =>
  z.looseObject({
    /** The label selector as a string (what the scale subresource answers). */
    selector: z.string().optional(),
    replicas: z.int().optional(),
    readyReplicas: z.int().optional(),
    phase: z.string().optional(),
    conditions: z.array(LooseConditionSchema).optional(),
  }),
);

export const MachineSetSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('MachineSet').optional(),
    metadata: ObjectMetaSchema,
    spec: z.looseObject(MachineSetLikeSpec).optional(),
    status: ReplicaStatus.optional(),
  }),
);
export type MachineSet = z.infer<typeof MachineSetSchema>;

export const MachineDeploymentSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('MachineDeployment').optional(),
    metadata: ObjectMetaSchema,
    spec: z.looseObject({ ...MachineSetLikeSpec, strategy: Strategy.optional() }).optional(),
    status: ReplicaStatus.optional(),
  }),
);
export type MachineDeployment = z.infer<typeof MachineDeploymentSchema>;

// ---- KubeadmControlPlane -----------------------------------------------------------------------

export const KubeadmControlPlaneSpecSchema = z.lazy(() =>
  z.looseObject({
    replicas: z.int().min(0).optional(),
    version: z.string().optional(),
    machineTemplate: z
      .looseObject({
        metadata: TemplateMeta.optional(),
        infrastructureRef: LooseObjectReferenceSchema.optional(),
        /** v1beta2 moved infrastructureRef here. */
        spec: z.looseObject({ infrastructureRef: LooseObjectReferenceSchema.optional() }).optional(),
        nodeDrainTimeout: z.string().optional(),
      })
      .optional(),
    /** CABPK's configuration, opaque to us. */
    kubeadmConfigSpec: z.record(z.string(), z.unknown()).optional(),
    rolloutAfter: z.string().optional(),
    rolloutStrategy: Strategy.optional(),
  }),
);
export const KubeadmControlPlaneSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('KubeadmControlPlane').optional(),
    metadata: ObjectMetaSchema,
    spec: KubeadmControlPlaneSpecSchema.optional(),
    status: ReplicaStatus.optional(),
  }),
);
export type KubeadmControlPlane = z.infer<typeof KubeadmControlPlaneSchema>;

export function parseCluster(obj: unknown): Cluster {
  return parseObject(ClusterSchema, 'Cluster', obj);
}
export function parseMachine(obj: unknown): Machine {
  return parseObject(MachineSchema, 'Machine', obj);
}
export function parseMachineSet(obj: unknown): MachineSet {
  return parseObject(MachineSetSchema, 'MachineSet', obj);
}
export function parseMachineDeployment(obj: unknown): MachineDeployment {
  return parseObject(MachineDeploymentSchema, 'MachineDeployment', obj);
}
export function parseKubeadmControlPlane(obj: unknown): KubeadmControlPlane {
  return parseObject(KubeadmControlPlaneSchema, 'KubeadmControlPlane', obj);
}
