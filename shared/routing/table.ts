/**
 * The routing table: which functions an event concerns, and for which object keys. It is data (a
 * list of routes), pure (`(event, cache) → messages`), and tested on its own; the relay, the HTTP
 * runtime (Knative ApiServerSource events) and `replay --event` all route through it.
 *
 * A route names the kind it listens on, the function, the objects that get a message (the event's
 * object itself, or related objects found in the cache) and, for allocations, the FIFO group.
 * A message about the event's own object carries the event's reason; a message about a related
 * object carries reason `related` and the cause, so two causes for one unchanged object are not
 * deduplicated away by SQS.
 */
import { type FunctionName, MessageEnvelope } from '../../events/envelope.ts';
import { FINALIZER } from '../allocation/objects.ts';
import { apiVersionOf, INFRA_GROUP, type KindName, R } from '../api/resources.ts';
import type { KubeObject, OwnerReference } from '../kube/types.ts';
import { groupId, objectGroup, type RoutedMessage } from '../queue/message.ts';
import type { CacheView } from './cache.ts';

export type RoutingEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface RoutingEvent {
  type: RoutingEventType;
  /** The object as the event carries it (for DELETED: its last state). */
  object: KubeObject;
  /** The previous state the relay saw, when it has one: lets routes react to changes only. */
  old?: KubeObject | undefined;
  /** A periodic re-list of an object that did not change. */
  resync?: boolean | undefined;
  /** `management` (default) or `<namespace>/<cluster>` for workload-cluster objects (Nodes). */
  cluster?: string | undefined;
}

export interface Target {
  kind: KindName;
  object: KubeObject;
}

export interface Route {
  /** What the route does, in words (tests and docs name routes by it). */
  name: string;
  on: KindName;
  /** Where `on` lives (default management). */
  scope?: 'management' | 'workload';
  fn: FunctionName;
  /** Kinds this route reads from the cache (the HTTP runtime pre-loads them). */
  reads: readonly KindName[];
  /** `self`: the event's object; otherwise the related objects that get a message. */
  targets: 'self' | ((ev: RoutingEvent, cache: CacheView) => Target[]);
  /** Only when this holds (default: always). */
  when?: (ev: RoutingEvent) => boolean;
  /** FIFO group (default: the target object's own key). */
  group?: (target: Target) => string;
}

// ---- small readers over raw objects (the relay must not choke on objects a function would reject)

export const HOST_ANNOTATION = 'metal3.io/BareMetalHost';
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
export const NODE_UUID_LABEL = 'metal3.io/uuid';
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';

type Any = Record<string, any>;
const spec = (o: KubeObject): Any => ((o as Any).spec ?? {}) as Any;
const status = (o: KubeObject): Any => ((o as Any).status ?? {}) as Any;
const nsOf = (o: KubeObject): string => o.metadata.namespace ?? '';
export const isDeleting = (o: KubeObject): boolean => Boolean(o.metadata.deletionTimestamp);
const live = (ev: RoutingEvent): boolean => ev.type !== 'DELETED';
const liveNotDeleting = (ev: RoutingEvent): boolean => ev.type !== 'DELETED' && !isDeleting(ev.object);
const liveDeleting = (ev: RoutingEvent): boolean => ev.type !== 'DELETED' && isDeleting(ev.object);
const groupOf = (apiVersion: string | undefined): string =>
  apiVersion?.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';

function ownerOfKind(o: KubeObject, kind: string, controllerOnly = false): OwnerReference | undefined {
  return o.metadata.ownerReferences?.find(
    (r) => r.kind === kind && (!controllerOnly || r.controller === true),
  );
}

const json = (v: unknown): string => JSON.stringify(v ?? null);
/** True when there is no previous state, the event is a resync or a deletion, or `pick` changed. */
const changed =
  (pick: (o: KubeObject) => unknown) =>
  (ev: RoutingEvent): boolean =>
    !ev.old || ev.resync === true || ev.type === 'DELETED' || json(pick(ev.old)) !== json(pick(ev.object));

/**
 * Like `changed`, but an ADDED object without a previous state counts as changed from nothing: a
 * new object whose picked part is still empty (a claim just created, nothing allocated yet) wakes
 * nobody — the step that created it is already running.
 */
const changedFromEmpty =
  (pick: (o: KubeObject) => unknown) =>
  (ev: RoutingEvent): boolean =>
    ev.type === 'ADDED' && !ev.old && ev.resync !== true
      ? json(pick(ev.object)) !== json(pick({ metadata: {} } as KubeObject))
      : changed(pick)(ev);

