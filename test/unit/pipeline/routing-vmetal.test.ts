/** The vMetal routes (shared/routing/table-vmetal.ts): an event in, the exact messages out. */
import { describe, expect, it } from 'vitest';
import type { KindName } from '../../../shared/api/resources.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { RelayCache } from '../../../shared/routing/cache.ts';
import { type RoutingEvent, route, watchedKinds } from '../../../shared/routing/index.ts';

const HOSTS = 'metal3';
const PROJECT = 'p-alpha';
const DEL = { deletionTimestamp: '2026-01-01T00:00:00Z' };
const CLAIM_FINALIZER = 'nodeclaim.vmetal.metal3fn.io';
let rv = 100;

function obj(
  kind: string,
  name: string,
  namespace: string | undefined,
  extra: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
): KubeObject {
  rv++;
  return {
    kind,
    metadata: {
      name,
      ...(namespace ? { namespace } : {}),
      uid: `uid-${kind}-${name}`,
      resourceVersion: String(rv),
      ...meta,
    },
    ...extra,
  };
}
const withMeta = (o: KubeObject, meta: Record<string, unknown>): KubeObject => ({
  ...o,
  metadata: { ...o.metadata, ...meta },
});
const withStatus = (o: KubeObject, status: Record<string, unknown>): KubeObject => ({
  ...o,
  status: { ...(o.status as object), ...status },
});

function world() {
  const c = new RelayCache();
  const put = (kind: KindName, o: KubeObject) => {
    c.store(kind).upsert(o);
    return o;
  };
  const provider = put(
    'NodeProvider',
    obj('NodeProvider', 'metal', undefined, {
      spec: {
        metal3: {
          clusterRef: { cluster: 'mgmt', namespace: HOSTS },
          nodeTypes: [{ name: 'small' }, { name: 'big' }],
        },
      },
    }),
  );
  put(
    'NodeProvider',
    obj('NodeProvider', 'elsewhere', undefined, { spec: { metal3: { clusterRef: { namespace: 'other' } } } }),
  );
  const small = put('NodeType', obj('NodeType', 'small', undefined, { spec: { providerRef: 'metal' } }));
  // small takes any host of the namespace; big the hosts of rack r2 with 4 CPUs.
  put(
    'NodeType',
    obj('NodeType', 'big', undefined, {
      spec: {
        providerRef: 'metal',
        bareMetalHosts: { selector: { matchLabels: { rack: 'r2' } } },
        resources: { cpu: '4' },
      },
    }),
  );
  put('NodeType', obj('NodeType', 'far', undefined, { spec: { providerRef: 'elsewhere' } }));
  const held = put(
    'NodeClaim',
    obj(
      'NodeClaim',
      'alpha-small-1',
      PROJECT,
      {
        spec: { typeRef: 'small', vClusterRef: 'alpha' },
        status: { phase: 'Pending', host: 'h-1', hostNamespace: HOSTS },
      },
      { finalizers: [CLAIM_FINALIZER] },
    ),
  );
  const waiting = put(
    'NodeClaim',
    obj('NodeClaim', 'alpha-big-1', PROJECT, {
      spec: { typeRef: 'big', vClusterRef: 'alpha' },
      status: { phase: 'Pending', reason: 'NoEligibleHost' },
    }),
  );
  const leaving = put(
    'NodeClaim',
    obj(
      'NodeClaim',
      'alpha-small-2',
      PROJECT,
      { spec: { typeRef: 'small', vClusterRef: 'alpha' }, status: { host: 'h-2', hostNamespace: HOSTS } },
      { finalizers: [CLAIM_FINALIZER], ...DEL },
    ),
  );
  const consumer = (claim: KubeObject) => ({
    apiVersion: 'vmetal.metal3fn.io/v1alpha1',
    kind: 'NodeClaim',
    name: claim.metadata.name,
    namespace: claim.metadata.namespace,
    uid: claim.metadata.uid,
  });
  const host1 = put(
    'BareMetalHost',
    obj(
      'BareMetalHost',
      'h-1',
      HOSTS,
      { spec: { consumerRef: consumer(held) }, status: { provisioning: { state: 'available' } } },
      { labels: { 'metal3.vcluster.com/node-claim': held.metadata.uid } },
    ),
  );
  const host2 = put(
    'BareMetalHost',
    obj('BareMetalHost', 'h-2', HOSTS, {
      spec: { consumerRef: consumer(leaving) },
      status: { provisioning: { state: 'deprovisioning' } },
    }),
  );
  return { c, provider, small, held, waiting, leaving, host1, host2 };
}

