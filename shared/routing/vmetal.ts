/**
 * The vMetal objects an event concerns besides its own (ADR 018, "Routing"): a host's NodeClaim,
 * an IPClaim's or IPAddress's claim, the NodeTypes whose capacity a host counts in, the claims
 * that wait for an object to appear; and what each function reads of a NodeClaim.
 */
import { type BareMetalHost, BareMetalHostSchema } from '../api/baremetalhost.ts';
import { HostSelectorSchema } from '../api/hostselector.ts';
import { listOf, recordOf, stringOf } from '../api/json.ts';
import { VMETAL_GROUP } from '../api/resources.ts';
import {
  FINALIZER,
  HOST_PAUSED_ANNOTATION,
  NODE_CLAIM_LABEL,
  UNHEALTHY_ANNOTATIONS,
  VMETAL_CLAIM_UID_LABEL,
} from '../api/wellknown.ts';
import type { KubeObject } from '../kube/types.ts';
import {
  type CapacityClass,
  capacityClass,
  compileTypeSelection,
  sameCapacityClass,
  type TypeSelection,
} from '../vmetal/eligibility.ts';
import type { CacheView } from './cache.ts';
import { fieldOf, groupOf, isDeleting, nsOf, refOf, spec, status } from './predicates.ts';
import { hasOwn, md } from './readers.ts';
import { targetsOf } from './related.ts';
import type { RoutingEvent, Target } from './types.ts';

export const claims = targetsOf('NodeClaim');

/** The NodeClaim holding a host: its consumerRef (kind NodeClaim of our group), else its node-claim label (uid). */
export function claimOfHost(bmh: KubeObject, cache: CacheView): KubeObject | undefined {
  const ref = refOf(spec(bmh).consumerRef);
  if (ref.kind === 'NodeClaim' && ref.name && (!ref.apiVersion || groupOf(ref.apiVersion) === VMETAL_GROUP))
    return cache.get('NodeClaim', ref.namespace || nsOf(bmh), ref.name);
  const uid = bmh.metadata.labels?.[NODE_CLAIM_LABEL];
  return uid ? cache.byUid('NodeClaim', uid) : undefined;
}

/** The NodeClaim an IPClaim or IPAddress serves (label `vmetal.metal3fn.io/node-claim-uid`). */
export function claimOfAddress(o: KubeObject, cache: CacheView): KubeObject | undefined {
  const uid = o.metadata.labels?.[VMETAL_CLAIM_UID_LABEL];
  return uid ? cache.byUid('NodeClaim', uid) : undefined;
}

/** Whether an object is a vMetal claim's IPClaim or IPAddress (the label our selectHost sets). */
export const isClaimAddress = (o: KubeObject): boolean =>
  Boolean(o.metadata.labels?.[VMETAL_CLAIM_UID_LABEL]);

/** The provider a NodeType or NodeClaim names (`spec.providerRef`), else the claim's type's provider. */
export function providerOf(o: KubeObject, cache: CacheView): KubeObject | undefined {
  const direct = stringOf(spec(o).providerRef);
  const typeName = stringOf(spec(o).typeRef) || stringOf(status(o).nodeType);
  // Both looked up at once (routing by lookup reads them in one round).
  const provider = direct ? cache.get('NodeProvider', undefined, direct) : undefined;
  const type = typeName ? cache.get('NodeType', undefined, typeName) : undefined;
  if (direct) return provider;
  const viaType = type ? stringOf(spec(type).providerRef) : undefined;
  return viaType ? cache.get('NodeProvider', undefined, viaType) : undefined;
}

/** The NodeTypes of the providers whose hosts live in `namespace` (their capacity counts its hosts). */
export function nodeTypesOfHostNamespace(namespace: string, cache: CacheView): Target[] {
  const providers = new Set(
    cache
      .list('NodeProvider')
      .filter((p) => fieldOf(p, 'spec', 'metal3', 'clusterRef', 'namespace') === namespace)
      .map((p) => p.metadata.name),
  );
  if (providers.size === 0) return [];
  return cache
    .list('NodeType')
    .filter((t) => !isDeleting(t) && providers.has(stringOf(spec(t).providerRef)))
    .map((object) => ({ kind: 'NodeType', object }));
}

/**
 * A provider whose pass waits for NodeClaims to go (functions/select-host/nodeprovider.ts): being
 * deleted, or NodeTypesSynced False (a removed type still in use is said there).
 */
