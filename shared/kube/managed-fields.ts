import type { KubeObject } from './types.ts';

/**
 * The object without metadata.managedFields, the API server's record of field ownership. Nothing
 * here decides by it; an update that carries none keeps the live one (kube-apiserver's field
 * manager falls back to the live object's when the request's is empty); and on objects with an
 * entry per machine (a Metal3DataTemplate, an IPPool) it is as large as the rest. So the relay's
 * cache keeps objects without it (as controller-runtime's TransformStripManagedFields does for
 * informers), and optimisticUpdate mutates, compares and sends them without it.
 */
export function withoutManagedFields<T extends KubeObject>(o: T): T {
  if (!o.metadata?.managedFields) return o;
  const { managedFields: _live, ...metadata } = o.metadata;
  return { ...o, metadata };
}