/**
 * For a step's own object: a change of anything but status, or a status change other than the one
 * transition the step itself writes (`ownTransition(old, new)`: e.g. a claim's renderedData going
 * from unset to set). The step that wrote that transition is the one that would be woken; it has
 * already gone on. Any other status change (a status lost, an error cleared) still wakes it.
 */
const changedBesidesOwnStatus =
  (ownTransition: (oldStatus: Any, newStatus: Any) => boolean, ownSpecFields: readonly string[] = []) =>
  (ev: RoutingEvent): boolean => {
    if (!ev.old || ev.resync === true || ev.type === 'DELETED') return true;
    // Spec fields the step writes itself: their appearance is its own write, their loss or
    // replacement is not.
    const so0 = spec(ev.old);
    const sn0 = spec(ev.object);
    for (const f of ownSpecFields) {
      if (so0[f] !== undefined && json(so0[f]) !== json(sn0[f])) return true;
    }
    const strip = (o: Any): Any =>
      ownSpecFields.length === 0
        ? o
        : {
            ...o,
            spec: Object.fromEntries(
              Object.entries(spec(o as KubeObject)).filter(([k]) => !ownSpecFields.includes(k)),
            ),
          };
    const { status: so, metadata: mo, ...restOld } = strip(ev.old as Any);
    const { status: sn, metadata: mn, ...restNew } = strip(ev.object as Any);
    const meta = (m: Any) => [
      m?.labels,
      m?.annotations,
      m?.finalizers,
      m?.ownerReferences,
      m?.deletionTimestamp,
    ];
    if (json([restOld, meta(mo)]) !== json([restNew, meta(mn)])) return true;
    if (json(so) === json(sn)) return false;
    return !ownTransition((so ?? {}) as Any, (sn ?? {}) as Any);
  };

/**
 * `changed(pick)`, or a part the function writes itself (`own`) changed other than by appearing: its
 * appearance (unset → set) is that function's own write, whose pass has already gone on; its loss
 * or replacement (someone else's doing) still wakes it.
 */
const changedOrOwnLost =
  (pick: (o: KubeObject) => unknown, own: (o: KubeObject) => readonly unknown[]) =>
  (ev: RoutingEvent): boolean => {
    if (changed(pick)(ev)) return true;
    if (ev.old === undefined) return false;
    const before = own(ev.old);
    const after = own(ev.object);
    // Each own part on its own: one appearing while another stays put is still only our write.
    return before.some((v, i) => v !== undefined && json(v) !== json(after[i]));
  };

export const hostState = (bmh: KubeObject): string => String(status(bmh).provisioning?.state ?? '');

// ---- what each function reads of an object (controller-runtime's GenerationChanged / annotation /
// label / finalizer / owner predicates, per function): a change elsewhere, e.g. a status a function
// wrote itself or a host's power heartbeat, wakes nobody who does not read it.

const md = (o: KubeObject) => o.metadata;
const MACHINE_FINALIZER = 'metal3machine.infrastructure.cluster.x-k8s.io';
const HOST_PAUSED_ANNOTATION = 'baremetalhost.metal3.io/paused';
const without = (m: Record<string, string> | undefined, key: string) => {
  const { [key]: _drop, ...rest } = m ?? {};
  return Object.keys(rest).length > 0 ? rest : undefined; // no map and an empty map are the same
};
/**
 * A Metal3Machine as selectHost reads it: spec (not providerID, which resolveProviderID owns),
 * metadata, failure. The host annotation and our finalizer are selectHost's own writes (`own`).
 */
const m3mForSelectHost = (o: KubeObject): unknown => {
  const { providerID: _pid, ...rest } = spec(o);
  return [
    rest,
    md(o).labels,
    without(md(o).annotations, HOST_ANNOTATION),
    (md(o).finalizers ?? []).filter((f) => f !== MACHINE_FINALIZER),
    md(o).ownerReferences,
    status(o).failureReason,
    status(o).failureMessage,
  ];
};
const m3mOwnBySelectHost = (o: KubeObject): unknown[] => [
  md(o).annotations?.[HOST_ANNOTATION],
  md(o).finalizers?.includes(MACHINE_FINALIZER) ? true : undefined,
];
/**
 * A Metal3Machine as resolveProviderID reads it: spec, metadata, the addresses association wrote,
 * failure. spec.providerID is its own write (`own`).
 */
