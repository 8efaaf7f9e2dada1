import { z } from 'zod';
import { ConditionsSchema } from './conditions.ts';
import { ObjectMetaSchema, StringMapSchema, TimestampSchema } from './meta.ts';
import { parseObject } from './parse.ts';

export const APIEndpointSchema = z.lazy(() =>
  z.looseObject({
    host: z.string(),
    port: z.int().min(0).max(65535),
  }),
);
export type APIEndpoint = z.infer<typeof APIEndpointSchema>;

/** v1beta1 failure domains: a map name -> spec. */
export const FailureDomainsSchema = z.lazy(() =>
  z.record(
    z.string(),
    z.looseObject({ controlPlane: z.boolean().optional(), attributes: StringMapSchema.optional() }),
  ),
);
export type FailureDomains = z.infer<typeof FailureDomainsSchema>;

export const Metal3ClusterSpecSchema = z.lazy(() =>
  z.looseObject({
    controlPlaneEndpoint: APIEndpointSchema.optional(),
    /** v1beta1: true = no cloud provider, so we set node providerIDs. */
    noCloudProvider: z.boolean().optional(),
    cloudProviderEnabled: z.boolean().optional(),
    failureDomains: FailureDomainsSchema.optional(),
  }),
);
export type Metal3ClusterSpec = z.infer<typeof Metal3ClusterSpecSchema>;

export const Metal3ClusterStatusSchema = z.lazy(() =>
  z.looseObject({
    ready: z.boolean().optional(),
    failureReason: z.string().optional(),
    failureMessage: z.string().optional(),
    conditions: ConditionsSchema.optional(),
    failureDomains: FailureDomainsSchema.optional(),
    lastUpdated: TimestampSchema.optional(),
  }),
);
export type Metal3ClusterStatus = z.infer<typeof Metal3ClusterStatusSchema>;

export const Metal3ClusterSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('Metal3Cluster').optional(),
    metadata: ObjectMetaSchema,
    spec: Metal3ClusterSpecSchema,
    status: Metal3ClusterStatusSchema.optional(),
  }),
);
export type Metal3Cluster = z.infer<typeof Metal3ClusterSchema>;

export function parseMetal3Cluster(obj: unknown): Metal3Cluster {
  return parseObject(Metal3ClusterSchema, 'Metal3Cluster', obj);
}
