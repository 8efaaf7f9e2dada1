import { z } from 'zod';
import { TimestampSchema } from './meta.ts';

/** Cluster API v1beta1 condition (with severity), as Metal3Machine/Metal3Cluster v1beta1 carry them. */
export const ConditionSchema = z.lazy(() =>
  z.looseObject({
    type: z.string().min(1),
    status: z.enum(['True', 'False', 'Unknown']),
    severity: z.enum(['Error', 'Warning', 'Info', '']).optional(),
    reason: z.string().optional(),
    message: z.string().optional(),
    lastTransitionTime: TimestampSchema,
  }),
);
export type Condition = z.infer<typeof ConditionSchema>;

export const ConditionsSchema = z.lazy(() => z.array(ConditionSchema));

/** The same condition on objects others own: extra fields kept. */
export const LooseConditionSchema = z.lazy(() =>
  z.looseObject({
    type: z.string(),
    status: z.string(),
    severity: z.string().optional(),
    reason: z.string().optional(),
    message: z.string().optional(),
    lastTransitionTime: z.string().optional(),
  }),
);
export type LooseCondition = z.infer<typeof LooseConditionSchema>;
