/**
 * Types the vMetal kinds share (group vmetal.metal3fn.io/v1alpha1, ADR 018): Kubernetes' own
 * shapes (Taint, ResourceList, NodeSelectorRequirement) and the status every vMetal kind carries
 * (phase, reason, message, conditions). Loose and default-free like every schema in shared/api.
 */
import { z } from 'zod';
import { IntOrStringSchema } from '../capi.ts';
import { ConditionsSchema } from '../conditions.ts';

/** corev1.ResourceList: resource name -> quantity (`4`, `"16Gi"`). */
export const ResourceListSchema = z.lazy(() => z.record(z.string(), IntOrStringSchema));
export type ResourceList = z.infer<typeof ResourceListSchema>;

/** A quantity as text (`cpu: 4` and `cpu: "4"` are the same quantity). */
export const quantityText = (q: string | number): string => String(q);

/** A ResourceList with every quantity as text (what the pure decisions take). */
export function resourceTexts(list: ResourceList | undefined): Record<string, string> | undefined {
  if (!list) return undefined;
  return Object.fromEntries(Object.entries(list).map(([k, v]) => [k, quantityText(v)]));
}

/** corev1.Taint. */
export const TaintSchema = z.lazy(() =>
  z.looseObject({
    key: z.string(),
    value: z.string().optional(),
    effect: z.string(),
    timeAdded: z.string().optional(),
  }),
);
export type Taint = z.infer<typeof TaintSchema>;

/** corev1.NodeSelectorRequirement (with Karpenter's minValues). */
export const NodeSelectorRequirementSchema = z.lazy(() =>
  z.looseObject({
    key: z.string(),
    operator: z.string(),
    values: z.array(z.string()).optional(),
    minValues: z.int().optional(),
  }),
);

/** Status fields every vMetal kind has (vCluster Platform's: phase, reason, message, conditions). */
export const vmetalStatusFields = {
  phase: z.string().optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
  conditions: ConditionsSchema.optional(),
};

/** `displayName`, `description`, `owner` and `access` of the platform's catalogue kinds. */
export const catalogueFields = {
  displayName: z.string().optional().describe('Name shown in a UI'),
  description: z.string().optional(),
  owner: z
    .looseObject({ user: z.string().optional(), team: z.string().optional() })
    .optional()
    .describe('Owner (accepted, not acted on)'),
  access: z
    .array(
      z.looseObject({
        name: z.string().optional(),
        verbs: z.array(z.string()).optional(),
        subresources: z.array(z.string()).optional(),
        users: z.array(z.string()).optional(),
        teams: z.array(z.string()).optional(),
      }),
    )
    .optional()
    .describe('Access rules (accepted, not acted on)'),
};
