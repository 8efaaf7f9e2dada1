import { z } from 'zod';
import { ObjectMetaSchema } from './meta.ts';
import { parseObject } from './parse.ts';
import { foreignNamespaceIssues, ObjectReferenceSchema, SecretReferenceSchema } from './refs.ts';

export const Metal3DataSpecSchema = z.lazy(() =>
  z.looseObject({
    index: z
      .int()
      .min(0, 'index must be >= 0')
      .describe('Index within the template; the name is <template>-<index>'),
    templateReference: z.string().optional(),
    claim: ObjectReferenceSchema,
    template: ObjectReferenceSchema,
    metaData: SecretReferenceSchema.optional(),
    networkData: SecretReferenceSchema.optional(),
  }),
);
export type Metal3DataSpec = z.infer<typeof Metal3DataSpecSchema>;

export const Metal3DataStatusSchema = z.lazy(() =>
  z.looseObject({
    ready: z.boolean().optional().describe('The rendered secrets exist'),
    /** v1beta1 flag next to errorMessage (seed 001 writes `error: false`). */
    error: z.boolean().optional(),
    errorMessage: z.string().optional(),
  }),
);
export type Metal3DataStatus = z.infer<typeof Metal3DataStatusSchema>;

export const Metal3DataSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('Metal3Data').optional(),
    metadata: ObjectMetaSchema,
    spec: Metal3DataSpecSchema,
    status: Metal3DataStatusSchema.optional(),
  }),
);
export type Metal3Data = z.infer<typeof Metal3DataSchema>;

export const Metal3DataClaimSpecSchema = z.lazy(() => z.looseObject({ template: ObjectReferenceSchema }));
export type Metal3DataClaimSpec = z.infer<typeof Metal3DataClaimSpecSchema>;

export const Metal3DataClaimStatusSchema = z.lazy(() =>
  z.looseObject({
    renderedData: ObjectReferenceSchema.optional().describe('The Metal3Data allocated for this claim'),
    errorMessage: z.string().optional(),
  }),
);
export type Metal3DataClaimStatus = z.infer<typeof Metal3DataClaimStatusSchema>;

export const Metal3DataClaimSchema = z.lazy(() =>
  z
    .looseObject({
      apiVersion: z.string().optional(),
      kind: z.literal('Metal3DataClaim').optional(),
      metadata: ObjectMetaSchema,
      spec: Metal3DataClaimSpecSchema,
      status: Metal3DataClaimStatusSchema.optional(),
    })
    .superRefine((claim, ctx) => {
      for (const issue of foreignNamespaceIssues(claim.metadata.namespace, [
        [['spec', 'template'], claim.spec.template],
      ]))
        ctx.addIssue({ code: 'custom', ...issue });
    }),
);
export type Metal3DataClaim = z.infer<typeof Metal3DataClaimSchema>;

export function parseMetal3Data(obj: unknown): Metal3Data {
  return parseObject(Metal3DataSchema, 'Metal3Data', obj);
}
export function parseMetal3DataClaim(obj: unknown): Metal3DataClaim {
  return parseObject(Metal3DataClaimSchema, 'Metal3DataClaim', obj);
}
