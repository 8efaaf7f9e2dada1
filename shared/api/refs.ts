import { z } from 'zod';

/** corev1.ObjectReference: a pointer to another object; `name` is the one field every use needs. */
export const ObjectReferenceSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    name: z.string().min(1, 'name must not be empty'),
    namespace: z.string().optional(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    fieldPath: z.string().optional(),
  }),
);
export type ObjectReference = z.infer<typeof ObjectReferenceSchema>;

/** The same reference on objects others own: never drop what their controllers wrote. */
export const LooseObjectReferenceSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    name: z.string().optional(),
    namespace: z.string().optional(),
    uid: z.string().optional(),
  }),
);
export type LooseObjectReference = z.infer<typeof LooseObjectReferenceSchema>;

/** corev1.SecretReference: `{name, namespace?}`; an empty namespace means the referrer's own. */
export const SecretReferenceSchema = z.lazy(() =>
  z.looseObject({
    name: z.string().min(1, 'name must not be empty'),
    namespace: z.string().optional(),
  }),
);
export type SecretReference = z.infer<typeof SecretReferenceSchema>;

/**
 * The reference webhook's rule: a ref's namespace, when given, is the referrer's own. Returns one
 * issue per offending ref (path relative to the object), none when the referrer has no namespace.
 */
export function foreignNamespaceIssues(
  namespace: string | undefined,
  refs: [path: string[], ref: { namespace?: string } | undefined][],
): { path: string[]; message: string }[] {
  if (!namespace) return [];
  return refs
    .filter(([, ref]) => ref?.namespace && ref.namespace !== namespace)
    .map(([path, ref]) => ({
      path: [...path, 'namespace'],
      message: `must be empty or the object's own namespace "${namespace}", got "${ref!.namespace}"`,
    }));
}