const summary = (ev: RoutingEvent, c: RelayCache) =>
  route(ev, c)
    .map((r) => `${r.msg.function} ${r.msg.kind}/${r.msg.name} ${r.msg.reason}`)
    .sort();

describe('vMetal routes', () => {
  it('the relay watches the vMetal kinds, and Nodes of workload (tenant) clusters', () => {
    const kinds = watchedKinds();
    expect(kinds.workload).toEqual(['Node']);
    for (const k of [
      'NodeProvider',
      'NodeType',
      'NodeClaim',
      'NodeEnvironment',
      'OSImage',
      'SSHKey',
      'MachineConfigTemplate',
    ])
      expect(kinds.management).toContain(k);
  });

  it('a NodeProvider goes to selectHost, with its NodeTypes when its host namespace is new or changed', () => {
    const { c, provider } = world();
    expect(summary({ type: 'ADDED', object: provider }, c)).toEqual([
      'selectHost NodeProvider/metal added',
      'selectHost NodeType/big related',
      'selectHost NodeType/small related',
    ]);
    // Its status and our finalizer appearing are selectHost's own writes: nobody.
    const own = withStatus(withMeta(provider, { finalizers: ['nodeprovider.vmetal.metal3fn.io'] }), {
      phase: 'Available',
    });
    expect(summary({ type: 'MODIFIED', object: own, old: provider }, c)).toEqual([]);
    // The finalizer removed by someone else, a spec change, the deletion: selectHost.
    expect(summary({ type: 'MODIFIED', object: provider, old: own }, c)).toEqual([
      'selectHost NodeProvider/metal modified',
    ]);
    const moved = {
      ...provider,
      spec: { metal3: { clusterRef: { namespace: 'moved' }, nodeTypes: [{ name: 'small' }] } },
    };
    expect(summary({ type: 'MODIFIED', object: moved, old: provider }, c)).toEqual([
      'selectHost NodeProvider/metal modified',
      'selectHost NodeType/big related',
      'selectHost NodeType/small related',
    ]);
    const deleting = withMeta(own, DEL);
    expect(summary({ type: 'MODIFIED', object: deleting, old: own }, c)).toEqual([
      'selectHost NodeProvider/metal modified',
    ]);
    expect(summary({ type: 'DELETED', object: deleting }, c)).toEqual([]);
  });

  it('a NodeType goes to selectHost on a spec change, not on its own status; gone, it wakes the providers naming it', () => {
    const { c, small } = world();
    expect(summary({ type: 'ADDED', object: small }, c)).toEqual(['selectHost NodeType/small added']);
    const counted = withStatus(small, { phase: 'Ready', capacity: { total: 3 } });
    expect(summary({ type: 'MODIFIED', object: counted, old: small }, c)).toEqual([]);
    const reselected = { ...counted, spec: { providerRef: 'metal', bareMetalHosts: { selector: {} } } };
    expect(summary({ type: 'MODIFIED', object: reselected, old: counted }, c)).toEqual([
      'selectHost NodeType/small modified',
    ]);
    expect(summary({ type: 'DELETED', object: small }, c)).toEqual(['selectHost NodeProvider/metal related']);
  });

  it('a NodeClaim: selectHost; with a host also renderData and resolveProviderID; their status writes wake nobody', () => {
    const { c, held, waiting } = world();
    expect(summary({ type: 'ADDED', object: waiting }, c)).toEqual([
      'selectHost NodeClaim/alpha-big-1 added',
    ]);
    expect(summary({ type: 'ADDED', object: held }, c)).toEqual([
      'renderData NodeClaim/alpha-small-1 added',
      'resolveProviderID NodeClaim/alpha-small-1 added',
      'selectHost NodeClaim/alpha-small-1 added',
    ]);
    // selectHost recording the host it claimed: the next steps, not selectHost again.
    const claimed = withStatus(waiting, {
      host: 'h-9',
      hostNamespace: HOSTS,
      nodeType: 'big',
      reason: undefined,
    });
    expect(summary({ type: 'MODIFIED', object: claimed, old: waiting }, c)).toEqual([
      'renderData NodeClaim/alpha-big-1 modified',
      'resolveProviderID NodeClaim/alpha-big-1 modified',
    ]);
    // Conditions, phase, address, Node name (the later steps' writes): nobody.
    const joined = withStatus(held, {
      phase: 'Available',
      ipAddress: '10.0.0.5/24',
      nodeName: 'alpha-small-1',
      conditions: [{ type: 'Joined', status: 'True' }],
    });
    expect(summary({ type: 'MODIFIED', object: joined, old: held }, c)).toEqual([]);
    // Our finalizer appearing: nobody; removed by someone else: selectHost.
    const bare = withMeta(waiting, { finalizers: [] });
    const fin = withMeta(waiting, { finalizers: [CLAIM_FINALIZER] });
    expect(summary({ type: 'MODIFIED', object: fin, old: bare }, c)).toEqual([]);
    expect(summary({ type: 'MODIFIED', object: bare, old: fin }, c)).toEqual([
      'selectHost NodeClaim/alpha-big-1 modified',
    ]);
    // A spec change (the user's): every step that read it.
    const rebooted = withMeta(held, { annotations: { 'machines.vcluster.com/reboot': 'now' } });
    expect(summary({ type: 'MODIFIED', object: rebooted, old: held }, c)).toEqual([
      'renderData NodeClaim/alpha-small-1 modified',
      'resolveProviderID NodeClaim/alpha-small-1 modified',
      'selectHost NodeClaim/alpha-small-1 modified',
    ]);
  });

  it('a deleting NodeClaim with our finalizer goes to deprovision only; gone, it wakes its provider', () => {
    const { c, leaving, waiting } = world();
    expect(summary({ type: 'MODIFIED', object: leaving }, c)).toEqual([
      'deprovision NodeClaim/alpha-small-2 modified',
    ]);
    const noFinalizer = withMeta(leaving, { finalizers: [] });
    expect(summary({ type: 'MODIFIED', object: noFinalizer }, c)).toEqual([]);
    // A provider that waits for no claim is not woken (a scale-down would wake it per claim).
    expect(summary({ type: 'DELETED', object: noFinalizer }, c)).toEqual([]);
    const provider = c.get('NodeProvider', undefined, 'metal')!;
    c.store('NodeProvider').upsert(withMeta(provider, DEL));
    expect(summary({ type: 'DELETED', object: noFinalizer }, c)).toEqual([
      'selectHost NodeProvider/metal related',
    ]);
    // A claim without typeRef finds its provider through the type it was given (status.nodeType).
    const chosen = { ...waiting, spec: { vClusterRef: 'alpha' }, status: { nodeType: 'big' } };
    expect(summary({ type: 'DELETED', object: chosen }, c)).toEqual([
      'selectHost NodeProvider/metal related',
    ]);
    // Not deleting, but a removed type still in use (NodeTypesSynced False): woken too.
    c.store('NodeProvider').upsert(
      withStatus(provider, { conditions: [{ type: 'NodeTypesSynced', status: 'False' }] }),
    );
    expect(summary({ type: 'DELETED', object: chosen }, c)).toEqual([
      'selectHost NodeProvider/metal related',
    ]);
  });

  it('a host event reaches the claim holding it (consumerRef or label), and the NodeTypes whose counts it moves', () => {
    const { c, host1, host2 } = world();
    // First seen (no previous state): counted by small (any host), not by big (rack r2 only).
    expect(summary({ type: 'MODIFIED', object: host1 }, c)).toEqual([
      'renderData NodeClaim/alpha-small-1 related',
      'selectHost NodeClaim/alpha-small-1 related',
      'selectHost NodeType/small related',
    ]);
    // By the node-claim label alone (consumerRef already gone).
    const labelOnly = { ...host1, spec: {} };
    expect(summary({ type: 'MODIFIED', object: labelOnly, old: labelOnly }, c)).toEqual([]);
    const relabelled = withMeta(labelOnly, { labels: { ...labelOnly.metadata.labels, rack: 'r2' } });
    // Into rack r2: big counts it now; small counted it before and after alike.
    expect(summary({ type: 'MODIFIED', object: relabelled, old: labelOnly }, c)).toEqual([
      'renderData NodeClaim/alpha-small-1 related',
      'selectHost NodeType/big related',
    ]);
    // A deleting claim's host: deprovision, on any change.
    expect(summary({ type: 'MODIFIED', object: host2, old: host2 }, c)).toEqual([
      'deprovision NodeClaim/alpha-small-2 related',
    ]);
  });

  it('NodeType capacity follows hosts: a change wakes exactly the NodeTypes whose counts it moves; a heartbeat or resync none', () => {
    const { c } = world();
    const free = obj('BareMetalHost', 'h-5', HOSTS, {
      spec: {},
      status: { provisioning: { state: 'available' } },
    });
    const r2 = withMeta(free, { labels: { rack: 'r2' } });
    const small = ['selectHost NodeType/small related'];
    const big = ['selectHost NodeType/big related'];
    const claimed = { ...free, spec: { consumerRef: { kind: 'NodeClaim', name: 'c', namespace: PROJECT } } };
    const cases: [string, KubeObject, KubeObject, string[]][] = [
      ['claimed', free, claimed, small],
      [
        'labelled with the claim and its type (provisioned)',
        claimed,
        withMeta(claimed, {
          labels: { 'metal3.vcluster.com/node-claim': 'uid-c', 'vmetal.metal3fn.io/node-type': 'small' },
        }),
        small,
      ],
      ['relabelled, no selector concerned', free, withMeta(free, { labels: { gpu: 'yes' } }), []],
      ['relabelled into rack r2', free, r2, big],
      ['failing', free, withStatus(free, { errorType: 'inspection error', errorMessage: 'bad' }), small],
      ['deleting', free, withMeta(free, DEL), small],
      // small asks for no resources: its counts ignore inventory; big's needs 4 CPUs.
      [
        'inventory on a host no type with resources matches',
        free,
        withStatus(free, { hardware: { cpu: { count: 8 } } }),
        [],
      ],
      ['inventory in rack r2', r2, withStatus(r2, { hardware: { cpu: { count: 8 } } }), big],
      ['too few CPUs in rack r2', r2, withStatus(r2, { hardware: { cpu: { count: 2 } } }), []],
    ];
    for (const [why, before, after, want] of cases)
      expect(
        summary({ type: 'MODIFIED', object: after, old: before }, c).filter((m) => m.includes('NodeType')),
        why,
      ).toEqual(want);
    const beat = withStatus(free, { poweredOn: true, lastUpdated: 'now' });
    expect(summary({ type: 'MODIFIED', object: beat, old: free }, c)).toEqual([]);
    // A resync of an unchanged host: each NodeType's own resync recounts.
    expect(summary({ type: 'MODIFIED', object: free, old: free, resync: true }, c)).toEqual([]);
    expect(summary({ type: 'DELETED', object: free }, c)).toEqual(small);
    expect(summary({ type: 'DELETED', object: r2 }, c).sort()).toEqual([...big, ...small].sort());
    // Hosts of a namespace no provider targets concern no NodeType.
    const elsewhere = obj('BareMetalHost', 'x', 'nobody', {
      status: { provisioning: { state: 'available' } },
    });
    expect(summary({ type: 'DELETED', object: elsewhere }, c)).toEqual([]);
  });

  it('a host becoming available wakes the claims waiting for a host; staying available, or a resync, does not', () => {
    const { c } = world();
    const busy = obj('BareMetalHost', 'h-7', HOSTS, {
      spec: { consumerRef: { kind: 'Metal3Machine', name: 'x' } },
      status: { provisioning: { state: 'deprovisioning' } },
    });
    const free = { ...busy, spec: {}, status: { provisioning: { state: 'available' } } };
    const got = summary({ type: 'MODIFIED', object: free, old: busy }, c).filter((m) =>
      m.includes('NodeClaim'),
    );
    expect(got).toEqual(['selectHost NodeClaim/alpha-big-1 related']);
    expect(summary({ type: 'MODIFIED', object: free, old: free }, c)).toEqual([]);
    expect(
      summary({ type: 'MODIFIED', object: free, old: busy, resync: true }, c).filter((m) =>
        m.includes('NodeClaim'),
      ),
    ).toEqual([]);
  });

  it('a host in error reaches its claim’s selectHost (Failed with the host’s message)', () => {
    const { c, host1 } = world();
    const failed = withStatus(host1, { errorType: 'provisioning error', errorMessage: 'disk' });
    expect(summary({ type: 'MODIFIED', object: failed, old: host1 }, c)).toContain(
      'selectHost NodeClaim/alpha-small-1 related',
    );
  });

  it('a host provisioned reaches its claim’s resolveProviderID once per transition', () => {
    const { c, host1 } = world();
    const provisioned = withStatus(host1, { provisioning: { state: 'provisioned' } });
    expect(summary({ type: 'MODIFIED', object: provisioned, old: host1 }, c)).toContain(
      'resolveProviderID NodeClaim/alpha-small-1 related',
    );
    expect(summary({ type: 'MODIFIED', object: provisioned, old: provisioned }, c)).toEqual([]);
  });

  it('an IPClaim or IPAddress of a claim (uid label) reaches its renderData when its address or error changes', () => {
    const { c, held } = world();
    const label = { labels: { 'vmetal.metal3fn.io/node-claim-uid': held.metadata.uid } };
    const ipc = obj(
      'IPClaim',
      'alpha-small-1-abcdef01',
      HOSTS,
      { spec: { pool: { name: 'metal-0123456789' } } },
      label,
    );
    expect(summary({ type: 'ADDED', object: ipc }, c)).toEqual([
      'allocateIndex IPClaim/alpha-small-1-abcdef01 added',
      'renderData NodeClaim/alpha-small-1 related',
    ]);
    const withAddr = withStatus(ipc, { address: { name: 'metal-10-0-0-5' } });
    expect(summary({ type: 'MODIFIED', object: withAddr, old: ipc }, c)).toContain(
      'renderData NodeClaim/alpha-small-1 related',
    );
    expect(summary({ type: 'MODIFIED', object: withAddr, old: withAddr }, c)).not.toContain(
      'renderData NodeClaim/alpha-small-1 related',
    );
    const addr = obj('IPAddress', 'metal-10-0-0-5', HOSTS, { spec: { address: '10.0.0.5' } }, label);
    expect(summary({ type: 'ADDED', object: addr }, c)).toEqual([
      'renderData NodeClaim/alpha-small-1 related',
    ]);
    // Addresses of Metal3Data (no claim label) stay with the CAPM3 routes.
    expect(
      summary({ type: 'ADDED', object: obj('IPAddress', 'x', HOSTS, { spec: { address: '10.0.0.6' } }) }, c),
    ).toEqual([]);
  });

  it('a NodeEnvironment, OSImage, SSHKey, MachineConfigTemplate or labelled template Secret appearing resumes the claims waiting for it', () => {
    const { c } = world();
    const wait = (name: string, ns: string, reason: string, host?: string) =>
      c.store('NodeClaim').upsert(
        obj('NodeClaim', name, ns, {
          spec: { typeRef: 'small', vClusterRef: 'a' },
          status: { phase: 'Pending', reason, ...(host ? { host, hostNamespace: HOSTS } : {}) },
        }),
      );
    wait('env-wait', PROJECT, 'NodeEnvironmentNotFound');
    wait('env-wait-elsewhere', 'p-beta', 'NodeEnvironmentNotFound');
    wait('image-wait', PROJECT, 'OSImageNotFound');
    wait('key-wait', 'p-beta', 'SSHKeyNotFound');
    wait('tpl-wait', PROJECT, 'TemplateNotFound', 'h-3');
    wait('secret-wait', PROJECT, 'TemplateSecretNotFound', 'h-4');
    expect(summary({ type: 'ADDED', object: obj('NodeEnvironment', 'net', PROJECT) }, c)).toEqual([
      'selectHost NodeClaim/env-wait related',
    ]);
    expect(summary({ type: 'ADDED', object: obj('OSImage', 'ubuntu', undefined) }, c)).toEqual([
      'selectHost NodeClaim/image-wait related',
    ]);
    expect(summary({ type: 'ADDED', object: obj('SSHKey', 'admin', undefined) }, c)).toEqual([
      'selectHost NodeClaim/key-wait related',
    ]);
    expect(summary({ type: 'ADDED', object: obj('MachineConfigTemplate', 'cfg', undefined) }, c)).toEqual([
      'renderData NodeClaim/tpl-wait related',
      'selectHost NodeClaim/tpl-wait related',
    ]);
    const unlabelled = obj('Secret', 'user-tpl', PROJECT);
    expect(summary({ type: 'ADDED', object: unlabelled }, c)).toEqual([]);
    const labelled = withMeta(unlabelled, {
      labels: { 'vcluster.com/user-data-template-type': 'cloud-config' },
    });
    expect(summary({ type: 'MODIFIED', object: labelled, old: unlabelled }, c)).toEqual([
      'renderData NodeClaim/secret-wait related',
      'selectHost NodeClaim/secret-wait related',
    ]);
    // A claim created before its NodeType or NodeProvider: resumed when either is created.
    wait('type-wait', 'p-beta', 'NoNodeTypeAvailable');
    expect(
      summary(
        { type: 'ADDED', object: obj('NodeType', 'general', undefined, { spec: { providerRef: 'metal' } }) },
        c,
      ),
    ).toEqual(['selectHost NodeClaim/type-wait related', 'selectHost NodeType/general added']);
    expect(
      summary({ type: 'ADDED', object: obj('NodeProvider', 'new', undefined, { spec: {} }) }, c),
    ).toEqual(['selectHost NodeClaim/type-wait related', 'selectHost NodeProvider/new added']);
    // Unchanged, or a resync: nobody.
    expect(summary({ type: 'MODIFIED', object: labelled, old: labelled }, c)).toEqual([]);
    const image = obj('OSImage', 'ubuntu', undefined);
    expect(summary({ type: 'MODIFIED', object: image, old: image, resync: true }, c)).toEqual([]);
  });

  it('a claim that decided to wait for an object created meanwhile looks again (no lost wake-up)', () => {
    const { c, waiting } = world();
    const waitFor = (message: string, host?: string) =>
      withStatus(waiting, {
        phase: 'Pending',
        reason: 'NoNodeTypeAvailable',
        message,
        ...(host ? { host } : {}),
      });
    // The NodeType `big` is in the cache: the claim's own status write naming it wakes selectHost.
    expect(
      summary(
        { type: 'MODIFIED', object: waitFor('NodeType big not found (spec.typeRef)'), old: waiting },
        c,
      ),
    ).toEqual(['selectHost NodeClaim/alpha-big-1 related']);
    // Not there yet: nothing (its creation will wake the claim).
    expect(
      summary(
        { type: 'MODIFIED', object: waitFor('NodeType huge not found (spec.typeRef)'), old: waiting },
        c,
      ),
    ).toEqual([]);
    // A namespaced object in the claim's namespace; with a host, renderData too.
    c.store('NodeEnvironment').upsert(obj('NodeEnvironment', 'net', PROJECT));
    const envWait = waitFor(
      `NodeEnvironment ${PROJECT}/net not found (vcluster.com/network-environment)`,
      'h-9',
    );
    const hosted = withStatus(waiting, { host: 'h-9' });
    expect(summary({ type: 'MODIFIED', object: envWait, old: hosted }, c)).toEqual([
      'renderData NodeClaim/alpha-big-1 related',
      'selectHost NodeClaim/alpha-big-1 related',
    ]);
    // The same wait again (unchanged status): nobody. A Secret is never looked up (routing reads no Secret).
    expect(summary({ type: 'MODIFIED', object: envWait, old: envWait }, c)).toEqual([]);
    c.store('Secret').upsert(obj('Secret', 'tpl', PROJECT));
    const secretWait = waitFor(`Secret ${PROJECT}/tpl not found (vcluster.com/user-data-template-secret)`);
    expect(summary({ type: 'MODIFIED', object: secretWait, old: waiting }, c)).toEqual([]);
  });

  it('a tenant Node reaches the claim of its name in the tenant’s namespace; heartbeats and other tenants do not', () => {
    const { c, held } = world();
    const node = (name: string, labels: Record<string, string> = {}) =>
      ({
        kind: 'Node',
        metadata: { name, uid: `n-${name}`, resourceVersion: '5', labels },
        spec: {},
      }) as KubeObject;
    const n = node('alpha-small-1', { 'vcluster.com/node-type': 'small' });
    const names = (ev: RoutingEvent) =>
      route(ev, c).map((m) => `${m.msg.function} ${m.msg.kind}/${m.msg.name}`);
    expect(names({ type: 'ADDED', object: n, cluster: `${PROJECT}/alpha` })).toEqual([
      'resolveProviderID NodeClaim/alpha-small-1',
    ]);
    expect(names({ type: 'MODIFIED', object: n, old: n, cluster: `${PROJECT}/alpha` })).toEqual([]);
    expect(names({ type: 'DELETED', object: n, cluster: `${PROJECT}/alpha` })).toEqual([
      'resolveProviderID NodeClaim/alpha-small-1',
    ]);
    // Another tenant's Node of the same name, or the claim deleting: nobody.
    expect(names({ type: 'ADDED', object: n, cluster: `${PROJECT}/beta` })).toEqual([]);
    c.store('NodeClaim').upsert(withMeta(held, DEL));
    expect(names({ type: 'ADDED', object: n, cluster: `${PROJECT}/alpha` })).toEqual([]);
  });
});
