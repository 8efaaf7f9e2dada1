import { z } from 'zod';

/** corev1.ObjectReference: a pointer to another object; `name` is the one field every use needs. */
export const ObjectReferenceSchema = z.object({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  name: z.string().min(1, 'name must not be empty'),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  fieldPath: z.string().optional(),
});
export type ObjectReference = z.infer<typeof ObjectReferenceSchema>;

/** The same reference on objects others own: never drop what their controllers wrote. */
export const LooseObjectReferenceSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  name: z.string().optional(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
});
export type LooseObjectReference = z.infer<typeof LooseObjectReferenceSchema>;

/** corev1.SecretReference: `{name, namespace?}`; an empty namespace means the referrer's own. */
export const SecretReferenceSchema = z.object({
  name: z.string().min(1, 'name must not be empty'),
  namespace: z.string().optional(),
});
export type SecretReference = z.infer<typeof SecretReferenceSchema>;
