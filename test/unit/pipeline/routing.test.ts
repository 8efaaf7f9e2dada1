/** The routing table on its own: events in, messages out, no I/O. */
import { describe, expect, it } from 'vitest';
import { deduplicationId } from '../../../events/envelope.ts';
import type { KindName } from '../../../shared/api/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { RelayCache } from '../../../shared/routing/cache.ts';
import { ROUTES, type RoutingEvent, route, watchedKinds } from '../../../shared/routing/index.ts';

const NS = 'metal3';
let rv = 100;
function obj(
  kind: string,
  name: string,
  extra: Record<string, any> = {},
  meta: Record<string, any> = {},
): KubeObject {
  rv++;
  return {
    kind,
    metadata: { name, namespace: NS, uid: `uid-${kind}-${name}`, resourceVersion: String(rv), ...meta },
    ...extra,
  };
}
const owner = (kind: string, name: string, controller = true) => ({
  apiVersion: 'x/v1',
  kind,
  name,
  uid: `uid-${kind}-${name}`,
  controller,
});

function world() {
  const c = new RelayCache();
  const put = (kind: KindName, o: KubeObject) => {
    c.store(kind).upsert(o);
    return o;
  };
  const m0 = put(
    'Metal3Machine',
    obj(
      'Metal3Machine',
      'm-0',
      { spec: { metaData: { name: 'user-meta' } } },
      {
        labels: { 'cluster.x-k8s.io/cluster-name': 'c1' },
        annotations: { 'metal3.io/BareMetalHost': `${NS}/host-0` },
      },
    ),
  );
  const m1 = put(
    'Metal3Machine',
    obj(
      'Metal3Machine',
      'm-1',
      { spec: {}, status: { addresses: [{ type: 'Hostname', address: 'node-one' }] } },
      {
        labels: { 'cluster.x-k8s.io/cluster-name': 'c1' },
      },
    ),
  );
  const mDel = put(
    'Metal3Machine',
    obj('Metal3Machine', 'm-del', {}, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
  );
  const host0 = put(
    'BareMetalHost',
    obj('BareMetalHost', 'host-0', {
      spec: {
        consumerRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'Metal3Machine',
          name: 'm-0',
          namespace: NS,
        },
      },
      status: { provisioning: { state: 'provisioning' } },
    }),
  );
  put(
    'Machine',
    obj('Machine', 'machine-0', {
      spec: {
        infrastructureRef: { kind: 'Metal3Machine', name: 'm-0' },
        bootstrap: { dataSecretName: 'boot-0' },
      },
    }),
  );
  const claim0 = put(
    'Metal3DataClaim',
    obj(
      'Metal3DataClaim',
      'm-0',
      { spec: { template: { name: 'tpl' } } },
      {
        ownerReferences: [owner('Metal3Machine', 'm-0')],
      },
    ),
  );
  const data0 = put(
    'Metal3Data',
    obj(
      'Metal3Data',
      'tpl-0',
      { spec: { claim: { name: 'm-0' }, template: { name: 'tpl' }, index: 0 } },
      {
        ownerReferences: [owner('Metal3DataClaim', 'm-0')],
      },
    ),
  );
  const ipc = put(
    'IPClaim',
    obj(
      'IPClaim',
      'tpl-0-pool',
      { spec: { pool: { name: 'pool' } } },
      { ownerReferences: [owner('Metal3Data', 'tpl-0')] },
    ),
  );
  put('IPClaim', obj('IPClaim', 'other-pool-claim', { spec: { pool: { name: 'other' } } }));
  put(
    'IPClaim',
    obj('IPClaim', 'done-claim', { spec: { pool: { name: 'pool' } }, status: { address: { name: 'a' } } }),
  );
  put('Metal3Cluster', obj('Metal3Cluster', 'c1'));
  return { c, m0, m1, mDel, host0, claim0, data0, ipc };
}

const summary = (ev: RoutingEvent, c: RelayCache) =>
  route(ev, c)
    .map((r) => `${r.msg.function} ${r.msg.kind}/${r.msg.name} ${r.msg.reason}`)
    .sort();

