/**
 * What each function reads of an object (controller-runtime's GenerationChanged / annotation /
 * label / finalizer / owner predicates, per function): a change elsewhere, e.g. a status a function
 * wrote itself or a host's power heartbeat, wakes nobody who does not read it. Each reader projects
 * an object onto the parts a function reads; `changed(reader)` compares the projections.
 */

import { fieldOf, listOf } from '../api/json.ts';
import {
  CAPI_PAUSED_ANNOTATION,
  CLUSTER_NAME_LABEL,
  FINALIZER,
  HOST_ANNOTATION,
  HOST_PAUSED_ANNOTATION,
} from '../api/wellknown.ts';
import type { KubeObject } from '../kube/types.ts';
import { hostState, ownerOfKind, spec, status } from './predicates.ts';

export const md = (o: KubeObject) => o.metadata;
export const without = (m: Record<string, string> | undefined, key: string) => {
  const { [key]: _drop, ...rest } = m ?? {};
  return Object.keys(rest).length > 0 ? rest : undefined; // no map and an empty map are the same
};
/**
 * A Metal3Machine as selectHost reads it: spec (not providerID, which resolveProviderID owns),
 * metadata, failure. The host annotation and our finalizer are selectHost's own writes (`own`).
 */
export const m3mForSelectHost = (o: KubeObject): unknown => {
  const { providerID: _pid, ...rest } = spec(o);
  return [
    rest,
    md(o).labels,
    without(md(o).annotations, HOST_ANNOTATION),
    (md(o).finalizers ?? []).filter((f) => f !== FINALIZER.machine),
    md(o).ownerReferences,
    status(o).failureReason,
    status(o).failureMessage,
  ];
};
export const m3mOwnBySelectHost = (o: KubeObject): unknown[] => [
  md(o).annotations?.[HOST_ANNOTATION],
  md(o).finalizers?.includes(FINALIZER.machine) ? true : undefined,
];
/**
 * A Metal3Machine as resolveProviderID reads it: spec, metadata, the addresses association wrote,
 * failure. spec.providerID is its own write (`own`).
 */
export const m3mForProviderID = (o: KubeObject): unknown => [
  (({ providerID: _pid, ...rest }) => rest)(spec(o)),
  md(o).labels,
  md(o).annotations,
  md(o).ownerReferences,
  status(o).addresses,
  status(o).failureReason,
  status(o).failureMessage,
  status(o).ready,
];
/** A Machine as selectHost reads it: spec (bootstrap data, failure domain, cluster), labels, owners. */
export const machineForSelectHost = (o: KubeObject): unknown => {
  const { providerID: _pid, ...rest } = spec(o);
  return [rest, md(o).labels, md(o).ownerReferences, md(o).deletionTimestamp];
};
/** The host fields selectHost's provisioning write sets (its own write, `own` below). */
export const PROVISIONING_FIELDS = [
  'image',
  'customDeploy',
  'userData',
  'metaData',
  'networkData',
  'online',
  'automatedCleaningMode',
];
/** Each provisioning field, `online: false` (a registered host's default) counting as unset. */
export const hostProvisioning = (o: KubeObject): unknown[] => {
  const s = spec(o);
  return PROVISIONING_FIELDS.map((k) => (s[k] === false ? undefined : s[k]));
};
/**
 * A BareMetalHost as its consumer's selectHost reads it: spec (without the provisioning fields it
 * writes itself), labels, the paused annotation, hardware, and — until provisioning was requested —
 * whether it is ready/available (afterwards its state is the baremetal-operator's business).
 */
export const hostForSelectHost = (o: KubeObject): unknown => {
  const state = hostState(o);
  const s = spec(o);
  const rest = Object.fromEntries(Object.entries(s).filter(([k]) => !PROVISIONING_FIELDS.includes(k)));
  const requested = Boolean(fieldOf(s, 'image', 'url') || fieldOf(s, 'customDeploy', 'method'));
  return [
    rest,
    md(o).labels,
    md(o).annotations?.[HOST_PAUSED_ANNOTATION],
    md(o).deletionTimestamp,
    status(o).hardware,
    requested || state === 'ready' || state === 'available',
  ];
};
/** A Cluster as selectHost reads it: spec (paused), annotations, infrastructure readiness. */
export const clusterForSelectHost = (o: KubeObject): unknown => {
  const st = status(o);
  return [
    spec(o),
    md(o).annotations,
    st.infrastructureReady === true ||
      fieldOf(st, 'initialization', 'infrastructureProvisioned') === true ||
      listOf(st.conditions).some(
        (c) => fieldOf(c, 'type') === 'InfrastructureReady' && fieldOf(c, 'status') === 'True',
      ),
  ];
};

export const hasOwn = (o: KubeObject, f: string) => (md(o).finalizers?.includes(f) ? true : undefined);
/** Its own Cluster API pause: removing the annotation wakes the object again. */
export const ownPause = (o: KubeObject): boolean =>
  Object.hasOwn(md(o).annotations ?? {}, CAPI_PAUSED_ANNOTATION);
/** A Metal3DataTemplate as allocateIndex reads it: spec (the links of its data), its deletion and pause. */
export const templateForAllocate = (o: KubeObject): unknown => [
  spec(o),
  md(o).deletionTimestamp,
  ownPause(o),
];
/** What allocateIndex writes on a template itself: its finalizer, cluster label, Metal3Cluster owner. */
export const templateOwnByAllocate = (o: KubeObject): unknown[] => [
  hasOwn(o, FINALIZER.dataTemplate),
  md(o).labels?.[CLUSTER_NAME_LABEL],
  ownerOfKind(o, 'Metal3Cluster')?.uid,
];
