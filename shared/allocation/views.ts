/**
 * The allocation and release paths read their neighbours through these views of the data kinds
 * (shared/api/resources.ts `view`), not the kinds' full schemas: every field optional, no
 * refinement. A malformed neighbour (a claim whose template ref names another namespace, a
 * Metal3Data without a claim) must not stop another claim's allocation, yet every Metal3Data with
 * an index still holds it; and a deleting object is released whatever its spec says. A full
 * object (a parsed Metal3Data) is also one of these: the views only widen.
 */
import { z } from 'zod';
import { ObjectMetaSchema, StringMapSchema } from '../api/meta.ts';
import { K, view } from '../api/resources.ts';

const Ref = z.looseObject({ name: z.string().optional(), namespace: z.string().optional() });
const envelope = {
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
};

export const DataViewSchema = z.looseObject({
  ...envelope,
  spec: z
    .looseObject({
      index: z.int().optional(),
      templateReference: z.string().optional(),
      claim: Ref.optional(),
      template: Ref.optional(),
      metaData: Ref.optional(),
      networkData: Ref.optional(),
    })
    .optional(),
  status: z
    .looseObject({
      ready: z.boolean().optional(),
      error: z.boolean().optional(),
      errorMessage: z.string().optional(),
    })
    .optional(),
});
export type Metal3DataView = z.infer<typeof DataViewSchema>;

export const DataClaimViewSchema = z.looseObject({
  ...envelope,
  spec: z.looseObject({ template: Ref.optional() }).optional(),
  status: z.looseObject({ renderedData: Ref.optional(), errorMessage: z.string().optional() }).optional(),
});
export type DataClaimView = z.infer<typeof DataClaimViewSchema>;

/** A template or pool as its allocations read and write it: its links and its status maps. */
const AllocationStatus = z.looseObject({
  indexes: StringMapSchema.optional(),
  dataNames: StringMapSchema.optional(),
  allocating: StringMapSchema.optional(),
  lastUpdated: z.string().optional(),
});
export const TemplateViewSchema = z.looseObject({
  ...envelope,
  spec: z.looseObject({ templateReference: z.string().optional() }).optional(),
  status: AllocationStatus.optional(),
});
export type TemplateView = z.infer<typeof TemplateViewSchema>;

export const PoolViewSchema = z.looseObject({
  ...envelope,
  status: AllocationStatus.optional(),
});
export type PoolView = z.infer<typeof PoolViewSchema>;

export const IPClaimViewSchema = z.looseObject({
  ...envelope,
  spec: z.looseObject({ pool: Ref.optional() }).optional(),
  status: z.looseObject({ address: Ref.optional(), errorMessage: z.string().optional() }).optional(),
});
export type IPClaimView = z.infer<typeof IPClaimViewSchema>;

export const IPAddressViewSchema = z.looseObject({
  ...envelope,
  spec: z
    .looseObject({
      address: z.string().optional(),
      prefix: z.int().optional(),
      gateway: z.string().optional(),
      dnsServers: z.array(z.string()).optional(),
      pool: Ref.optional(),
      claim: Ref.optional(),
    })
    .optional(),
});
export type IPAddressView = z.infer<typeof IPAddressViewSchema>;

export const V = {
  Metal3Data: view(K.Metal3Data, DataViewSchema),
  Metal3DataClaim: view(K.Metal3DataClaim, DataClaimViewSchema),
  Metal3DataTemplate: view(K.Metal3DataTemplate, TemplateViewSchema),
  IPPool: view(K.IPPool, PoolViewSchema),
  IPClaim: view(K.IPClaim, IPClaimViewSchema),
  IPAddress: view(K.IPAddress, IPAddressViewSchema),
};
