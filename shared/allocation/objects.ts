/**
 * Small, pure helpers on object metadata used by the allocation, render and release paths:
 * finalizers, owner references, names. Mutators change the object they are given (for use inside
 * an optimisticUpdate mutator) and say whether they changed anything.
 */
import { isRecord } from '../api/json.ts';
import { apiVersionOf, type ResourceType } from '../api/kinds.ts';
import type { KubeObject, OwnerReference } from '../kube/types.ts';

export const isDeleting = (o: KubeObject): boolean => Boolean(o.metadata.deletionTimestamp);

export const hasFinalizer = (o: KubeObject, f: string): boolean => (o.metadata.finalizers ?? []).includes(f);

export function addFinalizer(o: KubeObject, f: string): boolean {
  if (hasFinalizer(o, f)) return false;
  o.metadata.finalizers = [...(o.metadata.finalizers ?? []), f];
  return true;
}

export function removeFinalizer(o: KubeObject, f: string): boolean {
  if (!hasFinalizer(o, f)) return false;
  o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((x) => x !== f);
  return true;
}

/** An owner reference to `owner` (which must have been read from the server: it needs its uid). */
export function ownerRef(
  t: ResourceType,
  owner: KubeObject,
  opts: { controller?: boolean } = {},
): OwnerReference {
  if (!owner.metadata.uid || !owner.metadata.name) {
    throw new Error(`${t.kind} without name/uid cannot be an owner`);
  }
  const ref: OwnerReference = {
    apiVersion: apiVersionOf(t),
    kind: t.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
  };
  if (opts.controller) {
    ref.controller = true;
    ref.blockOwnerDeletion = true;
  }
  return ref;
}

/** Is `uid` among the owners of `o`? */
export const isOwnedBy = (o: KubeObject, uid: string | undefined): boolean =>
  uid !== undefined && (o.metadata.ownerReferences ?? []).some((r) => r.uid === uid);

/** The first owner reference of `kind` (controller first), if any. */
export function ownerOfKind(o: KubeObject, kind: string, group?: string): OwnerReference | undefined {
  const refs = (o.metadata.ownerReferences ?? []).filter(
    (r) => r.kind === kind && (group === undefined || r.apiVersion.split('/')[0] === group),
  );
  return refs.find((r) => r.controller) ?? refs[0];
}

export const controllerOf = (o: KubeObject): OwnerReference | undefined =>
  (o.metadata.ownerReferences ?? []).find((r) => r.controller);

/** Labels to copy from a claim onto what is created for it (a copy; never the same object). */
export const copyLabels = (o: KubeObject): Record<string, string> => ({ ...(o.metadata.labels ?? {}) });

/** `ns/name` of an object, for messages and logs. */
export const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/** Metal3Data name: `<template>-<index>` (webhook-enforced upstream). */
export const dataName = (template: string, index: number): string => `${template}-${index}`;

/** IPClaim of a Metal3Data for one pool: `<m3d>-<pool>`. */
export const ipClaimName = (data: string, pool: string): string => `${data}-${pool}`;

/** The rendered Secrets of a Metal3Data (the seed's naming, with the index; DESIGN.md §2). */
export const metaDataSecretName = (m3m: string, index: number): string => `${m3m}-metadata-${index}`;
export const networkDataSecretName = (m3m: string, index: number): string => `${m3m}-networkdata-${index}`;

/** Kubernetes timestamp, second precision. */
export const timestamp = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, 'Z');

/** The object's `status` as a mutable record, created when absent (for mutators). */
export function statusOf(o: KubeObject): Record<string, unknown> {
  if (isRecord(o.status)) return o.status;
  const status: Record<string, unknown> = {};
  o.status = status;
  return status;
}
