import { z } from 'zod';

/** A label or annotation map. */
export const StringMapSchema = z.lazy(() => z.record(z.string(), z.string()));

export const OwnerReferenceSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string(),
    kind: z.string(),
    name: z.string(),
    // Required by the API server for real objects; the seed examples omit it, so it is optional here.
    uid: z.string().optional(),
    controller: z.boolean().optional(),
    blockOwnerDeletion: z.boolean().optional(),
  }),
);
export type OwnerReference = z.infer<typeof OwnerReferenceSchema>;

/**
 * ObjectMeta with the fields the functions use. Passthrough: the API server owns metadata
 * (managedFields and friends) and a read-modify-write must not drop any of it.
 */
export const ObjectMetaSchema = z.lazy(() =>
  z.looseObject({
    name: z.string().optional(),
    generateName: z.string().optional(),
    namespace: z.string().optional(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    generation: z.int().optional(),
    creationTimestamp: z.string().optional(),
    deletionTimestamp: z.string().optional(),
    labels: StringMapSchema.optional(),
    annotations: StringMapSchema.optional(),
    finalizers: z.array(z.string()).optional(),
    ownerReferences: z.array(OwnerReferenceSchema).optional(),
  }),
);
export type ObjectMeta = z.infer<typeof ObjectMetaSchema>;

/** The metadata a template may stamp on the objects it creates (CAPI ObjectMeta: labels, annotations). */
export const TemplateMetaSchema = z.lazy(() =>
  z.object({
    labels: StringMapSchema.optional(),
    annotations: StringMapSchema.optional(),
  }),
);
export type TemplateMeta = z.infer<typeof TemplateMetaSchema>;

/** A Kubernetes timestamp (RFC 3339). Kept a plain string: values round-trip verbatim. */
export const TimestampSchema = z.string().meta({ format: 'date-time' });