const m3mForProviderID = (o: KubeObject): unknown => [
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
const machineForSelectHost = (o: KubeObject): unknown => {
  const { providerID: _pid, ...rest } = spec(o);
  return [rest, md(o).labels, md(o).ownerReferences, md(o).deletionTimestamp];
};
/** The host fields selectHost's provisioning write sets (its own write, `own` below). */
const PROVISIONING_FIELDS = [
  'image',
  'customDeploy',
  'userData',
  'metaData',
  'networkData',
  'online',
  'automatedCleaningMode',
];
/** Each provisioning field, `online: false` (a registered host's default) counting as unset. */
const hostProvisioning = (o: KubeObject): unknown[] => {
  const s = spec(o);
  return PROVISIONING_FIELDS.map((k) => (s[k] === false ? undefined : s[k]));
};
/**
 * A BareMetalHost as its consumer's selectHost reads it: spec (without the provisioning fields it
 * writes itself), labels, the paused annotation, hardware, and — until provisioning was requested —
 * whether it is ready/available (afterwards its state is the baremetal-operator's business).
 */
const hostForSelectHost = (o: KubeObject): unknown => {
  const state = hostState(o);
  const s = spec(o);
  const rest = Object.fromEntries(Object.entries(s).filter(([k]) => !PROVISIONING_FIELDS.includes(k)));
  const requested = Boolean(s.image?.url || s.customDeploy?.method);
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
const clusterForSelectHost = (o: KubeObject): unknown => {
  const st = status(o);
  return [
    spec(o),
    md(o).annotations,
    st.infrastructureReady === true ||
      st.initialization?.infrastructureProvisioned === true ||
      ((st.conditions ?? []) as Any[]).some((c) => c?.type === 'InfrastructureReady' && c?.status === 'True'),
  ];
};

export function isFreeHost(bmh: KubeObject): boolean {
  const state = hostState(bmh);
  return !spec(bmh).consumerRef && !isDeleting(bmh) && (state === 'ready' || state === 'available');
}

export function isMachineReady(m3m: KubeObject): boolean {
  const st = status(m3m);
  return Boolean(spec(m3m).providerID) && (st.ready === true || st.initialization?.provisioned === true);
}

function consumerMachine(bmh: KubeObject, cache: CacheView): KubeObject | undefined {
  const ref = spec(bmh).consumerRef as Any | undefined;
  if (ref?.kind !== 'Metal3Machine' || (ref.apiVersion && groupOf(ref.apiVersion) !== INFRA_GROUP))
    return undefined;
  return cache.get('Metal3Machine', ref.namespace || nsOf(bmh), ref.name);
}

function claimOwnerMachine(claim: KubeObject, cache: CacheView): KubeObject | undefined {
  const owner = ownerOfKind(claim, 'Metal3Machine', true) ?? ownerOfKind(claim, 'Metal3Machine');
  return owner ? cache.get('Metal3Machine', nsOf(claim), owner.name) : undefined;
}

/** The machine a Metal3Data serves: through its claim (spec.claim), else its own Metal3Machine owner. */
function dataMachine(data: KubeObject, cache: CacheView): KubeObject | undefined {
  const ref = spec(data).claim as Any | undefined;
  const claim = ref?.name ? cache.get('Metal3DataClaim', ref.namespace || nsOf(data), ref.name) : undefined;
  const viaClaim = claim ? claimOwnerMachine(claim, cache) : undefined;
  if (viaClaim) return viaClaim;
  const owner = ownerOfKind(data, 'Metal3Machine');
  return owner ? cache.get('Metal3Machine', nsOf(data), owner.name) : undefined;
}

function infraMachineOfMachine(machine: KubeObject, cache: CacheView): KubeObject | undefined {
  const ref = spec(machine).infrastructureRef as Any | undefined;
  if (ref?.kind !== 'Metal3Machine') return undefined;
  return cache.get('Metal3Machine', ref.namespace || nsOf(machine), ref.name);
}

const poolKey = (o: KubeObject): { ns: string; name: string } | undefined => {
  const p = spec(o).pool as Any | undefined;
  return p?.name ? { ns: p.namespace || nsOf(o), name: p.name } : undefined;
};

function deletingPoolOf(o: KubeObject, cache: CacheView): Target[] {
  const p = poolKey(o);
  const pool = p ? cache.get('IPPool', p.ns, p.name) : undefined;
  return pool && isDeleting(pool) ? [{ kind: 'IPPool', object: pool }] : [];
}

function pendingClaimsOfPool(pool: { ns: string; name: string }, cache: CacheView): Target[] {
  return cache
    .list('IPClaim', pool.ns)
    .filter(
      (c) =>
        !isDeleting(c) && !status(c).address && poolKey(c)?.name === pool.name && poolKey(c)?.ns === pool.ns,
    )
    .map((object) => ({ kind: 'IPClaim', object }));
}

/** The template a claim or Metal3Data names (spec.template), else its Metal3DataTemplate owner. */
function templateOf(o: KubeObject, cache: CacheView): KubeObject | undefined {
  const ref = spec(o).template as Any | undefined;
  if (ref?.name) return cache.get('Metal3DataTemplate', ref.namespace || nsOf(o), ref.name);
  const owner = ownerOfKind(o, 'Metal3DataTemplate', true) ?? ownerOfKind(o, 'Metal3DataTemplate');
  return owner ? cache.get('Metal3DataTemplate', nsOf(o), owner.name) : undefined;
}

/** The template of a claim or Metal3Data, when it is being deleted (it waits for them). */
function deletingTemplateOf(o: KubeObject, cache: CacheView): Target[] {
  const t = templateOf(o, cache);
  return t && isDeleting(t) ? [{ kind: 'Metal3DataTemplate', object: t }] : [];
}

const TEMPLATE_FINALIZER = FINALIZER.dataTemplate;
const POOL_FINALIZER = FINALIZER.ipPool;
const hasOwn = (o: KubeObject, f: string) => (md(o).finalizers?.includes(f) ? true : undefined);
/** A Metal3DataTemplate as allocateIndex reads it: spec (the links of its data) and its deletion. */
const templateForAllocate = (o: KubeObject): unknown => [spec(o), md(o).deletionTimestamp];
/** What allocateIndex writes on a template itself: its finalizer, cluster label, Metal3Cluster owner. */
const templateOwnByAllocate = (o: KubeObject): unknown[] => [
  hasOwn(o, TEMPLATE_FINALIZER),
  md(o).labels?.[CLUSTER_NAME_LABEL],
  ownerOfKind(o, 'Metal3Cluster')?.uid,
];

const templateGroup = (t: Target): string => {
  const ref = spec(t.object).template as Any | undefined;
  return ref?.name
    ? objectGroup('Metal3DataTemplate', ref.namespace || nsOf(t.object), ref.name)
    : objectGroup('Metal3DataClaim', nsOf(t.object), t.object.metadata.name ?? '');
};
const poolGroup = (t: Target): string => {
  const p = poolKey(t.object);
  return p
    ? objectGroup('IPPool', p.ns, p.name)
    : objectGroup('IPClaim', nsOf(t.object), t.object.metadata.name ?? '');
};

const machines = (
  list: (KubeObject | undefined)[],
  pred: (m: KubeObject) => boolean = () => true,
): Target[] =>
  list
    .filter((m): m is KubeObject => m !== undefined && pred(m))
    .map((object) => ({ kind: 'Metal3Machine', object }));
const notDeleting = (o: KubeObject) => !isDeleting(o);

/** The Metal3Machines a workload Node belongs to, by every way the ProviderID workflow finds them. */
export function machinesOfNode(node: KubeObject, cluster: string, cache: CacheView): KubeObject[] {
  const [clusterNs = '', clusterName = ''] = cluster.split('/');
  const out: (KubeObject | undefined)[] = [];
  const uuid = node.metadata.labels?.[NODE_UUID_LABEL];
  if (uuid) {
    const bmh = cache.byUid('BareMetalHost', uuid);
    if (bmh) out.push(consumerMachine(bmh, cache));
  }
  const pid = String(spec(node).providerID ?? '');
  if (pid.startsWith('metal3://')) {
    const rest = pid.slice('metal3://'.length);
    const parts = rest.split('/');
    if (parts.length === 3) {
      out.push(cache.get('Metal3Machine', parts[0], parts[2]!));
    } else if (parts.length === 1 && rest) {
      const bmh = cache.byUid('BareMetalHost', rest);
      if (bmh) out.push(consumerMachine(bmh, cache));
    }
  }
  const hostname = node.metadata.labels?.[HOSTNAME_LABEL];
  if (hostname) {
    for (const m of cache.list('Metal3Machine', clusterNs)) {
      const label = m.metadata.labels?.[CLUSTER_NAME_LABEL];
      if (label !== undefined && label !== clusterName) continue;
      const addrs = (status(m).addresses ?? []) as Any[];
      if (addrs.some((a) => a?.type === 'Hostname' && a?.address === hostname)) out.push(m);
    }
  }
  const seen = new Set<string>();
  return out.filter((m): m is KubeObject => {
    if (!m || m.metadata.namespace !== clusterNs) return false;
    const k = m.metadata.name ?? '';
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

// ---- the table

export const ROUTES: readonly Route[] = [
  // selectHost
  {
    name: 'Metal3Machine (not deleting) → selectHost',
    on: 'Metal3Machine',
    fn: 'selectHost',
    reads: [],
    targets: 'self',
    when: (ev) => liveNotDeleting(ev) && changedOrOwnLost(m3mForSelectHost, m3mOwnBySelectHost)(ev),
  },
  {
    name: 'Metal3MachineTemplate → selectHost (automatedCleaningMode)',
    on: 'Metal3MachineTemplate',
    fn: 'selectHost',
    reads: [],
    targets: 'self',
    when: live,
  },
  {
    name: 'BareMetalHost → its consumer Metal3Machine',
    on: 'BareMetalHost',
    fn: 'selectHost',
    reads: ['Metal3Machine'],
    when: changedOrOwnLost(hostForSelectHost, hostProvisioning),
    targets: (ev, c) => machines([consumerMachine(ev.object, c)], notDeleting),
  },
  {
    name: 'BareMetalHost becoming free → Metal3Machines of its namespace without a host',
    on: 'BareMetalHost',
    fn: 'selectHost',
    reads: ['Metal3Machine'],
    when: (ev) => live(ev) && isFreeHost(ev.object) && (!ev.old || ev.resync === true || !isFreeHost(ev.old)),
    targets: (ev, c) =>
      machines(
        c.list('Metal3Machine', nsOf(ev.object)),
        (m) => !isDeleting(m) && !m.metadata.annotations?.[HOST_ANNOTATION],
      ),
  },
  {
    name: 'Machine → its Metal3Machine (infrastructureRef)',
    on: 'Machine',
    fn: 'selectHost',
    reads: ['Metal3Machine'],
    when: changed(machineForSelectHost),
    targets: (ev, c) => machines([infraMachineOfMachine(ev.object, c)], notDeleting),
  },
  {
    name: 'Cluster → its Metal3Machines (cluster-name label)',
    on: 'Cluster',
    fn: 'selectHost',
    reads: ['Metal3Machine'],
    when: changed(clusterForSelectHost),
    targets: (ev, c) =>
      machines(
        c.list('Metal3Machine', nsOf(ev.object)),
        (m) => !isDeleting(m) && m.metadata.labels?.[CLUSTER_NAME_LABEL] === ev.object.metadata.name,
      ),
  },
  {
    name: 'Metal3DataClaim status → its Metal3Machine',
    on: 'Metal3DataClaim',
    fn: 'selectHost',
    reads: ['Metal3Machine'],
    when: changedFromEmpty((o) => (o as Any).status),
    targets: (ev, c) => machines([claimOwnerMachine(ev.object, c)], notDeleting),
  },
  {
    name: 'Metal3Data ready → its claim’s Metal3Machine',
    on: 'Metal3Data',
    fn: 'selectHost',
    reads: ['Metal3DataClaim', 'Metal3Machine'],
    when: changedFromEmpty((o) => [(o as Any).status?.ready, (o as Any).status?.errorMessage]),
    targets: (ev, c) => machines([dataMachine(ev.object, c)], notDeleting),
  },
  {
    name: 'Secret (metaData / networkData / bootstrap data) → the Metal3Machines using it',
    on: 'Secret',
    fn: 'selectHost',
    reads: ['Metal3Machine', 'Machine'],
    targets: (ev, c) => {
      const ns = nsOf(ev.object);
      const name = ev.object.metadata.name;
      const refers = (ref: Any | undefined, owner: KubeObject) =>
        ref !== undefined && ref.name === name && (ref.namespace || nsOf(owner)) === ns;
      const direct = c
        .list('Metal3Machine', ns)
        .filter((m) => refers(spec(m).metaData, m) || refers(spec(m).networkData, m));
      const viaBootstrap = c
        .list('Machine', ns)
        .filter((m) => spec(m).bootstrap?.dataSecretName === name)
        .map((m) => infraMachineOfMachine(m, c));
      return machines([...direct, ...viaBootstrap], notDeleting);
    },
  },

  // reconcileCluster
  {
    name: 'Metal3Cluster → reconcileCluster',
    on: 'Metal3Cluster',
    fn: 'reconcileCluster',
    reads: [],
    targets: 'self',
    when: live,
  },
  {
    name: 'Cluster → its Metal3Cluster (infrastructureRef)',
    on: 'Cluster',
    fn: 'reconcileCluster',
    reads: ['Metal3Cluster'],
    targets: (ev, c) => {
      const ref = spec(ev.object).infrastructureRef as Any | undefined;
      const m3c =
        ref?.kind === 'Metal3Cluster'
          ? c.get('Metal3Cluster', ref.namespace || nsOf(ev.object), ref.name)
          : undefined;
      return m3c ? [{ kind: 'Metal3Cluster', object: m3c }] : [];
    },
  },

  // allocateIndex (serialized per template / per pool)
  {
    name: 'Metal3DataClaim (not deleting) → allocateIndex, grouped by template',
    on: 'Metal3DataClaim',
    fn: 'allocateIndex',
    reads: [],
    targets: 'self',
    when: (ev) =>
      liveNotDeleting(ev) &&
      changedBesidesOwnStatus((o, n) => !o.renderedData && Boolean(n.renderedData) && !n.errorMessage)(ev),
    group: templateGroup,
  },
  {
    name: 'IPClaim (not deleting) → allocateIndex, grouped by pool',
    on: 'IPClaim',
    fn: 'allocateIndex',
    reads: [],
    targets: 'self',
    when: (ev) =>
      liveNotDeleting(ev) &&
      changedBesidesOwnStatus((o, n) => !o.address && Boolean(n.address) && !n.errorMessage)(ev),
    group: poolGroup,
  },
  {
    name: 'Metal3DataTemplate → allocateIndex (finalizer; deletion waits for its claims and data)',
    on: 'Metal3DataTemplate',
    fn: 'allocateIndex',
    reads: [],
    targets: 'self',
    // Not its status (allocateIndex's own bookkeeping), nor the metadata it writes itself.
    when: (ev) => live(ev) && changedOrOwnLost(templateForAllocate, templateOwnByAllocate)(ev),
  },
  {
    name: 'Metal3DataTemplate created → the claims waiting for it',
    on: 'Metal3DataTemplate',
    fn: 'allocateIndex',
    reads: ['Metal3DataClaim'],
    // A template created under a name claims wait for (they came first: "not found"). Not on
    // resyncs: a claim with an error would only repeat it.
    when: (ev) => liveNotDeleting(ev) && ev.resync !== true && changed((o) => md(o).uid)(ev),
    targets: (ev, c) =>
      c
        .list('Metal3DataClaim', nsOf(ev.object))
        .filter(
          (cl) =>
            !isDeleting(cl) &&
            !status(cl).renderedData &&
            spec(cl).template?.name === ev.object.metadata.name &&
            (spec(cl).template?.namespace || nsOf(cl)) === nsOf(ev.object),
        )
        .map((object) => ({ kind: 'Metal3DataClaim', object })),
    group: templateGroup,
  },
  {
    name: 'Metal3DataClaim gone → its deleting Metal3DataTemplate',
    on: 'Metal3DataClaim',
    fn: 'allocateIndex',
    reads: ['Metal3DataTemplate'],
    when: (ev) => ev.type === 'DELETED',
    targets: (ev, c) => deletingTemplateOf(ev.object, c),
  },
  {
    name: 'Metal3Data gone → its deleting Metal3DataTemplate',
    on: 'Metal3Data',
    fn: 'allocateIndex',
    reads: ['Metal3DataTemplate'],
    when: (ev) => ev.type === 'DELETED',
    targets: (ev, c) => deletingTemplateOf(ev.object, c),
  },
  {
    name: 'IPPool → allocateIndex (finalizer; deletion waits for its addresses and claims)',
    on: 'IPPool',
    fn: 'allocateIndex',
    reads: [],
    targets: 'self',
    // Its deletion, or our finalizer lost; not its status nor the finalizer appearing (our writes).
    when: (ev) =>
      live(ev) &&
      changedOrOwnLost(
        (o) => md(o).deletionTimestamp,
        (o) => [hasOwn(o, POOL_FINALIZER)],
      )(ev),
  },
  {
    name: 'IPAddress gone → its deleting IPPool',
    on: 'IPAddress',
    fn: 'allocateIndex',
    reads: ['IPPool'],
    when: (ev) => ev.type === 'DELETED',
    targets: (ev, c) => deletingPoolOf(ev.object, c),
  },
  {
    name: 'IPClaim gone → its deleting IPPool',
    on: 'IPClaim',
    fn: 'allocateIndex',
    reads: ['IPPool'],
    when: (ev) => ev.type === 'DELETED',
    targets: (ev, c) => deletingPoolOf(ev.object, c),
  },
  {
    name: 'IPPool change → its pending IPClaims',
    on: 'IPPool',
    fn: 'allocateIndex',
    reads: ['IPClaim'],
    // Not its status (allocateIndex's own bookkeeping of allocations): addresses freed reach the
    // pending claims through the IPAddress deletion route.
    when: changed((o) => [spec(o), o.metadata.labels, o.metadata.annotations]),
    targets: (ev, c) => pendingClaimsOfPool({ ns: nsOf(ev.object), name: ev.object.metadata.name ?? '' }, c),
    group: poolGroup,
  },
  {
    name: 'IPAddress deleted → its pool’s pending IPClaims',
    on: 'IPAddress',
    fn: 'allocateIndex',
    reads: ['IPClaim'],
    when: (ev) => ev.type === 'DELETED',
    targets: (ev, c) => {
      const p = poolKey(ev.object);
      return p ? pendingClaimsOfPool(p, c) : [];
    },
    group: poolGroup,
  },

  // renderData
  {
    name: 'Metal3Data (not deleting) → renderData',
    on: 'Metal3Data',
    fn: 'renderData',
    reads: [],
    targets: 'self',
    when: (ev) =>
      liveNotDeleting(ev) &&
      changedBesidesOwnStatus(
        (o, n) => o.ready !== true && n.ready === true && !n.errorMessage,
        ['metaData', 'networkData'],
      )(ev),
  },
  {
    name: 'IPClaim address set → its Metal3Data',
    on: 'IPClaim',
    fn: 'renderData',
    reads: ['Metal3Data'],
    when: (ev) =>
      live(ev) && Boolean(status(ev.object).address) && changed((o) => (o as Any).status?.address)(ev),
    targets: (ev, c) => {
      const owner = ownerOfKind(ev.object, 'Metal3Data', true) ?? ownerOfKind(ev.object, 'Metal3Data');
      const data = owner ? c.get('Metal3Data', nsOf(ev.object), owner.name) : undefined;
      return data && !isDeleting(data) ? [{ kind: 'Metal3Data', object: data }] : [];
    },
  },
  {
    name: 'rendered Secret deleted → its Metal3Data',
    on: 'Secret',
    fn: 'renderData',
    reads: ['Metal3Data'],
    when: (ev) => ev.type === 'DELETED',
    targets: (ev, c) => {
      const owner = ownerOfKind(ev.object, 'Metal3Data');
      const data = owner ? c.get('Metal3Data', nsOf(ev.object), owner.name) : undefined;
      return data && !isDeleting(data) ? [{ kind: 'Metal3Data', object: data }] : [];
    },
  },

  // resolveProviderID
  {
    name: 'Metal3Machine with a host, not ready → resolveProviderID',
    on: 'Metal3Machine',
    fn: 'resolveProviderID',
    reads: [],
    targets: 'self',
    when: (ev) =>
      liveNotDeleting(ev) &&
      Boolean(ev.object.metadata.annotations?.[HOST_ANNOTATION]) &&
      !isMachineReady(ev.object) &&
      changedOrOwnLost(m3mForProviderID, (o) => [spec(o).providerID])(ev),
  },
  {
    name: 'BareMetalHost provisioned → its consumer Metal3Machine',
    on: 'BareMetalHost',
    fn: 'resolveProviderID',
    reads: ['Metal3Machine'],
    when: (ev) => live(ev) && hostState(ev.object) === 'provisioned' && changed(hostState)(ev),
    targets: (ev, c) => machines([consumerMachine(ev.object, c)], notDeleting),
  },
  {
    name: 'workload Node → its Metal3Machine (uuid label, providerID, hostname)',
    on: 'Node',
    scope: 'workload',
    fn: 'resolveProviderID',
    reads: ['BareMetalHost', 'Metal3Machine'],
    // spec.providerID appearing is resolveProviderID's own patch; its change or loss still wakes it.
    when: changedOrOwnLost(
      (o) => [o.metadata.labels?.[NODE_UUID_LABEL], o.metadata.labels?.[HOSTNAME_LABEL]],
      (o) => [(o as Any).spec?.providerID],
    ),
    targets: (ev, c) => machines(machinesOfNode(ev.object, ev.cluster ?? '', c), notDeleting),
  },

  // deprovision
  {
    name: 'Metal3Machine deleting → deprovision',
    on: 'Metal3Machine',
    fn: 'deprovision',
    reads: [],
    targets: 'self',
    when: liveDeleting,
  },
  {
    name: 'Metal3DataClaim deleting → deprovision',
    on: 'Metal3DataClaim',
    fn: 'deprovision',
    reads: [],
    targets: 'self',
    when: liveDeleting,
  },
  {
    name: 'Metal3Data deleting → deprovision',
    on: 'Metal3Data',
    fn: 'deprovision',
    reads: [],
    targets: 'self',
    when: liveDeleting,
  },
  {
    name: 'IPClaim deleting → deprovision',
    on: 'IPClaim',
    fn: 'deprovision',
    reads: [],
    targets: 'self',
    when: liveDeleting,
  },
  {
    name: 'BareMetalHost → its deleting consumer Metal3Machine',
    on: 'BareMetalHost',
    fn: 'deprovision',
    reads: ['Metal3Machine'],
    targets: (ev, c) => machines([consumerMachine(ev.object, c)], isDeleting),
  },
  {
    name: 'Metal3DataClaim gone → its deleting Metal3Machine and Metal3Data',
    on: 'Metal3DataClaim',
    fn: 'deprovision',
    reads: ['Metal3Machine', 'Metal3Data'],
    when: (ev) => ev.type === 'DELETED',
    targets: (ev, c) => {
      const out: Target[] = machines([claimOwnerMachine(ev.object, c)], isDeleting);
      const rendered = status(ev.object).renderedData as Any | undefined;
      const data = rendered?.name
        ? c.get('Metal3Data', rendered.namespace || nsOf(ev.object), rendered.name)
        : undefined;
      if (data && isDeleting(data)) out.push({ kind: 'Metal3Data', object: data });
      return out;
    },
  },
  {
    name: 'IPClaim gone → its deleting Metal3Data',
    on: 'IPClaim',
    fn: 'deprovision',
    reads: ['Metal3Data'],
    when: (ev) => ev.type === 'DELETED',
    targets: (ev, c) => {
      const owner = ownerOfKind(ev.object, 'Metal3Data');
      const data = owner ? c.get('Metal3Data', nsOf(ev.object), owner.name) : undefined;
      return data && isDeleting(data) ? [{ kind: 'Metal3Data', object: data }] : [];
    },
  },
];

/** Kinds the relay watches in the management cluster, and in each workload cluster. */
export function watchedKinds(routes: readonly Route[] = ROUTES): {
  management: KindName[];
  workload: KindName[];
} {
  const mgmt = new Set<KindName>();
  const workload = new Set<KindName>();
  for (const r of routes) {
    (r.scope === 'workload' ? workload : mgmt).add(r.on);
    for (const k of r.reads) mgmt.add(k);
  }
  return { management: [...mgmt], workload: [...workload] };
}

/** Kinds the routes on `kind` read from the cache (what a cache-less runtime must pre-load). */
export function kindsReadFor(kind: string, routes: readonly Route[] = ROUTES): KindName[] {
  return [...new Set(routes.filter((r) => r.on === kind).flatMap((r) => r.reads))];
}

const REASON_OF: Record<RoutingEventType, 'added' | 'modified' | 'deleted'> = {
  ADDED: 'added',
  MODIFIED: 'modified',
  DELETED: 'deleted',
};

/** Routes one event: the messages it causes, one per function and object at most. */
export function route(
  ev: RoutingEvent,
  cache: CacheView,
  routes: readonly Route[] = ROUTES,
): RoutedMessage[] {
  const kind = ev.object.kind;
  const scope = ev.cluster && ev.cluster !== 'management' ? 'workload' : 'management';
  const out: RoutedMessage[] = [];
  const seen = new Set<string>();
  for (const r of routes) {
    if (r.on !== kind || (r.scope ?? 'management') !== scope) continue;
    if (r.when && !r.when(ev)) continue;
    const self = r.targets === 'self';
    if (self && scope === 'workload') continue; // functions take management keys only
    const targets: Target[] = self
      ? [{ kind: r.on, object: ev.object }]
      : (r.targets as Exclude<Route['targets'], 'self'>)(ev, cache);
    for (const t of targets) {
      const md = t.object.metadata;
      if (!md.name) continue;
      const dedup = `${r.fn}|${t.kind}|${md.namespace ?? ''}|${md.name}`;
      if (seen.has(dedup)) continue;
      seen.add(dedup);
      const candidate = {
        v: 1,
        function: r.fn,
        cluster: 'management',
        apiVersion: t.object.apiVersion ?? apiVersionOf(R[t.kind]),
        kind: t.kind,
        ...(md.namespace ? { namespace: md.namespace } : {}),
        name: md.name,
        ...(md.uid ? { uid: md.uid } : {}),
        ...(md.resourceVersion ? { resourceVersion: md.resourceVersion } : {}),
        reason: self ? (ev.resync ? 'resync' : REASON_OF[ev.type]) : 'related',
        ...(self ? {} : { cause: causeOf(ev) }),
      };
      const parsed = MessageEnvelope.safeParse(candidate);
      if (!parsed.success) continue; // an object name no envelope can carry; nothing to do for it
      const group = r.group ? r.group(t) : objectGroup(t.kind, md.namespace, md.name);
      out.push({ msg: parsed.data, group: groupId(group) });
    }
  }
  return out;
}

/** `Kind/namespace/name@resourceVersion` (with `cluster:` for workload objects; `#resync` on resyncs). */
export function causeOf(ev: RoutingEvent): string {
  const md = ev.object.metadata;
  const where = ev.cluster && ev.cluster !== 'management' ? `${ev.cluster}:` : '';
  return `${where}${ev.object.kind}/${md.namespace ?? ''}/${md.name ?? ''}@${md.resourceVersion ?? ''}${ev.type === 'DELETED' ? '#deleted' : ''}${ev.resync ? `#resync` : ''}`.slice(
    0,
    400,
  );
}
