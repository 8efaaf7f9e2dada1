/**
 * NodeProvider (vmetal.metal3fn.io/v1alpha1, cluster-scoped): one control-plane cluster's Metal3
 * hosts and the NodeTypes that group them (issue 19, ADR 018). Every field vCluster Platform
 * documents is here so a user's YAML applies with only the apiVersion changed; the ones we do not
 * act on (`deploy`, `neutronEnabled`, `netris`) give a NotSupported condition naming them.
 */
import { z } from 'zod';
import { LabelSelectorSchema } from '../capi.ts';
import { ObjectMetaSchema, StringMapSchema } from '../meta.ts';
import { parseObject } from '../parse.ts';
import { ResourceListSchema, vmetalStatusFields } from './common.ts';

/** A Helm-deployed component of `deploy` (accepted, not acted on). */
const DeploymentSchema = z.lazy(() =>
  z.looseObject({
    enabled: z.boolean().optional(),
    chartRepo: z.string().optional(),
    chart: z.string().optional(),
    version: z.string().optional(),
    helmValues: z.string().optional(),
  }),
);

/** What a NodeType is, written inline in a provider or as the NodeType's spec. */
export const nodeTypeSpecFields = {
  providerRef: z.string().optional().describe('NodeProvider of this type'),
  zone: z.string().optional().describe('Zone of the type (accepted, not acted on)'),
  region: z.string().optional().describe('Region of the type (accepted, not acted on)'),
  displayName: z.string().optional(),
  properties: StringMapSchema.optional().describe('Properties merged into every claim of this type'),
  resources: ResourceListSchema.optional().describe('Resources of one node (cpu, memory checked on hosts)'),
  overhead: z.looseObject({ kubeReserved: ResourceListSchema.optional() }).optional(),
  cost: z.int().optional().describe('Cost; claims matched by requirements take the lowest'),
  maxCapacity: z.int().optional().describe('Accepted, not acted on'),
  bareMetalHosts: z
    .looseObject({
      selector: LabelSelectorSchema.optional().describe('Which BareMetalHosts are of this type'),
    })
    .optional(),
};

export const Metal3NodeTypeSpecSchema = z.lazy(() =>
  z.looseObject({
    name: z.string().min(1),
    ...nodeTypeSpecFields,
    metadata: z
      .looseObject({ labels: StringMapSchema.optional(), annotations: StringMapSchema.optional() })
      .optional()
      .describe('Labels (Node labels too) and annotations of the NodeType'),
  }),
);
export type Metal3NodeTypeSpec = z.infer<typeof Metal3NodeTypeSpecSchema>;

export const NodeProviderMetal3Schema = z.lazy(() =>
  z.looseObject({
    clusterRef: z
      .looseObject({
        cluster: z.string(),
        namespace: z.string().optional().describe('Namespace of the BareMetalHosts'),
      })
      .optional(),
    deploy: z
      .looseObject({
        multus: DeploymentSchema.optional(),
        dhcp: DeploymentSchema.optional(),
        metal3: DeploymentSchema.optional(),
      })
      .optional()
      .describe('Components to deploy (accepted, not acted on: NotSupported)'),
    nodeTypes: z.array(Metal3NodeTypeSpecSchema).optional(),
    neutronEnabled: z.boolean().optional().describe('Accepted, not acted on: NotSupported'),
    netris: z
      .looseObject({
        secretRef: z.looseObject({ name: z.string(), namespace: z.string() }).optional(),
      })
      .optional()
      .describe('Accepted, not acted on: NotSupported'),
  }),
);
export type NodeProviderMetal3 = z.infer<typeof NodeProviderMetal3Schema>;

export const NodeProviderSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('NodeProvider').optional(),
    metadata: ObjectMetaSchema,
    spec: z.looseObject({
      displayName: z.string().optional(),
      properties: StringMapSchema.optional().describe('Properties merged into every claim'),
      metal3: NodeProviderMetal3Schema.optional(),
    }),
    status: z.looseObject({ ...vmetalStatusFields }).optional(),
  }),
);
export type NodeProvider = z.infer<typeof NodeProviderSchema>;

export function parseNodeProvider(obj: unknown): NodeProvider {
  return parseObject(NodeProviderSchema, 'NodeProvider', obj);
}
