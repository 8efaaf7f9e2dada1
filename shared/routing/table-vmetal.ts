/**
 * The vMetal routes (ADR 018, "Routing"): NodeProvider, NodeType and NodeClaim to their functions,
 * and the events of hosts, addresses, catalogue objects and tenant Nodes to the claims and types
 * they concern. Part of ROUTES (table.ts); same rules: data, pure, change predicates so a
 * function's own writes do not wake it again.
 */
import { stringOf } from '../api/json.ts';
import { FINALIZER } from '../api/wellknown.ts';
import { TEMPLATE_TYPE_LABEL } from '../vmetal/names.ts';
import {
  changed,
  changedOrOwnLost,
  fieldOf,
  hostState,
  isDeleting,
  live,
  liveDeleting,
  liveNotDeleting,
  nsOf,
  spec,
  status,
} from './predicates.ts';
import { hasOwn, hostForSelectHost, hostProvisioning, md } from './readers.ts';
import { notDeleting } from './related.ts';
import type { Route, RoutingEvent } from './types.ts';
import {
  AWAITED_KINDS,
  claimForSelectHost,
  claimIfAwaitedExists,
  claimOfAddress,
  claimOfHost,
  claimOwnBySelectHost,
  claims,
  claimsWaiting,
  claimsWaitingForHost,
  claimWithHost,
  hostForCapacity,
  isAvailableHost,
  isClaimAddress,
  nodeTypesCountingHost,
  nodeTypesOfProvider,
  providerOf,
  providersNamingType,
  providerWaitsForClaims,
} from './vmetal.ts';

/** A claim that has a host (selectHost recorded it): renderData and resolveProviderID take it from there. */
const hasHost = (ev: RoutingEvent) => Boolean(status(ev.object).host);
/** An object created (first seen; not a resync): claims waiting for it by name may go on. */
const appeared = (ev: RoutingEvent) => live(ev) && ev.resync !== true && changed((o) => md(o).uid)(ev);

/** A template Secret counts once it carries the label (an administrator's consent, ADR 018). */
const templateSecretLabelled = (ev: RoutingEvent) =>
  live(ev) &&
  ev.resync !== true &&
  Boolean(ev.object.metadata.labels?.[TEMPLATE_TYPE_LABEL]) &&
  changed((o) => [md(o).uid, o.metadata.labels?.[TEMPLATE_TYPE_LABEL]])(ev);

/** Catalogue kinds a claim waits for by name, and the wait reason it shows meanwhile (shared/vmetal/errors.ts). */
const WAITED_FOR = [
  { on: 'OSImage', reason: 'OSImageNotFound' },
  { on: 'SSHKey', reason: 'SSHKeyNotFound' },
  { on: 'MachineConfigTemplate', reason: 'TemplateNotFound' },
] as const;

/** A claim naming a NodeType or NodeProvider that does not exist yet waits with NoNodeTypeAvailable. */
const TYPE_WAITS = [
  { on: 'NodeType', reason: 'NoNodeTypeAvailable' },
  { on: 'NodeProvider', reason: 'NoNodeTypeAvailable' },
] as const;

