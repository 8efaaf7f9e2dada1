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
 * and a read-modify-write must not drop any of it (managedFields aside: an update without them
 * keeps the live ones, shared/kube/optimistic.ts).
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
  z.looseObject({
    labels: StringMapSchema.optional(),
    annotations: StringMapSchema.optional(),
  }),
);
export type TemplateMeta = z.infer<typeof TemplateMetaSchema>;

/** A Kubernetes timestamp (RFC 3339). Kept a plain string: values round-trip verbatim. */
export const TimestampSchema = z.string().meta({ format: 'date-time' });

/**
 * A field the CRD defaults (`default:` in the generated schema; the API server fills it in on
 * write and on read). The schema does not: parsing never adds a field, so an object written back
 * after a read-modify-write carries exactly what was read plus the change. Readers apply the
 * default themselves where the field may be absent (an object from a server without our CRDs).
 */
export function withDefault<S extends z.ZodType>(schema: S, value: z.input<S>) {
  return schema.optional().meta({ default: value });
}

/**
 * Any object as the API returns it: the envelope typed, everything else passed through. What a
 * reader gets for kinds whose body it does not model (and the relay for every kind: it must not
 * choke on an object a function would reject).
 */
export const KubeObjectSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: ObjectMetaSchema,
  }),
);
export type KubeObject = z.infer<typeof KubeObjectSchema>;