export const providerWaitsForClaims = (p: KubeObject): boolean =>
  isDeleting(p) ||
  listOf(status(p).conditions).some(
    (c) => fieldOf(c, 'type') === 'NodeTypesSynced' && fieldOf(c, 'status') === 'False',
  );

/** The NodeTypes a provider made (its `nodeTypes[]` names, or owned by it). */
export function nodeTypesOfProvider(provider: KubeObject, cache: CacheView): Target[] {
  const name = provider.metadata.name;
  return cache
    .list('NodeType')
    .filter((t) => !isDeleting(t) && stringOf(spec(t).providerRef) === name)
    .map((object) => ({ kind: 'NodeType', object }));
}

/** The NodeProviders whose `nodeTypes[]` name a NodeType (one that went may free a name in conflict). */
export function providersNamingType(typeName: string, cache: CacheView): Target[] {
  return cache
    .list('NodeProvider')
    .filter((p) =>
      listOf(fieldOf(p, 'spec', 'metal3', 'nodeTypes')).some((e) => fieldOf(e, 'name') === typeName),
    )
    .map((object) => ({ kind: 'NodeProvider', object }));
}

/** Reasons a claim waits for capacity (a host, a type with a free host): a host freed may end them. */
export const CAPACITY_WAITS: readonly string[] = [
  'NoEligibleHost',
  'PinnedHostUnavailable',
  'NoNodeTypeAvailable',
];

const pendingWith = (c: KubeObject, reasons: readonly string[]): boolean =>
  !isDeleting(c) && status(c).phase === 'Pending' && reasons.includes(stringOf(status(c).reason) ?? '');

/** Claims (of `namespace`, or all) Pending with one of `reasons`. */
export function claimsWaiting(cache: CacheView, reasons: readonly string[], namespace?: string): Target[] {
  return claims(cache.list('NodeClaim', namespace), (c) => pendingWith(c, reasons));
}

/** Claims without a host waiting for capacity. */
export function claimsWaitingForHost(cache: CacheView): Target[] {
  return claims(cache.list('NodeClaim'), (c) => pendingWith(c, CAPACITY_WAITS) && !status(c).host);
}

/**
 * A NodeClaim as selectHost reads it: spec, labels, annotations, other finalizers, deletion. Its
 * status is written by selectHost, renderData and resolveProviderID; our finalizer is selectHost's
 * own write (`claimOwnBySelectHost`).
 */
export const claimForSelectHost = (o: KubeObject): unknown => [
  spec(o),
  md(o).labels,
  md(o).annotations,
  (md(o).finalizers ?? []).filter((f) => f !== FINALIZER.nodeClaim),
  md(o).deletionTimestamp,
];
export const claimOwnBySelectHost = (o: KubeObject): unknown[] => [hasOwn(o, FINALIZER.nodeClaim)];

/**
 * A NodeClaim as renderData and resolveProviderID read it: what selectHost read, and what it
 * recorded of its choice (host, type, merged properties). Phase, conditions, address and Node name
 * are the later steps' own writes.
 */
export const claimWithHost = (o: KubeObject): unknown => [
  spec(o),
  md(o).labels,
  md(o).annotations,
  md(o).deletionTimestamp,
  status(o).host,
  status(o).hostNamespace,
  status(o).nodeType,
  status(o).properties,
];

/**
 * What of a host its capacity class can depend on (capacityClass: matching, held, eligible, the
 * claim's type): labels, the pause and unhealthy annotations, deletion, whether anyone holds it,
 * whether it is available, in error, and its inventory. A cheap first test before the NodeTypes
 * are looked at (routing by lookup then reads nothing for a heartbeat).
 */
export const hostForCapacity = (o: KubeObject): unknown => {
  const ann = md(o).annotations ?? {};
  return [
    md(o).labels,
    [HOST_PAUSED_ANNOTATION, ...UNHEALTHY_ANNOTATIONS].filter((a) => Object.hasOwn(ann, a)),
    Boolean(md(o).deletionTimestamp),
    Boolean(spec(o).consumerRef),
    fieldOf(o, 'status', 'provisioning', 'state') === 'available',
    Boolean(status(o).errorMessage) || status(o).operationalStatus === 'error',
    fieldOf(o, 'status', 'hardware', 'cpu'),
    fieldOf(o, 'status', 'hardware', 'ramMebibytes'),
  ];
};

