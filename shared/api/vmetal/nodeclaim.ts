/**
 * NodeClaim (namespaced, in the tenant's project namespace): one provisioned server (vCluster
 * Platform's Machine; not named `machine`, which is Cluster API's). selectHost claims a host for
 * it, renderData provisions it, resolveProviderID sees it join, deprovision releases it.
 */
import { z } from 'zod';
import { ObjectMetaSchema, StringMapSchema } from '../meta.ts';
import { parseObject } from '../parse.ts';
import {
  NodeSelectorRequirementSchema,
  ResourceListSchema,
  TaintSchema,
  vmetalStatusFields,
} from './common.ts';

export const NODE_CLAIM_PHASES = ['Pending', 'Available', 'Failed'] as const;
export type NodeClaimPhase = (typeof NODE_CLAIM_PHASES)[number];

export const NodeClaimSpecSchema = z.lazy(() =>
  z.looseObject({
    providerRef: z.string().optional().describe('NodeProvider; defaults to the NodeType provider'),
    typeRef: z.string().optional().describe('NodeType; without it, requirements choose one'),
    environmentRef: z.string().optional().describe('NodeEnvironment in the claim namespace'),
    properties: StringMapSchema.optional().describe('Properties; the most specific level'),
    vClusterRef: z.string().describe('Tenant cluster; its kubeconfig is Secret <vClusterRef>-kubeconfig'),
    controlPlane: z.boolean().optional(),
    taints: z.array(TaintSchema).optional(),
    startupTaints: z.array(TaintSchema).optional(),
    kubeletArgs: StringMapSchema.optional(),
    desiredCapacity: ResourceListSchema.optional(),
    requirements: z.array(NodeSelectorRequirementSchema).optional(),
    power: z.string().optional().describe('On or Off: the host online flag'),
  }),
);
export type NodeClaimSpec = z.infer<typeof NodeClaimSpecSchema>;

export const NodeClaimStatusSchema = z.lazy(() =>
  z.looseObject({
    ...vmetalStatusFields,
    nodeType: z.string().optional().describe('The NodeType used (typeRef or the one requirements chose)'),
    properties: StringMapSchema.optional().describe('The merged properties'),
    host: z.string().optional().describe('BareMetalHost held (in hostNamespace)'),
    hostNamespace: z.string().optional(),
    ipAddress: z.string().optional().describe('Allocated address, CIDR form'),
    nodeName: z.string().optional().describe('Node in the tenant cluster once joined'),
  }),
);
export type NodeClaimStatus = z.infer<typeof NodeClaimStatusSchema>;

export const NodeClaimSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('NodeClaim').optional(),
    metadata: ObjectMetaSchema,
    spec: NodeClaimSpecSchema,
    status: NodeClaimStatusSchema.optional(),
  }),
);
export type NodeClaim = z.infer<typeof NodeClaimSchema>;

export function parseNodeClaim(obj: unknown): NodeClaim {
  return parseObject(NodeClaimSchema, 'NodeClaim', obj);
}