export const VMETAL_ROUTES: readonly Route[] = [
  // selectHost: providers, types, claims
  {
    name: 'NodeProvider → selectHost (node types, pools, finalizer, status)',
    on: 'NodeProvider',
    fn: 'selectHost',
    reads: [],
    targets: 'self',
    // Its status and our finalizer appearing are selectHost's own writes.
    when: (ev) =>
      live(ev) &&
      changedOrOwnLost(
        (o) => [spec(o), md(o).labels, md(o).annotations, md(o).deletionTimestamp],
        (o) => [hasOwn(o, FINALIZER.nodeProvider)],
      )(ev),
  },
  {
    name: 'NodeProvider host namespace changed → its NodeTypes (capacity)',
    on: 'NodeProvider',
    fn: 'selectHost',
    reads: ['NodeType'],
    lists: ['NodeType'],
    when: (ev) => live(ev) && changed((o) => fieldOf(o, 'spec', 'metal3', 'clusterRef'))(ev),
    targets: (ev, c) => nodeTypesOfProvider(ev.object, c),
  },
  {
    name: 'NodeType (not deleting) → selectHost (phase, capacity)',
    on: 'NodeType',
    fn: 'selectHost',
    reads: [],
    targets: 'self',
    // Its status is selectHost's own write.
    when: (ev) => liveNotDeleting(ev) && changed((o) => [spec(o), md(o).labels, md(o).ownerReferences])(ev),
  },
  {
    name: 'NodeType gone → the NodeProviders naming it (a conflict may be over)',
    on: 'NodeType',
    fn: 'selectHost',
    reads: ['NodeProvider'],
    lists: ['NodeProvider'],
    when: (ev) => ev.type === 'DELETED',
    targets: (ev, c) => providersNamingType(ev.object.metadata.name ?? '', c),
  },
  {
    name: 'NodeClaim (not deleting) → selectHost',
    on: 'NodeClaim',
    fn: 'selectHost',
    reads: [],
    targets: 'self',
    when: (ev) => liveNotDeleting(ev) && changedOrOwnLost(claimForSelectHost, claimOwnBySelectHost)(ev),
  },
  {
    name: 'NodeClaim gone → its NodeProvider when it waits for claims (deletion, a removed type)',
    on: 'NodeClaim',
    fn: 'selectHost',
    reads: ['NodeProvider', 'NodeType'],
    when: (ev) => ev.type === 'DELETED',
    // Not a provider that waits for nothing: its pass would change nothing (and its claim scan
    // would read the claims left, on every deletion of a scale-down).
    targets: (ev, c) => {
      const p = providerOf(ev.object, c);
      return p && providerWaitsForClaims(p) ? [{ kind: 'NodeProvider', object: p }] : [];
    },
  },
  {
    name: 'BareMetalHost → the NodeTypes whose counts it moves (capacity follows hosts)',
    on: 'BareMetalHost',
    fn: 'selectHost',
    reads: ['NodeProvider', 'NodeType'],
    lists: ['NodeProvider', 'NodeType'],
    // Not resyncs of an unchanged host (their class does not change): each NodeType's own resync recounts.
    when: changed(hostForCapacity),
    targets: nodeTypesCountingHost,
  },
  {
    name: 'BareMetalHost becoming available → NodeClaims waiting for a host',
    on: 'BareMetalHost',
    fn: 'selectHost',
    reads: ['NodeClaim'],
    lists: ['NodeClaim'],
    // Not on resyncs: a waiting claim rechecks every 60 s anyway.
    when: (ev) =>
      live(ev) && ev.resync !== true && isAvailableHost(ev.object) && (!ev.old || !isAvailableHost(ev.old)),
    targets: (_ev, c) => claimsWaitingForHost(c),
  },
  {
    name: 'BareMetalHost → its NodeClaim (selectHost: a host in error fails the claim)',
    on: 'BareMetalHost',
    fn: 'selectHost',
    reads: ['NodeClaim'],
    lists: ['NodeClaim'],
    when: changed((o) => [status(o).errorMessage, status(o).errorType]),
    targets: (ev, c) => claims([claimOfHost(ev.object, c)], notDeleting),
  },
  {
    name: 'NodeClaim waiting for an object that exists meanwhile → selectHost (a wait decided as it appeared)',
    on: 'NodeClaim',
    fn: 'selectHost',
    reads: [...AWAITED_KINDS],
    when: (ev) => liveNotDeleting(ev) && changed((o) => [status(o).reason, status(o).message])(ev),
    targets: (ev, c) => claimIfAwaitedExists(ev.object, c),
  },
  {
    name: 'NodeEnvironment created → the claims of its namespace waiting for it',
    on: 'NodeEnvironment',
    fn: 'selectHost',
    reads: ['NodeClaim'],
    lists: ['NodeClaim'],
    when: appeared,
    targets: (ev, c) => claimsWaiting(c, ['NodeEnvironmentNotFound'], nsOf(ev.object)),
  },
  ...[...WAITED_FOR, ...TYPE_WAITS].map(
    ({ on, reason }): Route => ({
      name: `${on} created → the claims waiting for it (selectHost)`,
      on,
      fn: 'selectHost',
      reads: ['NodeClaim'],
      lists: ['NodeClaim'],
      when: appeared,
      targets: (_ev, c) => claimsWaiting(c, [reason]),
    }),
  ),
  {
    name: 'template Secret labelled → the claims waiting for it (selectHost)',
    on: 'Secret',
    fn: 'selectHost',
    reads: ['NodeClaim'],
    lists: ['NodeClaim'],
    when: templateSecretLabelled,
    targets: (_ev, c) => claimsWaiting(c, ['TemplateSecretNotFound']),
  },

  // renderData
  {
    name: 'NodeClaim with a host (not deleting) → renderData',
    on: 'NodeClaim',
    fn: 'renderData',
    reads: [],
    targets: 'self',
    when: (ev) => liveNotDeleting(ev) && hasHost(ev) && changed(claimWithHost)(ev),
  },
  {
    name: 'BareMetalHost → its NodeClaim (renderData)',
    on: 'BareMetalHost',
    fn: 'renderData',
    reads: ['NodeClaim'],
    lists: ['NodeClaim'],
    // The provisioning fields and network annotations are renderData's own writes.
    when: changedOrOwnLost(hostForSelectHost, hostProvisioning),
    targets: (ev, c) => claims([claimOfHost(ev.object, c)], notDeleting),
  },
  ...(['IPClaim', 'IPAddress'] as const).map(
    (on): Route => ({
      name: `${on} of a NodeClaim → the claim (renderData)`,
      on,
      fn: 'renderData',
      reads: ['NodeClaim'],
      lists: ['NodeClaim'],
      when: (ev) =>
        isClaimAddress(ev.object) &&
        changed((o) => [
          md(o).uid,
          status(o).address,
          status(o).errorMessage,
          spec(o).address,
          md(o).deletionTimestamp,
        ])(ev),
      targets: (ev, c) => claims([claimOfAddress(ev.object, c)], notDeleting),
    }),
  ),
  {
    name: 'template Secret labelled → the claims waiting for it (renderData)',
    on: 'Secret',
    fn: 'renderData',
    reads: ['NodeClaim'],
    lists: ['NodeClaim'],
    when: templateSecretLabelled,
    targets: (_ev, c) => claimsWaiting(c, ['TemplateSecretNotFound']).filter((t) => status(t.object).host),
  },
  {
    name: 'NodeClaim with a host waiting for an object that exists meanwhile → renderData',
    on: 'NodeClaim',
    fn: 'renderData',
    reads: [...AWAITED_KINDS],
    when: (ev) =>
      liveNotDeleting(ev) && hasHost(ev) && changed((o) => [status(o).reason, status(o).message])(ev),
    targets: (ev, c) => claimIfAwaitedExists(ev.object, c),
  },
  ...WAITED_FOR.map(
    ({ on, reason }): Route => ({
      name: `${on} created → the claims with a host waiting for it (renderData)`,
      on,
      fn: 'renderData',
      reads: ['NodeClaim'],
      lists: ['NodeClaim'],
      when: appeared,
      targets: (_ev, c) => claimsWaiting(c, [reason]).filter((t) => status(t.object).host),
    }),
  ),

  // resolveProviderID (Provisioned, Joined, Available)
  {
    name: 'NodeClaim with a host (not deleting) → resolveProviderID',
    on: 'NodeClaim',
    fn: 'resolveProviderID',
    reads: [],
    targets: 'self',
    when: (ev) => liveNotDeleting(ev) && hasHost(ev) && changed(claimWithHost)(ev),
  },
  {
    name: 'BareMetalHost provisioned → its NodeClaim (resolveProviderID)',
    on: 'BareMetalHost',
    fn: 'resolveProviderID',
    reads: ['NodeClaim'],
    lists: ['NodeClaim'],
    when: (ev) => live(ev) && hostState(ev.object) === 'provisioned' && changed(hostState)(ev),
    targets: (ev, c) => claims([claimOfHost(ev.object, c)], notDeleting),
  },
  {
    name: 'tenant Node → its NodeClaim (Node name = claim name, tenant = vClusterRef)',
    on: 'Node',
    scope: 'workload',
    fn: 'resolveProviderID',
    reads: ['NodeClaim'],
    // A Node registering, relabelled or deleted; not its heartbeats.
    when: changed((o) => [md(o).uid, md(o).labels]),
    targets: (ev, c) => {
      const [ns = '', tenant = ''] = (ev.cluster ?? '').split('/');
      const claim = c.get('NodeClaim', ns, ev.object.metadata.name ?? '');
      return claims([claim], (cl) => !isDeleting(cl) && stringOf(spec(cl).vClusterRef) === tenant);
    },
  },

  // deprovision
  {
    name: 'NodeClaim deleting (with our finalizer) → deprovision',
    on: 'NodeClaim',
    fn: 'deprovision',
    reads: [],
    targets: 'self',
    when: (ev) => liveDeleting(ev) && Boolean(hasOwn(ev.object, FINALIZER.nodeClaim)),
  },
  {
    name: 'BareMetalHost → its deleting NodeClaim',
    on: 'BareMetalHost',
    fn: 'deprovision',
    reads: ['NodeClaim'],
    lists: ['NodeClaim'],
    targets: (ev, c) => claims([claimOfHost(ev.object, c)], isDeleting),
  },
];