/** A NodeType's selection as its capacity counts hosts; null when it does not compile (its status says why). */
const selections = new WeakMap<KubeObject, TypeSelection | null>();
function selectionOf(t: KubeObject): TypeSelection | null {
  let sel = selections.get(t);
  if (sel === undefined) {
    const selector = HostSelectorSchema.optional().safeParse(
      fieldOf(t, 'spec', 'bareMetalHosts', 'selector'),
    );
    try {
      if (!selector.success) throw new Error('invalid host selector');
      const resources = recordOf(spec(t).resources);
      sel = compileTypeSelection({
        name: t.metadata.name ?? '',
        selector: selector.data,
        resources: Object.fromEntries(Object.entries(resources).map(([k, v]) => [k, String(v)])),
      });
    } catch {
      sel = null;
    }
    selections.set(t, sel);
  }
  return sel;
}

/** A cached host as the capacity class reads it: parsed once per object; undefined when it is not a valid host. */
const hosts = new WeakMap<KubeObject, BareMetalHost | null>();
function hostOf(h: KubeObject): BareMetalHost | undefined {
  let parsed = hosts.get(h);
  if (parsed === undefined) {
    const r = BareMetalHostSchema.safeParse(h);
    parsed = r.success ? r.data : null;
    hosts.set(h, parsed);
  }
  return parsed ?? undefined;
}

/**
 * Whether a host's change can move a NodeType's counts: its capacity class for the type before
 * and after (shared/vmetal/eligibility.ts) differ. A host first seen (no previous state) counts
 * as coming from nowhere; a deleted one as going there. A host the class cannot be read of (not a
 * valid host) moves it, to be safe: the function decides.
 */
function movesCounts(ev: RoutingEvent, t: KubeObject, namespace: string): boolean {
  const sel = selectionOf(t);
  if (!sel) return false;
  const classOf = (h: KubeObject | undefined): CapacityClass | undefined => {
    if (!h) return 'out';
    const host = hostOf(h);
    if (!host) return undefined;
    try {
      return capacityClass(host, sel, namespace);
    } catch {
      return undefined;
    }
  };
  // A deletion carries the last state as its object.
  const before = classOf(ev.type === 'DELETED' ? (ev.old ?? ev.object) : ev.old);
  const after = classOf(ev.type === 'DELETED' ? undefined : ev.object);
  if (before === undefined || after === undefined) return true;
  return !sameCapacityClass(before, after);
}

/** The NodeTypes of the host's namespace whose counts its change moves (ADR 025). */
export function nodeTypesCountingHost(ev: RoutingEvent, cache: CacheView): Target[] {
  const namespace = nsOf(ev.object);
  return nodeTypesOfHostNamespace(namespace, cache).filter((t) => movesCounts(ev, t.object, namespace));
}

/** A host vMetal could claim: available (vMetal takes `available` only), free, not being deleted. */
export const isAvailableHost = (bmh: KubeObject): boolean =>
  !spec(bmh).consumerRef &&
  !isDeleting(bmh) &&
  fieldOf(bmh, 'status', 'provisioning', 'state') === 'available';

/**
 * Kinds a claim waits for by name (their `missingObject` message names them: `<Kind> [ns/]name not
 * found`). Not template Secrets: routing reads no Secret (a GET by name would bring its data into
 * the process, docs/security.md); a claim that missed one rechecks within 60 s.
 */
export const AWAITED_KINDS = [
  'NodeType',
  'NodeProvider',
  'NodeEnvironment',
  'OSImage',
  'SSHKey',
  'MachineConfigTemplate',
] as const;
const MISSING = /^(\w+) (?:([a-z0-9.-]+)\/)?([a-z0-9.-]+) not found/;

/**
 * A Pending claim whose wait names an object the cache already holds: the object appeared while
 * the claim was deciding to wait (its creation event routed before the claim's status said so).
 * The claim itself, to look again; nothing otherwise.
 */
export function claimIfAwaitedExists(claim: KubeObject, cache: CacheView): Target[] {
  const st = status(claim);
  if (isDeleting(claim) || st.phase !== 'Pending') return [];
  const m = MISSING.exec(stringOf(st.message) ?? '');
  const kind = AWAITED_KINDS.find((k) => k === m?.[1]);
  if (!m || !kind) return [];
  const namespaced = kind === 'NodeEnvironment';
  const found = cache.get(kind, namespaced ? m[2] || nsOf(claim) : undefined, m[3]!);
  return found ? [{ kind: 'NodeClaim', object: claim }] : [];
}