describe('routing table', () => {
  it('is data: every route names its kind, function and what it reads; the relay watches what routes need', () => {
    for (const r of ROUTES) {
      expect(r.name.length).toBeGreaterThan(5);
      expect(r.reads).toBeInstanceOf(Array);
    }
    const kinds = watchedKinds();
    expect(kinds.workload).toEqual(['Node']);
    for (const k of [
      'Metal3Machine',
      'BareMetalHost',
      'Machine',
      'Cluster',
      'Secret',
      'IPPool',
      'IPAddress',
      'Metal3DataClaim',
      'Metal3Data',
      'IPClaim',
      'Metal3Cluster',
      'Metal3MachineTemplate',
    ]) {
      expect(kinds.management).toContain(k);
    }
  });

  it('a Metal3Machine goes to selectHost; with a host and not ready also to resolveProviderID', () => {
    const { c, m0, m1 } = world();
    expect(summary({ type: 'ADDED', object: m1 }, c)).toEqual(['selectHost Metal3Machine/m-1 added']);
    expect(summary({ type: 'MODIFIED', object: m0 }, c)).toEqual([
      'resolveProviderID Metal3Machine/m-0 modified',
      'selectHost Metal3Machine/m-0 modified',
    ]);
    const ready = { ...m0, spec: { providerID: 'metal3://metal3/host-0/m-0' }, status: { ready: true } };
    expect(summary({ type: 'MODIFIED', object: ready }, c)).toEqual([
      'selectHost Metal3Machine/m-0 modified',
    ]);
    expect(summary({ type: 'MODIFIED', object: m0, resync: true }, c)).toContain(
      'selectHost Metal3Machine/m-0 resync',
    );
  });

  it('status-only changes wake only the functions that read that status', () => {
    const { c, m0, m1, host0 } = world();
    // A Metal3Machine's conditions written by the functions themselves wake nobody.
    const m0cond = { ...m0, status: { conditions: [{ type: 'AssociateBMH', status: 'True' }] } };
    expect(summary({ type: 'MODIFIED', object: m0cond, old: m0 }, c)).toEqual([]);
    // The addresses association wrote reach resolveProviderID (Node lookup by hostname), not selectHost.
    const m0addr = { ...m0, status: { addresses: [{ type: 'Hostname', address: 'h' }] } };
    expect(summary({ type: 'MODIFIED', object: m0addr, old: m0 }, c)).toEqual([
      'resolveProviderID Metal3Machine/m-0 modified',
    ]);
    // spec.providerID appearing is resolveProviderID's own write: nobody; changed by someone else: it.
    const m0pid = { ...m0, spec: { ...(m0 as any).spec, providerID: 'metal3://metal3/host-0/m-0' } };
    expect(summary({ type: 'MODIFIED', object: m0pid, old: m0 }, c)).toEqual([]);
    const m0pid2 = { ...m0, spec: { ...(m0 as any).spec, providerID: 'metal3://metal3/host-9/m-0' } };
    expect(summary({ type: 'MODIFIED', object: m0pid2, old: m0pid }, c)).toEqual([
      'resolveProviderID Metal3Machine/m-0 modified',
    ]);
    // The host annotation and the finalizer appearing are selectHost's own writes: not selectHost
    // again (resolveProviderID starts from the annotation); removed by someone else: selectHost.
    const bare = { ...m0, metadata: { ...m0.metadata, annotations: {} } };
    expect(summary({ type: 'MODIFIED', object: m0, old: bare }, c)).toEqual([
      'resolveProviderID Metal3Machine/m-0 modified',
    ]);
    expect(summary({ type: 'MODIFIED', object: bare, old: m0 }, c)).toEqual([
      'selectHost Metal3Machine/m-0 modified',
    ]);
    const fin = {
      ...m1,
      metadata: { ...m1.metadata, finalizers: ['metal3machine.infrastructure.cluster.x-k8s.io'] },
    };
    expect(summary({ type: 'MODIFIED', object: fin, old: m1 }, c)).toEqual([]);
    // The annotation appearing while the finalizer is already there: still only selectHost's write.
    const finAnn = {
      ...fin,
      metadata: { ...fin.metadata, annotations: { 'metal3.io/BareMetalHost': `${NS}/host-1` } },
    };
    expect(summary({ type: 'MODIFIED', object: finAnn, old: fin }, c)).toEqual([
      'resolveProviderID Metal3Machine/m-1 modified',
    ]);
    expect(summary({ type: 'MODIFIED', object: m1, old: fin }, c)).toEqual([
      'selectHost Metal3Machine/m-1 modified',
    ]);
    const m1owned = { ...m1, metadata: { ...m1.metadata, ownerReferences: [owner('Machine', 'x')] } };
    expect(summary({ type: 'MODIFIED', object: m1owned, old: m1 }, c)).toEqual([
      'selectHost Metal3Machine/m-1 modified',
    ]);
    const failed = { ...m1, status: { failureReason: 'X' } };
    expect(summary({ type: 'MODIFIED', object: m1, old: failed }, c)).toEqual([
      'selectHost Metal3Machine/m-1 modified',
    ]);
    // A host's power/heartbeat status: nobody; its hardware or leaving ready/available: its consumer.
    const beat = { ...host0, status: { ...(host0 as any).status, poweredOn: true, lastUpdated: 'now' } };
    expect(summary({ type: 'MODIFIED', object: beat, old: host0 }, c)).toEqual([]);
    // The provisioning fields selectHost writes, and the state moving on afterwards: nobody.
    const image = { url: 'http://i', checksum: 'c' };
    const prov = {
      ...host0,
      spec: { ...(host0 as any).spec, image, online: true, automatedCleaningMode: 'metadata' },
    };
    const avail = { ...host0, status: { provisioning: { state: 'available' } } };
    const availProv = { ...prov, status: { provisioning: { state: 'available' } } };
    expect(summary({ type: 'MODIFIED', object: availProv, old: avail }, c)).toEqual([]);
    expect(summary({ type: 'MODIFIED', object: prov, old: availProv }, c)).toEqual([]);
    // The image removed by someone else: its consumer.
    expect(summary({ type: 'MODIFIED', object: avail, old: availProv }, c)).toEqual([
      'selectHost Metal3Machine/m-0 related',
    ]);
    const hw = { ...host0, status: { ...(host0 as any).status, hardware: { hostname: 'n' } } };
    expect(summary({ type: 'MODIFIED', object: hw, old: host0 }, c)).toEqual([
      'selectHost Metal3Machine/m-0 related',
    ]);
    // A Machine's status (phase, nodeRef) does not concern selectHost; its bootstrap data does.
    const machine = c.get('Machine', NS, 'machine-0')!;
    const running = { ...machine, status: { phase: 'Running', nodeRef: { name: 'n' } } };
    expect(summary({ type: 'MODIFIED', object: running, old: machine }, c)).toEqual([]);
    const rebooted = { ...machine, spec: { ...(machine as any).spec, bootstrap: { dataSecretName: 'b2' } } };
    expect(summary({ type: 'MODIFIED', object: rebooted, old: machine }, c)).toEqual([
      'selectHost Metal3Machine/m-0 related',
    ]);
  });

  it('a write that only reorders keys (a parsed object written back) is no change: nobody is woken', () => {
    const { c, data0, m1 } = world();
    // renderData writes the refs into spec from its parsed copy, whose keys come in schema order.
    const rendered = {
      ...data0,
      spec: {
        index: 0,
        template: { name: 'tpl' },
        claim: { name: 'm-0' },
        metaData: { name: 'm-0-metadata-0' },
      },
    };
    expect(summary({ type: 'MODIFIED', object: rendered, old: data0 }, c)).toEqual([]);
    // The same reorder with a real change in it still wakes.
    const moved = { ...rendered, spec: { ...rendered.spec, index: 1 } };
    expect(summary({ type: 'MODIFIED', object: moved, old: data0 }, c)).toEqual([
      'renderData Metal3Data/tpl-0 modified',
    ]);
    const reordered = { status: m1.status, spec: m1.spec, metadata: m1.metadata, kind: m1.kind };
    expect(summary({ type: 'MODIFIED', object: reordered, old: m1 }, c)).toEqual([]);
  });

  it('a deleting Metal3Machine goes to deprovision only; a DELETED one to nobody', () => {
    const { c, mDel } = world();
    expect(summary({ type: 'MODIFIED', object: mDel }, c)).toEqual([
      'deprovision Metal3Machine/m-del modified',
    ]);
    expect(summary({ type: 'DELETED', object: mDel }, c)).toEqual([]);
  });

  it('a BareMetalHost event reaches its consumer; provisioned also wakes resolveProviderID, once per transition', () => {
    const { c, host0, m0 } = world();
    const msgs = route({ type: 'MODIFIED', object: host0 }, c);
    expect(msgs.map((m) => `${m.msg.function} ${m.msg.name} ${m.msg.reason}`)).toEqual([
      'selectHost m-0 related',
    ]);
    expect(msgs[0]!.msg.uid).toBe(m0.metadata.uid);
    expect(msgs[0]!.msg.cause).toBe(`BareMetalHost/${NS}/host-0@${host0.metadata.resourceVersion}`);
    const provisioned = { ...host0, status: { provisioning: { state: 'provisioned' } } };
    expect(summary({ type: 'MODIFIED', object: provisioned, old: host0 }, c)).toContain(
      'resolveProviderID Metal3Machine/m-0 related',
    );
    expect(summary({ type: 'MODIFIED', object: provisioned, old: provisioned }, c)).not.toContain(
      'resolveProviderID Metal3Machine/m-0 related',
    );
  });

  it('a host event for a deleting consumer goes to deprovision', () => {
    const { c } = world();
    const h = obj('BareMetalHost', 'host-d', {
      spec: { consumerRef: { kind: 'Metal3Machine', name: 'm-del' } },
      status: { provisioning: { state: 'deprovisioning' } },
    });
    expect(summary({ type: 'MODIFIED', object: h }, c)).toEqual(['deprovision Metal3Machine/m-del related']);
  });

  it('a host becoming free wakes the machines of its namespace that have no host yet', () => {
    const { c } = world();
    const busy = obj('BareMetalHost', 'host-1', {
      spec: { consumerRef: { kind: 'Metal3Machine', name: 'x' } },
      status: { provisioning: { state: 'deprovisioning' } },
    });
    const free = { ...busy, spec: {}, status: { provisioning: { state: 'available' } } };
    expect(summary({ type: 'MODIFIED', object: free, old: busy }, c)).toEqual([
      'selectHost Metal3Machine/m-1 related',
    ]);
    // Still free, nothing changed about that: no wake-up storm.
    expect(summary({ type: 'MODIFIED', object: free, old: free }, c)).toEqual([]);
    // Nor on a resync: the waiting machines are re-emitted by their own resync.
    expect(summary({ type: 'MODIFIED', object: free, old: free, resync: true }, c)).toEqual([]);
  });

  it("a Cluster unpaused (spec.paused or its annotation) wakes its objects in every function; other clusters' stay asleep", () => {
    const c = new RelayCache();
    const mine = { 'cluster.x-k8s.io/cluster-name': 'c9' };
    const put = (
      kind: KindName,
      name: string,
      extra: Record<string, any> = {},
      meta: Record<string, any> = {},
    ) => c.store(kind).upsert(obj(kind, name, extra, { labels: mine, ...meta }));
    put('Metal3DataClaim', 'claim-a', { spec: { template: { name: 'tpl9' } } });
    put('IPClaim', 'ipc-a', { spec: { pool: { name: 'pool9' } } });
    put('Metal3DataTemplate', 'tpl9', { spec: { clusterName: 'c9' } }, { labels: {} });
    put('IPPool', 'pool9', {});
    put('Metal3Data', 'tpl9-0', { spec: { claim: { name: 'claim-a' } } });
    put('Metal3Machine', 'gone-m', {}, { deletionTimestamp: '2026-01-01T00:00:00Z' });
    put('Metal3Machine', 'held-m', {}, { annotations: { 'metal3.io/BareMetalHost': `${NS}/h9` } });
    put('Metal3MachineTemplate', 'm3mt9', {});
    put(
      'Metal3DataClaim',
      'other-claim',
      { spec: { template: { name: 'x' } } },
      { labels: { 'cluster.x-k8s.io/cluster-name': 'c8' } },
    );
    const unpausedCluster = obj('Cluster', 'c9', { spec: {} });
    const expected = [
      'allocateIndex IPClaim/ipc-a related',
      'allocateIndex IPPool/pool9 related',
      'allocateIndex Metal3DataClaim/claim-a related',
      'allocateIndex Metal3DataTemplate/tpl9 related',
      'deprovision Metal3Machine/gone-m related',
      'renderData Metal3Data/tpl9-0 related',
      'resolveProviderID Metal3Machine/held-m related',
      'selectHost Metal3Machine/held-m related',
      'selectHost Metal3MachineTemplate/m3mt9 related',
    ];
    for (const old of [
      obj('Cluster', 'c9', { spec: { paused: true } }),
      obj('Cluster', 'c9', { spec: {} }, { annotations: { 'cluster.x-k8s.io/paused': '' } }),
    ]) {
      expect(summary({ type: 'MODIFIED', object: unpausedCluster, old }, c)).toEqual(expected);
    }
    // Pausing, or a resync of an unpaused Cluster, wakes none of the data path.
    const pausedCluster = obj('Cluster', 'c9', { spec: { paused: true } });
    expect(summary({ type: 'MODIFIED', object: pausedCluster, old: unpausedCluster }, c)).toEqual([
      'selectHost Metal3Machine/held-m related',
    ]);
    expect(
      summary({ type: 'MODIFIED', object: unpausedCluster, old: unpausedCluster, resync: true }, c),
    ).toEqual(['selectHost Metal3Machine/held-m related']);
    // A template or pool unpaused by its own annotation wakes allocateIndex on it.
    for (const kind of ['Metal3DataTemplate', 'IPPool'] as const) {
      const pausedSelf = obj(kind, 'self-paused', {}, { annotations: { 'cluster.x-k8s.io/paused': '' } });
      const free = { ...pausedSelf, metadata: { ...pausedSelf.metadata, annotations: {} } };
      expect(summary({ type: 'MODIFIED', object: free, old: pausedSelf }, c)).toContain(
        `allocateIndex ${kind}/self-paused modified`,
      );
    }
  });

  it('Machine, Cluster, claim status, data readiness and Secrets reach the machine', () => {
    const { c, claim0, data0 } = world();
    expect(summary({ type: 'MODIFIED', object: c.get('Machine', NS, 'machine-0')! }, c)).toEqual([
      'selectHost Metal3Machine/m-0 related',
    ]);
    const cluster = obj('Cluster', 'c1', {
      spec: { infrastructureRef: { kind: 'Metal3Cluster', name: 'c1' } },
    });
    expect(summary({ type: 'MODIFIED', object: cluster }, c)).toEqual([
      'reconcileCluster Metal3Cluster/c1 related',
      'selectHost Metal3Machine/m-0 related',
      'selectHost Metal3Machine/m-1 related',
    ]);
    const claimDone = { ...claim0, status: { renderedData: { name: 'tpl-0' } } };
    // renderedData set is allocateIndex's own write: it wakes the machine, not allocateIndex again.
    expect(summary({ type: 'MODIFIED', object: claimDone, old: claim0 }, c)).toEqual([
      'selectHost Metal3Machine/m-0 related',
    ]);
    // Nothing changed: nobody. A spec/metadata change still reaches the claim's own function.
    expect(summary({ type: 'MODIFIED', object: claimDone, old: claimDone }, c)).toEqual([]);
    const relabelled = { ...claimDone, metadata: { ...claimDone.metadata, labels: { a: 'b' } } };
    expect(summary({ type: 'MODIFIED', object: relabelled, old: claimDone }, c)).toEqual([
      'allocateIndex Metal3DataClaim/m-0 modified',
    ]);
    // A status lost (renderedData gone) wakes allocateIndex to record it again.
    expect(summary({ type: 'MODIFIED', object: claim0, old: claimDone }, c)).toContain(
      'allocateIndex Metal3DataClaim/m-0 modified',
    );
    // A claim just created (no status yet) does not wake the machine that created it.
    expect(summary({ type: 'ADDED', object: claim0 }, c)).toEqual([
      'allocateIndex Metal3DataClaim/m-0 added',
    ]);
    const ready = { ...data0, status: { ready: true } };
    // ready set is renderData's own write: it wakes the machine, not renderData again.
    expect(summary({ type: 'MODIFIED', object: ready, old: data0 }, c)).toEqual([
      'selectHost Metal3Machine/m-0 related',
    ]);
    // The Secret refs renderData writes into the spec: not renderData again; replaced by someone: it.
    const refs = { ...data0, spec: { ...(data0 as any).spec, metaData: { name: 's' } } };
    expect(summary({ type: 'MODIFIED', object: refs, old: data0 }, c)).toEqual([]);
    const refs2 = { ...data0, spec: { ...(data0 as any).spec, metaData: { name: 'other' } } };
    expect(summary({ type: 'MODIFIED', object: refs2, old: refs }, c)).toEqual([
      'renderData Metal3Data/tpl-0 modified',
    ]);
    const reindexed = { ...refs, spec: { ...(refs as any).spec, index: 9 } };
    expect(summary({ type: 'MODIFIED', object: reindexed, old: refs }, c)).toEqual([
      'renderData Metal3Data/tpl-0 modified',
    ]);
    // An error recorded, or cleared, reaches both (the data is to be rendered again).
    const failedData = { ...data0, status: { ready: false, error: true, errorMessage: 'bad' } };
    expect(summary({ type: 'MODIFIED', object: data0, old: failedData }, c)).toEqual([
      'renderData Metal3Data/tpl-0 modified',
      'selectHost Metal3Machine/m-0 related',
    ]);
    expect(summary({ type: 'ADDED', object: obj('Secret', 'user-meta') }, c)).toEqual([
      'selectHost Metal3Machine/m-0 related',
    ]);
    expect(summary({ type: 'ADDED', object: obj('Secret', 'boot-0') }, c)).toEqual([
      'selectHost Metal3Machine/m-0 related',
    ]);
    expect(summary({ type: 'ADDED', object: obj('Secret', 'unrelated') }, c)).toEqual([]);
  });

  it('allocations are grouped by template and by pool', () => {
    const { c, claim0, ipc } = world();
    const claimMsg = route({ type: 'ADDED', object: claim0 }, c).find(
      (m) => m.msg.function === 'allocateIndex',
    );
    expect(claimMsg!.group).toBe(`Metal3DataTemplate/${NS}/tpl`);
    const [ipMsg] = route({ type: 'ADDED', object: ipc }, c);
    expect(ipMsg!.group).toBe(`IPPool/${NS}/pool`);
    // Pool change and address deletion wake only that pool's pending claims (a pool seen for the
    // first time also goes to allocateIndex itself, for its finalizer, in the same group).
    const pool = obj('IPPool', 'pool');
    expect(route({ type: 'MODIFIED', object: pool }, c).map((m) => [m.msg.name, m.group])).toEqual([
      ['pool', `IPPool/${NS}/pool`],
      ['tpl-0-pool', `IPPool/${NS}/pool`],
    ]);
    const specChanged = { ...pool, spec: { prefix: 24 } };
    expect(
      route({ type: 'MODIFIED', object: specChanged, old: pool }, c).map((m) => [m.msg.name, m.group]),
    ).toEqual([['tpl-0-pool', `IPPool/${NS}/pool`]]);
    const addr = obj('IPAddress', 'pool-10-0-0-5', { spec: { pool: { name: 'pool' } } });
    expect(summary({ type: 'DELETED', object: addr }, c)).toEqual([
      'allocateIndex IPClaim/tpl-0-pool related',
    ]);
    expect(summary({ type: 'MODIFIED', object: addr }, c)).toEqual([]);
  });

  it('templates and pools: first sight, deletion and a lost finalizer reach allocateIndex; their own writes do not', () => {
    const { c } = world();
    const tf = 'metal3datatemplate.infrastructure.cluster.x-k8s.io';
    const tpl = obj('Metal3DataTemplate', 'tpl2', { spec: { clusterName: 'c1' } });
    expect(summary({ type: 'ADDED', object: tpl }, c)).toEqual([
      'allocateIndex Metal3DataTemplate/tpl2 added',
    ]);
    // Its finalizer, cluster label and Metal3Cluster owner appearing are allocateIndex's own write.
    const held = {
      ...tpl,
      metadata: {
        ...tpl.metadata,
        finalizers: [tf],
        labels: { 'cluster.x-k8s.io/cluster-name': 'c1' },
        ownerReferences: [owner('Metal3Cluster', 'c1')],
      },
    };
    expect(summary({ type: 'MODIFIED', object: held, old: tpl }, c)).toEqual([]);
    // Its status (the index maps) neither.
    const withStatus = { ...held, status: { indexes: { '0': 'm-0' } } };
    expect(summary({ type: 'MODIFIED', object: withStatus, old: held }, c)).toEqual([]);
    // The finalizer removed by someone else, or the deletion, wake it.
    const lost = { ...held, metadata: { ...held.metadata, finalizers: [] } };
    expect(summary({ type: 'MODIFIED', object: lost, old: held }, c)).toEqual([
      'allocateIndex Metal3DataTemplate/tpl2 modified',
    ]);
    const deleting = { ...held, metadata: { ...held.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } };
    const [m] = route({ type: 'MODIFIED', object: deleting, old: held }, c);
    expect([m!.msg.function, m!.msg.name, m!.group]).toEqual([
      'allocateIndex',
      'tpl2',
      `Metal3DataTemplate/${NS}/tpl2`,
    ]);
    expect(summary({ type: 'DELETED', object: deleting }, c)).toEqual([]);

    const pool = obj('IPPool', 'pool');
    const pf = { ...pool, metadata: { ...pool.metadata, finalizers: ['ippool.ipam.metal3.io'] } };
    expect(summary({ type: 'MODIFIED', object: pf, old: pool }, c)).toEqual([]);
    const poolDeleting = { ...pf, metadata: { ...pf.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } };
    expect(summary({ type: 'MODIFIED', object: poolDeleting, old: pf }, c)).toEqual([
      'allocateIndex IPPool/pool modified',
    ]);
  });

  it('a created template wakes the claims waiting for it; a resync does not', () => {
    const { c } = world();
    const waiting = obj('Metal3DataClaim', 'm-9', { spec: { template: { name: 'tpl' } } });
    c.store('Metal3DataClaim').upsert(waiting);
    const tpl = obj('Metal3DataTemplate', 'tpl');
    expect(summary({ type: 'ADDED', object: tpl }, c)).toEqual([
      'allocateIndex Metal3DataClaim/m-0 related',
      'allocateIndex Metal3DataClaim/m-9 related',
      'allocateIndex Metal3DataTemplate/tpl added',
    ]);
    const claimMsg = route({ type: 'ADDED', object: tpl }, c).find((m) => m.msg.name === 'm-9');
    expect(claimMsg!.group).toBe(`Metal3DataTemplate/${NS}/tpl`);
    expect(summary({ type: 'MODIFIED', object: tpl, old: tpl, resync: true }, c)).toEqual([
      'allocateIndex Metal3DataTemplate/tpl resync',
    ]);
  });

  it('a claim or Metal3Data gone wakes its deleting template; an address or IPClaim gone its deleting pool', () => {
    const { c, claim0, data0, ipc } = world();
    const del = { deletionTimestamp: '2026-01-01T00:00:00Z' };
    const tpl = obj('Metal3DataTemplate', 'tpl');
    const pool = obj('IPPool', 'pool');
    const addr = obj('IPAddress', 'pool-10-0-0-5', { spec: { pool: { name: 'pool' } } });
    // Template and pool alive: nobody extra.
    c.store('Metal3DataTemplate').upsert(tpl);
    c.store('IPPool').upsert(pool);
    expect(summary({ type: 'DELETED', object: data0 }, c)).not.toContain(
      'allocateIndex Metal3DataTemplate/tpl related',
    );
    expect(summary({ type: 'DELETED', object: claim0 }, c)).not.toContain(
      'allocateIndex Metal3DataTemplate/tpl related',
    );
    expect(summary({ type: 'DELETED', object: addr }, c)).not.toContain('allocateIndex IPPool/pool related');
    // Deleting: the template and the pool are woken.
    c.store('Metal3DataTemplate').upsert({ ...tpl, metadata: { ...tpl.metadata, ...del } });
    c.store('IPPool').upsert({ ...pool, metadata: { ...pool.metadata, ...del } });
    expect(summary({ type: 'DELETED', object: data0 }, c)).toContain(
      'allocateIndex Metal3DataTemplate/tpl related',
    );
    expect(summary({ type: 'DELETED', object: claim0 }, c)).toContain(
      'allocateIndex Metal3DataTemplate/tpl related',
    );
    expect(summary({ type: 'DELETED', object: addr }, c)).toContain('allocateIndex IPPool/pool related');
    expect(summary({ type: 'DELETED', object: ipc }, c)).toContain('allocateIndex IPPool/pool related');
    const m = route({ type: 'DELETED', object: data0 }, c).find((r) => r.msg.kind === 'Metal3DataTemplate');
    expect(m!.group).toBe(`Metal3DataTemplate/${NS}/tpl`);
  });

  it('renderData: address set on an IPClaim, and a deleted rendered Secret, wake the Metal3Data', () => {
    const { c, ipc } = world();
    const withAddr = { ...ipc, status: { address: { name: 'pool-10-0-0-5' } } };
    // The address set is allocateIndex's own write: it wakes the Metal3Data, not allocateIndex again.
    expect(summary({ type: 'MODIFIED', object: withAddr, old: ipc }, c)).toEqual([
      'renderData Metal3Data/tpl-0 related',
    ]);
    expect(summary({ type: 'ADDED', object: withAddr }, c)).toEqual([
      'allocateIndex IPClaim/tpl-0-pool added',
      'renderData Metal3Data/tpl-0 related',
    ]);
    const secret = obj('Secret', 'm-0-metadata-0', {}, { ownerReferences: [owner('Metal3Data', 'tpl-0')] });
    expect(summary({ type: 'DELETED', object: secret }, c)).toEqual(['renderData Metal3Data/tpl-0 related']);
    expect(summary({ type: 'MODIFIED', object: secret }, c)).toEqual([]);
  });

  it('deleting claims, data and IP claims go to deprovision; their disappearance wakes deleting owners', () => {
    const { c, claim0, data0, ipc } = world();
    const del = { deletionTimestamp: '2026-01-01T00:00:00Z' };
    for (const o of [claim0, data0, ipc]) {
      const deleting = { ...o, metadata: { ...o.metadata, ...del } };
      const got = summary({ type: 'MODIFIED', object: deleting, old: deleting }, c);
      expect(got).toEqual([`deprovision ${o.kind}/${o.metadata.name} modified`]);
    }
    c.store('Metal3Data').upsert({ ...data0, metadata: { ...data0.metadata, ...del } });
    expect(summary({ type: 'DELETED', object: ipc }, c)).toEqual(['deprovision Metal3Data/tpl-0 related']);
  });

  it('workload Nodes reach their machine by uuid label, new and legacy providerID, and hostname', () => {
    const { c, host0 } = world();
    const cluster = `${NS}/c1`;
    const node = (labels: Record<string, string>, providerID?: string) =>
      ({
        kind: 'Node',
        metadata: { name: 'n', uid: 'n', resourceVersion: '7', labels },
        spec: providerID ? { providerID } : {},
      }) as KubeObject;
    const names = (n: KubeObject) =>
      route({ type: 'ADDED', object: n, cluster }, c).map((m) => `${m.msg.function} ${m.msg.name}`);
    expect(names(node({ 'metal3.io/uuid': host0.metadata.uid! }))).toEqual(['resolveProviderID m-0']);
    expect(names(node({}, `metal3://${NS}/host-0/m-0`))).toEqual(['resolveProviderID m-0']);
    expect(names(node({}, `metal3://${host0.metadata.uid}`))).toEqual(['resolveProviderID m-0']);
    expect(names(node({ 'kubernetes.io/hostname': 'node-one' }))).toEqual(['resolveProviderID m-1']);
    expect(names(node({ 'kubernetes.io/hostname': 'node-one' }, `metal3://${NS}/host-0/m-0`))).toEqual([
      'resolveProviderID m-0',
      'resolveProviderID m-1',
    ]);
    // A heartbeat (status only) changes nothing routing cares about.
    const n = node({ 'metal3.io/uuid': host0.metadata.uid! });
    expect(route({ type: 'MODIFIED', object: n, old: n, cluster }, c)).toEqual([]);
    // The providerID appearing is resolveProviderID's own patch; changed afterwards, it wakes it.
    const patched = node({ 'metal3.io/uuid': host0.metadata.uid! }, `metal3://${NS}/host-0/m-0`);
    expect(route({ type: 'MODIFIED', object: patched, old: n, cluster }, c)).toEqual([]);
    const other = node({ 'metal3.io/uuid': host0.metadata.uid! }, `metal3://${host0.metadata.uid}`);
    expect(
      route({ type: 'MODIFIED', object: other, old: patched, cluster }, c).map((m) => m.msg.name),
    ).toEqual(['m-0']);
    // Nodes of another namespace's cluster never reach machines of this one.
    expect(
      route(
        { type: 'ADDED', object: node({ 'kubernetes.io/hostname': 'node-one' }), cluster: 'other/c1' },
        c,
      ),
    ).toEqual([]);
  });

  it('two causes for one unchanged machine have different dedup ids; one cause twice has the same', () => {
    const { c, host0 } = world();
    const a = route({ type: 'MODIFIED', object: host0 }, c)[0]!;
    const b = route(
      { type: 'MODIFIED', object: { ...host0, metadata: { ...host0.metadata, resourceVersion: '999' } } },
      c,
    )[0]!;
    const a2 = route({ type: 'MODIFIED', object: host0 }, c)[0]!;
    expect(deduplicationId(a.msg)).not.toBe(deduplicationId(b.msg));
    expect(deduplicationId(a.msg)).toBe(deduplicationId(a2.msg));
  });

  it('messages carry when their event was observed, outside the dedup id', () => {
    const { c, host0 } = world();
    const at = route({ type: 'MODIFIED', object: host0, observedAt: 1_700_000_000_000 }, c);
    expect(at.length).toBeGreaterThan(0);
    for (const r of at) expect(r.msg.observedAt).toBe(1_700_000_000_000);
    const later = route({ type: 'MODIFIED', object: host0, observedAt: 1_700_000_000_500 }, c);
    expect(later.map((r) => deduplicationId(r.msg))).toEqual(at.map((r) => deduplicationId(r.msg)));
    for (const r of route({ type: 'MODIFIED', object: host0 }, c)) expect(r.msg.observedAt).toBeUndefined();
  });

  it('names no envelope can carry are skipped, not thrown', () => {
    const c = new RelayCache();
    expect(route({ type: 'ADDED', object: obj('Metal3Machine', 'Bad_Name') }, c)).toEqual([]);
  });
});
