/**
 * Predicates over events and small readers over raw objects, for the routes' `when`: the relay must
 * not choke on objects a function would reject, so nothing here parses a kind's schema; fields are
 * read key by key, each checked for what it is (shared/api/json.ts).
 */
import { fieldOf, jsonEqual, recordOf, stringOf } from '../api/json.ts';
import type { KubeObject, OwnerReference } from '../kube/types.ts';
import type { RoutingEvent } from './types.ts';

/** Fields of a JSON object, read key by key. */
export type Fields = Record<string, unknown>;
export const spec = (o: KubeObject): Fields => recordOf(o.spec);
export const status = (o: KubeObject): Fields => recordOf(o.status);

/** The string fields of an object reference (`{apiVersion, kind, name, namespace}`), whatever `v` is. */
export interface RefFields {
  apiVersion?: string | undefined;
  kind?: string | undefined;
  name?: string | undefined;
  namespace?: string | undefined;
}
export const refOf = (v: unknown): RefFields => {
  const r = recordOf(v);
  return {
    apiVersion: stringOf(r.apiVersion),
    kind: stringOf(r.kind),
    name: stringOf(r.name),
    namespace: stringOf(r.namespace),
  };
};
export { fieldOf };
export const nsOf = (o: KubeObject): string => o.metadata.namespace ?? '';
export const isDeleting = (o: KubeObject): boolean => Boolean(o.metadata.deletionTimestamp);
export const live = (ev: RoutingEvent): boolean => ev.type !== 'DELETED';
export const liveNotDeleting = (ev: RoutingEvent): boolean => ev.type !== 'DELETED' && !isDeleting(ev.object);
export const liveDeleting = (ev: RoutingEvent): boolean => ev.type !== 'DELETED' && isDeleting(ev.object);
export const groupOf = (apiVersion: string | undefined): string =>
  apiVersion?.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';

export function ownerOfKind(o: KubeObject, kind: string, controllerOnly = false): OwnerReference | undefined {
  return o.metadata.ownerReferences?.find(
    (r) => r.kind === kind && (!controllerOnly || r.controller === true),
  );
}

/** True when there is no previous state, the event is a resync or a deletion, or `pick` changed. */
export const changed =
  (pick: (o: KubeObject) => unknown) =>
  (ev: RoutingEvent): boolean =>
    !ev.old || ev.resync === true || ev.type === 'DELETED' || !jsonEqual(pick(ev.old), pick(ev.object));

/**
 * Like `changed`, but an ADDED object without a previous state counts as changed from nothing: a
 * new object whose picked part is still empty (a claim just created, nothing allocated yet) wakes
 * nobody — the step that created it is already running.
 */
export const changedFromEmpty =
  (pick: (o: KubeObject) => unknown) =>
  (ev: RoutingEvent): boolean =>
    ev.type === 'ADDED' && !ev.old && ev.resync !== true
      ? !jsonEqual(pick(ev.object), pick(EMPTY))
      : changed(pick)(ev);

/**
 * For a step's own object: a change of anything but status, or a status change other than the one
 * transition the step itself writes (`ownTransition(old, new)`: e.g. a claim's renderedData going
 * from unset to set). The step that wrote that transition is the one that would be woken; it has
 * already gone on. Any other status change (a status lost, an error cleared) still wakes it.
 */
const EMPTY: KubeObject = { metadata: {} };

export const changedBesidesOwnStatus =
  (ownTransition: (oldStatus: Fields, newStatus: Fields) => boolean, ownSpecFields: readonly string[] = []) =>
  (ev: RoutingEvent): boolean => {
    if (!ev.old || ev.resync === true || ev.type === 'DELETED') return true;
    // Spec fields the step writes itself: their appearance is its own write, their loss or
    // replacement is not.
    const so0 = spec(ev.old);
    const sn0 = spec(ev.object);
    for (const f of ownSpecFields) {
      if (so0[f] !== undefined && !jsonEqual(so0[f], sn0[f])) return true;
    }
    const strip = (o: KubeObject): Fields =>
      ownSpecFields.length === 0
        ? o
        : {
            ...o,
            spec: Object.fromEntries(Object.entries(spec(o)).filter(([k]) => !ownSpecFields.includes(k))),
          };
    const { status: so, metadata: mo, ...restOld } = strip(ev.old);
    const { status: sn, metadata: mn, ...restNew } = strip(ev.object);
    const meta = (v: unknown) => {
      const m = recordOf(v);
      return [m.labels, m.annotations, m.finalizers, m.ownerReferences, m.deletionTimestamp];
    };
    if (!jsonEqual([restOld, meta(mo)], [restNew, meta(mn)])) return true;
    if (jsonEqual(so, sn)) return false;
    return !ownTransition(recordOf(so), recordOf(sn));
  };

/**
 * `changed(pick)`, or a part the function writes itself (`own`) changed other than by appearing: its
 * appearance (unset → set) is that function's own write, whose pass has already gone on; its loss
 * or replacement (someone else's doing) still wakes it.
 */
export const changedOrOwnLost =
  (pick: (o: KubeObject) => unknown, own: (o: KubeObject) => readonly unknown[]) =>
  (ev: RoutingEvent): boolean => {
    if (changed(pick)(ev)) return true;
    if (ev.old === undefined) return false;
    const before = own(ev.old);
    const after = own(ev.object);
    // Each own part on its own: one appearing while another stays put is still only our write.
    return before.some((v, i) => v !== undefined && !jsonEqual(v, after[i]));
  };

export const hostState = (bmh: KubeObject): string =>
  String(fieldOf(bmh, 'status', 'provisioning', 'state') ?? '');

export function isFreeHost(bmh: KubeObject): boolean {
  const state = hostState(bmh);
  return !spec(bmh).consumerRef && !isDeleting(bmh) && (state === 'ready' || state === 'available');
}

export function isMachineReady(m3m: KubeObject): boolean {
  const st = status(m3m);
  return (
    Boolean(spec(m3m).providerID) &&
    (st.ready === true || fieldOf(st, 'initialization', 'provisioned') === true)
  );
}
