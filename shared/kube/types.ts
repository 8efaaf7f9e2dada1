/** Minimal structural types for objects as the API returns them (plain JSON, unknown fields kept). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

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
