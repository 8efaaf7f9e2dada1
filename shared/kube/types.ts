/**
 * Objects as the API returns them: the types of the zod schemas in shared/api (plain JSON, unknown
 * fields kept), so a typed handle's objects are KubeObjects.
 */
import type { KubeObject } from '../api/meta.ts';

export type { KubeObject, ObjectMeta, OwnerReference } from '../api/meta.ts';

export interface KubeList<T extends KubeObject = KubeObject> {
  items: T[];
  resourceVersion: string;
  /** Set when a list stopped early (ListOptions.maxPages) with more items remaining. */
  continue?: string;
}

export interface ObjectKey {
  namespace?: string | undefined;
  name: string;
}

export const keyString = (k: ObjectKey): string => (k.namespace ? `${k.namespace}/${k.name}` : k.name);
