import { z } from 'zod';
import { LooseConditionSchema } from './conditions.ts';
import { ObjectMetaSchema, StringMapSchema } from './meta.ts';

// Built-in kinds (core/v1, coordination.k8s.io, apiextensions.k8s.io): read or written, never
// owned by us. Loose at every level: the fields we use are typed, the rest passes through. No CRD
// is generated from these.

const envelope = <K extends string>(kind: K) => ({
  apiVersion: z.string().optional(),
  kind: z.literal(kind).optional(),
  metadata: ObjectMetaSchema,
});

export const SecretSchema = z.lazy(() =>
  z.looseObject({
    ...envelope('Secret'),
    type: z.string().optional(),
    /** base64 values. */
    data: StringMapSchema.optional(),
    stringData: StringMapSchema.optional(),
    immutable: z.boolean().optional(),
  }),
);
export type Secret = z.infer<typeof SecretSchema>;

export const ConfigMapSchema = z.lazy(() =>
  z.looseObject({
    ...envelope('ConfigMap'),
    data: StringMapSchema.optional(),
    binaryData: StringMapSchema.optional(),
  }),
);
export type ConfigMap = z.infer<typeof ConfigMapSchema>;

export const NodeAddressSchema = z.lazy(() => z.looseObject({ type: z.string(), address: z.string() }));

export const NodeSchema = z.lazy(() =>
  z.looseObject({
    ...envelope('Node'),
    spec: z.looseObject({ providerID: z.string().optional() }).optional(),
    status: z
      .looseObject({
        addresses: z.array(NodeAddressSchema).optional(),
        conditions: z.array(LooseConditionSchema).optional(),
      })
      .optional(),
  }),
);
export type Node = z.infer<typeof NodeSchema>;

/** What a drain reads of a Pod: where it runs, its controller (ownerReferences), its phase. */
export const PodSchema = z.lazy(() =>
  z.looseObject({
    ...envelope('Pod'),
    spec: z.looseObject({ nodeName: z.string().optional() }).optional(),
    status: z.looseObject({ phase: z.string().optional() }).optional(),
  }),
);
export type Pod = z.infer<typeof PodSchema>;

export const EventSchema = z.lazy(() =>
  z.looseObject({
    ...envelope('Event'),
    involvedObject: z
      .looseObject({
        apiVersion: z.string().optional(),
        kind: z.string().optional(),
        name: z.string().optional(),
        namespace: z.string().optional(),
        uid: z.string().optional(),
        resourceVersion: z.string().optional(),
      })
      .optional(),
    type: z.string().optional(),
    reason: z.string().optional(),
    message: z.string().optional(),
    source: z.looseObject({ component: z.string().optional() }).optional(),
    reportingComponent: z.string().optional(),
    reportingInstance: z.string().optional(),
    firstTimestamp: z.string().optional(),
    lastTimestamp: z.string().optional(),
    count: z.int().optional(),
  }),
);
export type Event = z.infer<typeof EventSchema>;

export const LeaseSchema = z.lazy(() =>
  z.looseObject({
    ...envelope('Lease'),
    spec: z
      .looseObject({
        holderIdentity: z.string().optional(),
        leaseDurationSeconds: z.int().optional(),
        acquireTime: z.string().optional(),
        renewTime: z.string().optional(),
        leaseTransitions: z.int().optional(),
      })
      .optional(),
  }),
);
export type Lease = z.infer<typeof LeaseSchema>;

export const NamespaceSchema = z.lazy(() =>
  z.looseObject({
    ...envelope('Namespace'),
    status: z.looseObject({ phase: z.string().optional() }).optional(),
  }),
);
export type Namespace = z.infer<typeof NamespaceSchema>;

export const CustomResourceDefinitionSchema = z.lazy(() =>
  z.looseObject({
    ...envelope('CustomResourceDefinition'),
    spec: z
      .looseObject({
        group: z.string().optional(),
        names: z.looseObject({ kind: z.string().optional(), plural: z.string().optional() }).optional(),
        versions: z.array(z.looseObject({ name: z.string(), served: z.boolean().optional() })).optional(),
      })
      .optional(),
  }),
);
export type CustomResourceDefinition = z.infer<typeof CustomResourceDefinitionSchema>;
