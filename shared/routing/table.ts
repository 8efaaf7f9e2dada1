/**
 * The routing table: which functions an event concerns, and for which object keys. It is data (a
 * list of routes), pure (`(event, cache) → messages` through engine.ts), and tested on its own; the
 * relay, the HTTP runtime (Knative ApiServerSource events) and `replay --event` all route through it.
 *
 * A route names the kind it listens on, the function, the objects that get a message (the event's
 * object itself, or related objects found in the cache) and, for allocations, the FIFO group.
 * A message about the event's own object carries the event's reason; a message about a related
 * object carries reason `related` and the cause, so two causes for one unchanged object are not
 * deduplicated away by SQS.
 */
import {
  CLUSTER_NAME_LABEL,
  FINALIZER,
  HOST_ANNOTATION,
  HOSTNAME_LABEL,
  NODE_UUID_LABEL,
} from '../api/wellknown.ts';
import { allocationGroup, objectsOfCluster, unpaused } from './pause.ts';
import {
  changed,
  changedBesidesOwnStatus,
  changedFromEmpty,
  changedOrOwnLost,
  fieldOf,
  hostState,
  isDeleting,
  isFreeHost,
  isMachineReady,
  live,
  liveDeleting,
  liveNotDeleting,
  nsOf,
  ownerOfKind,
  refOf,
  spec,
  status,
} from './predicates.ts';
import {
  clusterForSelectHost,
  hasOwn,
  hostForSelectHost,
  hostProvisioning,
  m3mForProviderID,
  m3mForSelectHost,
  m3mOwnBySelectHost,
  machineForSelectHost,
  md,
  ownPause,
  templateForAllocate,
  templateOwnByAllocate,
} from './readers.ts';
import {
  claimOwnerMachine,
  consumerMachine,
  dataMachine,
  deletingPoolOf,
  deletingTemplateOf,
  infraMachineOfMachine,
  machines,
  machinesOfNode,
  notDeleting,
  pendingClaimsOfPool,
  poolGroup,
  poolKey,
  templateGroup,
} from './related.ts';
import { VMETAL_ROUTES } from './table-vmetal.ts';
import type { Route, Target } from './types.ts';

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
    lists: ['Metal3Machine'],
    // Not on a resync: every waiting Metal3Machine is re-emitted to selectHost by its own resync, and
    // F free hosts each waking W waiting machines was F×W messages per resync (O(fleet²)).
    when: (ev) => live(ev) && isFreeHost(ev.object) && ev.resync !== true && (!ev.old || !isFreeHost(ev.old)),
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
    lists: ['Metal3Machine'],
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
    when: changedFromEmpty((o) => o.status),
    targets: (ev, c) => machines([claimOwnerMachine(ev.object, c)], notDeleting),
  },
  {
    name: 'Metal3Data ready → its claim’s Metal3Machine',
    on: 'Metal3Data',
    fn: 'selectHost',
    reads: ['Metal3DataClaim', 'Metal3Machine'],
    when: changedFromEmpty((o) => [fieldOf(o, 'status', 'ready'), fieldOf(o, 'status', 'errorMessage')]),
    targets: (ev, c) => machines([dataMachine(ev.object, c)], notDeleting),
  },
  {
    name: 'Secret (metaData / networkData / bootstrap data) → the Metal3Machines using it',
    on: 'Secret',
    fn: 'selectHost',
    reads: ['Metal3Machine', 'Machine'],
    lists: ['Metal3Machine', 'Machine'],
    targets: (ev, c) => {
      const ns = nsOf(ev.object);
      const name = ev.object.metadata.name ?? '';
      const direct = c.byIndex('metal3MachineDataSecret', ns, name);
      const viaBootstrap = c
        .byIndex('machineBootstrapSecret', ns, name)
        .map((m) => infraMachineOfMachine(m, c));
      return machines([...direct, ...viaBootstrap], notDeleting);
    },
  },

  {
    name: 'Cluster unpaused → its Metal3MachineTemplates (selectHost)',
    on: 'Cluster',
    fn: 'selectHost',
    reads: ['Metal3MachineTemplate'],
    lists: ['Metal3MachineTemplate'],
    when: unpaused,
    targets: (ev, c) => objectsOfCluster(ev.object, c, ['Metal3MachineTemplate'], (o) => !isDeleting(o)),
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
      const ref = refOf(spec(ev.object).infrastructureRef);
      const m3c =
        ref.kind === 'Metal3Cluster' && ref.name
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
    lists: ['Metal3DataClaim'],
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
            refOf(spec(cl).template).name === ev.object.metadata.name &&
            (refOf(spec(cl).template).namespace || nsOf(cl)) === nsOf(ev.object),
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
    // Its deletion, its pause, or our finalizer lost; not its status nor the finalizer appearing (our writes).
    when: (ev) =>
      live(ev) &&
      changedOrOwnLost(
        (o) => [md(o).deletionTimestamp, ownPause(o)],
        (o) => [hasOwn(o, FINALIZER.ipPool)],
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
    lists: ['IPClaim'],
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
    lists: ['IPClaim'],
    when: (ev) => ev.type === 'DELETED',
    targets: (ev, c) => {
      const p = poolKey(ev.object);
      return p ? pendingClaimsOfPool(p, c) : [];
    },
    group: poolGroup,
  },

  {
    name: 'Cluster unpaused → its claims, IPClaims, templates and pools (allocateIndex)',
    on: 'Cluster',
    fn: 'allocateIndex',
    reads: ['Metal3DataClaim', 'IPClaim', 'Metal3DataTemplate', 'IPPool'],
    lists: ['Metal3DataClaim', 'IPClaim', 'Metal3DataTemplate', 'IPPool'],
    when: unpaused,
    targets: (ev, c) =>
      objectsOfCluster(ev.object, c, ['Metal3DataClaim', 'IPClaim', 'Metal3DataTemplate', 'IPPool']),
    group: allocationGroup,
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
      live(ev) && Boolean(status(ev.object).address) && changed((o) => fieldOf(o, 'status', 'address'))(ev),
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

  {
    name: 'Cluster unpaused → its Metal3Data (renderData)',
    on: 'Cluster',
    fn: 'renderData',
    reads: ['Metal3Data'],
    lists: ['Metal3Data'],
    when: unpaused,
    targets: (ev, c) => objectsOfCluster(ev.object, c, ['Metal3Data'], (o) => !isDeleting(o)),
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
    lists: ['BareMetalHost', 'Metal3Machine'],
    // spec.providerID appearing is resolveProviderID's own patch; its change or loss still wakes it.
    when: changedOrOwnLost(
      (o) => [o.metadata.labels?.[NODE_UUID_LABEL], o.metadata.labels?.[HOSTNAME_LABEL]],
      (o) => [fieldOf(o, 'spec', 'providerID')],
    ),
    targets: (ev, c) => machines(machinesOfNode(ev.object, ev.cluster ?? '', c), notDeleting),
  },

  {
    name: 'Cluster unpaused → its Metal3Machines with a host (resolveProviderID)',
    on: 'Cluster',
    fn: 'resolveProviderID',
    reads: ['Metal3Machine'],
    lists: ['Metal3Machine'],
    when: unpaused,
    targets: (ev, c) =>
      objectsOfCluster(
        ev.object,
        c,
        ['Metal3Machine'],
        (m) => !isDeleting(m) && Boolean(m.metadata.annotations?.[HOST_ANNOTATION]) && !isMachineReady(m),
      ),
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
      const rendered = refOf(status(ev.object).renderedData);
      const data = rendered?.name
        ? c.get('Metal3Data', rendered.namespace || nsOf(ev.object), rendered.name)
        : undefined;
      if (data && isDeleting(data)) out.push({ kind: 'Metal3Data', object: data });
      return out;
    },
  },
  {
    name: 'Cluster unpaused → its deleting machines, claims, Metal3Data and IPClaims (deprovision)',
    on: 'Cluster',
    fn: 'deprovision',
    reads: ['Metal3Machine', 'Metal3DataClaim', 'Metal3Data', 'IPClaim'],
    when: unpaused,
    targets: (ev, c) =>
      objectsOfCluster(
        ev.object,
        c,
        ['Metal3Machine', 'Metal3DataClaim', 'Metal3Data', 'IPClaim'],
        isDeleting,
      ),
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

  // the vMetal path (ADR 018): NodeProvider, NodeType, NodeClaim and what concerns them
  ...VMETAL_ROUTES,
];
