/**
 * The write of a Node's providerID, conditioned on exactly what the decision read (NodeGuard)
 * rather than on the Node's resourceVersion: the kubelet posts the Node's status right after
 * registering, which changes the resourceVersion but nothing the decision looked at (ADR 026).
 */
import { type JsonPatchOp, jsonPointer } from '../kube/json-patch.ts';
import type { NodeGuard } from './decide.ts';

/**
 * A JSON patch that sets `spec.providerID` only while the Node is the same object, carries the
 * same labels (a null label: still absent) and the providerID read. A test for null matches an
 * absent member on a Kubernetes API server (evanphx/json-patch, unlike RFC 6902), so "still unset"
 * is `null`; a providerID read as "" is tested as "".
 */
export function providerIDPatch(guard: NodeGuard, providerID: string): JsonPatchOp[] {
  return [
    { op: 'test', path: '/metadata/uid', value: guard.uid ?? null },
    ...Object.entries(guard.labels)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]): JsonPatchOp => ({ op: 'test', path: jsonPointer('metadata', 'labels', k), value: v })),
    { op: 'test', path: '/spec/providerID', value: guard.providerID ?? null },
    { op: 'add', path: '/spec/providerID', value: providerID },
  ];
}
