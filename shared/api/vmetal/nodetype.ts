/**
 * NodeType (cluster-scoped): made, updated and deleted by selectHost from its NodeProvider's
 * `metal3.nodeTypes[]` (owned by the provider). Status: phase Available (hosts match), Pending
 * (none), Failed (bad selector or resources); capacity counts of matching hosts.
 */
import { z } from 'zod';
import { ObjectMetaSchema } from '../meta.ts';
import { parseObject } from '../parse.ts';
import { vmetalStatusFields } from './common.ts';
import { nodeTypeSpecFields } from './nodeprovider.ts';

export const NodeTypeCapacitySchema = z.lazy(() =>
  z.looseObject({
    total: z.int().optional().describe('Matching hosts not being deleted'),
    available: z.int().optional().describe('Matching hosts that can be claimed now'),
    claimed: z.int().optional().describe('Matching hosts held by any consumer'),
    provisioned: z.int().optional().describe('Matching hosts held by a NodeClaim of this type'),
  }),
);

export const NodeTypeSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('NodeType').optional(),
    metadata: ObjectMetaSchema,
    spec: z.looseObject({ ...nodeTypeSpecFields }),
    status: z
      .looseObject({
        ...vmetalStatusFields,
        cost: z.int().optional(),
        capacity: NodeTypeCapacitySchema.optional(),
        countedAt: z
          .string()
          .optional()
          .describe(
            'When the capacity was counted (the host list was started); while hosts change it is recounted at most once per window (ADR 025)',
          ),
      })
      .optional(),
  }),
);
export type NodeType = z.infer<typeof NodeTypeSchema>;

export function parseNodeType(obj: unknown): NodeType {
  return parseObject(NodeTypeSchema, 'NodeType', obj);
}
