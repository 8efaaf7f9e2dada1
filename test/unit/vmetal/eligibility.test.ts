import { describe, expect, it } from 'vitest';
import type { BareMetalHost } from '../../../shared/api/baremetalhost.ts';
import { hostExclusion } from '../../../shared/hosts/eligibility.ts';
import {
  type ChooseInput,
  chooseClaimHost,
  compileTypeSelection,
  type ExclusionReason,
  formatExclusions,
  hostVerdict,
  nodeTypeCapacity,
  summarizeExclusions,
} from '../../../shared/vmetal/eligibility.ts';
import { inputError } from './helpers.ts';

const NS = 'metal3';
const CLAIM = {
  apiVersion: 'vmetal.metal3fn.io/v1alpha1',
  kind: 'NodeClaim',
  namespace: 'p-team',
  name: 'c1',
};

interface HostOpts {
  namespace?: string;
  state?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  consumer?: Record<string, string>;
  errorMessage?: string;
  deleting?: boolean;
  hardware?: NonNullable<BareMetalHost['status']>['hardware'] | null;
}

function host(name: string, o: HostOpts = {}): BareMetalHost {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: {
      name,
      namespace: o.namespace ?? NS,
      labels: o.labels ?? { role: 'compute' },
      annotations: o.annotations,
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { online: false, ...(o.consumer ? { consumerRef: o.consumer } : {}) },
    status: {
      provisioning: { state: o.state ?? 'available' },
      errorMessage: o.errorMessage ?? '',
      ...(o.hardware === undefined
        ? { hardware: { cpu: { count: 32 }, ramMebibytes: 131072 } }
        : o.hardware === null
          ? {}
          : { hardware: o.hardware }),
    },
  };
}

const type = (resources: Record<string, string> = { cpu: '16', memory: '64Gi' }) =>
  compileTypeSelection({ name: 'gpu', selector: { matchLabels: { role: 'compute' } }, resources });

describe('hostVerdict: one reason per host, in order', () => {
  it.each([
    ['eligible', host('h'), 'eligible'],
    ['other labels', host('h', { labels: { role: 'storage' } }), 'SelectorMismatch'],
    ['deleting', host('h', { deleting: true }), 'Deleting'],
    ['in error', host('h', { errorMessage: 'BMC unreachable' }), 'InError'],
    ['paused', host('h', { annotations: { 'baremetalhost.metal3.io/paused': '' } }), 'Paused'],
    ['unhealthy (capm3)', host('h', { annotations: { 'capm3.metal3.io/unhealthy': '' } }), 'Unhealthy'],
    ['unhealthy (capi)', host('h', { annotations: { 'capi.metal3.io/unhealthy': '' } }), 'Unhealthy'],
    [
      'held by a Metal3Machine',
      host('h', {
        state: 'provisioned',
        consumer: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'Metal3Machine',
          name: 'm1',
          namespace: NS,
        },
      }),
      'Consumed',
    ],
    [
      'held by a Cluster (node-reuse booking)',
      host('h', { consumer: { kind: 'Cluster', name: 'c', namespace: NS } }),
      'Consumed',
    ],
    [
      'booked for node reuse',
      host('h', { labels: { role: 'compute', 'infrastructure.cluster.x-k8s.io/node-reuse': 'md-1' } }),
      'NodeReuse',
    ],
    ['ready (not available)', host('h', { state: 'ready' }), 'NotAvailable'],
    ['provisioning', host('h', { state: 'provisioning' }), 'NotAvailable'],
    ['inspecting', host('h', { state: 'inspecting' }), 'NotAvailable'],
    ['no state', host('h', { state: '' }), 'NotAvailable'],
    ['no inventory', host('h', { hardware: null }), 'NoInventory'],
    ['too few CPUs', host('h', { hardware: { cpu: { count: 8 }, ramMebibytes: 131072 } }), 'InsufficientCPU'],
    [
      'too little RAM',
      host('h', { hardware: { cpu: { count: 32 }, ramMebibytes: 65535 } }),
      'InsufficientMemory',
    ],
    ['exactly enough', host('h', { hardware: { cpu: { count: 16 }, ramMebibytes: 65536 } }), 'eligible'],
    ['cpu not reported: not checked', host('h', { hardware: { ramMebibytes: 131072 } }), 'eligible'],
    ['RAM not reported: not checked', host('h', { hardware: { cpu: { count: 64 } } }), 'eligible'],
    [
      'deleting beats consumed',
      host('h', { deleting: true, consumer: { kind: 'Metal3Machine', name: 'm' } }),
      'Deleting',
    ],
    ['selector beats everything', host('h', { labels: {}, deleting: true }), 'SelectorMismatch'],
  ])('%s -> %s', (_n, h, expected) => {
    const v = hostVerdict(h, type());
    expect(v.eligible ? 'eligible' : v.reason).toBe(expected);
  });

  it('the shared rules say the same as the CAPM3 path for deleting, error, paused and unhealthy', () => {
    const h = host('h', { errorMessage: 'boom' });
    const v = hostVerdict(h, type());
    expect(v.eligible).toBe(false);
    expect(!v.eligible && v.detail).toBe(hostExclusion(h));
  });

  it('a type without cpu or memory needs no inventory', () => {
    expect(hostVerdict(host('h', { hardware: null }), type({ 'nvidia.com/gpu': '1' })).eligible).toBe(true);
  });

  it('details name the numbers', () => {
    const v = hostVerdict(host('h', { hardware: { cpu: { count: 8 }, ramMebibytes: 1 } }), type());
    expect(v).toEqual({ eligible: false, reason: 'InsufficientCPU', detail: '8 CPUs, the type needs 16' });
    const m = hostVerdict(host('h', { hardware: { cpu: { count: 32 }, ramMebibytes: 1024 } }), type());
    expect(m).toEqual({
      eligible: false,
      reason: 'InsufficientMemory',
      detail: '1024 MiB RAM, the type needs 64Gi',
    });
  });
});

describe('compileTypeSelection', () => {
  it.each([
    [
      'matchExpressions In',
      { matchExpressions: [{ key: 'gen', operator: 'In', values: ['g9', 'g10'] }] },
      { gen: 'g10' },
      true,
    ],
    [
      'matchExpressions NotIn',
      { matchExpressions: [{ key: 'gen', operator: 'NotIn', values: ['g9'] }] },
      { gen: 'g9' },
      false,
    ],
    [
      'NotIn matches a missing key',
      { matchExpressions: [{ key: 'gen', operator: 'NotIn', values: ['g9'] }] },
      {},
      true,
    ],
    ['Exists', { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }, { gpu: '' }, true],
    ['DoesNotExist', { matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] }, { gpu: 'a' }, false],
    [
      'matchLabels and expressions',
      { matchLabels: { role: 'compute' }, matchExpressions: [{ key: 'gpu', operator: 'Exists' }] },
      { role: 'compute' },
      false,
    ],
    ['empty selector: every host', {}, {}, true],
    ['absent selector: every host', undefined, { any: 'x' }, true],
  ])('%s', (_n, selector, labels, expected) => {
    const t = compileTypeSelection({ name: 't', selector });
    expect(hostVerdict(host('h', { labels }), t).eligible).toBe(expected);
  });

  it.each([
    [
      { selector: { matchExpressions: [{ key: 'a', operator: 'in', values: ['x'] }] } },
      'NodeType t bareMetalHosts.selector.matchExpressions[0].operator',
    ],
    [
      { selector: { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] } },
      'NodeType t bareMetalHosts.selector.matchExpressions[0].operator',
    ],
    [
      { selector: { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] } },
      'NodeType t bareMetalHosts.selector',
    ],
    [{ selector: { matchLabels: { 'bad key': 'x' } } }, 'NodeType t bareMetalHosts.selector'],
    [{ resources: { cpu: 'many' } }, 'NodeType t resources.cpu'],
    [{ resources: { memory: '1 Gi' } }, 'NodeType t resources.memory'],
  ])('refuses %j', (over, field) => {
    expect(inputError(() => compileTypeSelection({ name: 't', ...over })).field).toBe(field);
  });
});

const input = (over: Partial<ChooseInput> = {}): ChooseInput => ({
  type: type(),
  namespace: NS,
  consumer: CLAIM,
  ...over,
});

const mine = {
  apiVersion: 'vmetal.metal3fn.io/v1alpha1',
  kind: 'NodeClaim',
  namespace: 'p-team',
  name: 'c1',
};

describe('chooseClaimHost', () => {
  it('picks among the eligible with the injected random', () => {
    const hosts = [host('a', { state: 'provisioned' }), host('b'), host('c'), host('d')];
    expect(chooseClaimHost(hosts, input(), () => 0)).toEqual({ kind: 'chosen', host: hosts[1] });
    expect(chooseClaimHost(hosts, input(), () => 0.5)).toEqual({ kind: 'chosen', host: hosts[2] });
    expect(chooseClaimHost(hosts, input(), () => 0.99)).toEqual({ kind: 'chosen', host: hosts[3] });
  });

  it('takes hosts only from the provider namespace', () => {
    const hosts = [host('x', { namespace: 'other' }), host('y')];
    expect(chooseClaimHost(hosts, input(), () => 0)).toEqual({ kind: 'chosen', host: hosts[1] });
  });

  it('its own host first, whatever its state', () => {
    const own = host('z', { state: 'provisioned', consumer: mine });
    expect(chooseClaimHost([host('a'), own], input())).toEqual({ kind: 'own', host: own });
  });

  it("another namespace's claim of the same name is not its own", () => {
    const other = host('z', { consumer: { ...mine, namespace: 'p-other' } });
    const r = chooseClaimHost([other], input());
    expect(r.kind).toBe('wait');
  });

  it.each([
    ['eligible', [host('a'), host('pin')], { kind: 'chosen', name: 'pin' }],
    ['own beats the pin', [host('pin'), host('o', { consumer: mine })], { kind: 'own', name: 'o' }],
  ])('a pinned host: %s', (_n, hosts, expected) => {
    const r = chooseClaimHost(hosts, input({ serverName: 'pin' }), () => 0);
    expect(r.kind).toBe(expected.kind);
    expect(r.kind !== 'wait' && r.host.metadata.name).toBe(expected.name);
  });

  it.each([
    [
      'missing',
      [host('a')],
      'host metal3/pin pinned by properties["metal3.vcluster.com/server-name"] not found',
    ],
    [
      'in another namespace only',
      [host('pin', { namespace: 'other' }), host('a')],
      'host metal3/pin pinned by properties["metal3.vcluster.com/server-name"] not found',
    ],
    [
      'taken',
      [host('pin', { consumer: { kind: 'NodeClaim', name: 'c9', namespace: 'p-x' } }), host('a')],
      'host metal3/pin pinned by properties["metal3.vcluster.com/server-name"] is not eligible: held by NodeClaim p-x/c9',
    ],
    [
      'not eligible',
      [host('pin', { state: 'inspecting' }), host('a')],
      'host metal3/pin pinned by properties["metal3.vcluster.com/server-name"] is not eligible: state "inspecting" is not available',
    ],
    [
      'not matching the type',
      [host('pin', { labels: { role: 'storage' } }), host('a')],
      'host metal3/pin pinned by properties["metal3.vcluster.com/server-name"] is not eligible: does not match NodeType gpu',
    ],
  ])('a pinned host %s: waits, never another host', (_n, hosts, message) => {
    const r = chooseClaimHost(hosts, input({ serverName: 'pin' }), () => 0);
    expect(r.kind).toBe('wait');
    if (r.kind !== 'wait') return;
    expect(r.wait.reason).toBe('PinnedHostUnavailable');
    expect(r.wait.message).toBe(message);
    expect(r.wait.object).toEqual({ kind: 'BareMetalHost', namespace: NS, name: 'pin' });
  });

  it('no eligible host: counts per reason, up to 10 names each, in reason order', () => {
    const hosts = [
      ...Array.from({ length: 12 }, (_, i) =>
        host(`busy-${String(i).padStart(2, '0')}`, {
          state: 'provisioned',
          consumer: { kind: 'Metal3Machine', name: `m${i}` },
        }),
      ),
      host('paused-1', { annotations: { 'baremetalhost.metal3.io/paused': '' } }),
      host('storage-1', { labels: { role: 'storage' } }),
      host('small-1', { hardware: { cpu: { count: 4 }, ramMebibytes: 131072 } }),
      host('elsewhere', { namespace: 'other' }),
    ];
    const r = chooseClaimHost(hosts, input());
    expect(r.kind).toBe('wait');
    if (r.kind !== 'wait') return;
    expect(r.wait.reason).toBe('NoEligibleHost');
    expect(r.summary).toEqual({
      considered: 15,
      reasons: [
        { reason: 'SelectorMismatch', count: 1, hosts: ['storage-1'] },
        { reason: 'Paused', count: 1, hosts: ['paused-1'] },
        {
          reason: 'Consumed',
          count: 12,
          hosts: [
            'busy-00',
            'busy-01',
            'busy-02',
            'busy-03',
            'busy-04',
            'busy-05',
            'busy-06',
            'busy-07',
            'busy-08',
            'busy-09',
          ],
        },
        { reason: 'InsufficientCPU', count: 1, hosts: ['small-1'] },
      ],
    });
    expect(r.wait.message).toBe(
      'no eligible host for NodeType gpu among 15 BareMetalHosts in namespace metal3: ' +
        '1 does not match the NodeType selector (storage-1); 1 is paused (paused-1); ' +
        '12 are held by another consumer (busy-00, busy-01, busy-02, busy-03, busy-04, busy-05, busy-06, busy-07, busy-08, busy-09, and 2 more); ' +
        '1 has too few CPUs (small-1)',
    );
  });

  it('no host at all', () => {
    const r = chooseClaimHost([], input());
    expect(r.kind === 'wait' && r.wait.message).toBe(
      'no eligible host for NodeType gpu among 0 BareMetalHosts in namespace metal3',
    );
  });
});

describe('summarizeExclusions / formatExclusions', () => {
  it('sorts names and keeps reasons in their fixed order', () => {
    const s = summarizeExclusions(
      [
        { name: 'b', reason: 'NotAvailable' },
        { name: 'a', reason: 'NotAvailable' },
        { name: 'c', reason: 'Deleting' },
      ] as { name: string; reason: ExclusionReason }[],
      3,
    );
    expect(s).toEqual({
      considered: 3,
      reasons: [
        { reason: 'Deleting', count: 1, hosts: ['c'] },
        { reason: 'NotAvailable', count: 2, hosts: ['a', 'b'] },
      ],
    });
    expect(formatExclusions(s, 't', 'ns')).toBe(
      'no eligible host for NodeType t among 3 BareMetalHosts in namespace ns: 1 is being deleted (c); 2 are not available (a, b)',
    );
  });
});

describe('nodeTypeCapacity', () => {
  it('total = matching and not deleting; claimed = held; free = eligible; provisioned = held by a claim of the type', () => {
    const held = (name: string, labels: Record<string, string>) =>
      host(name, {
        state: 'provisioned',
        consumer: { kind: 'NodeClaim', name, namespace: 'p' },
        labels: { role: 'compute', ...labels },
      });
    const hosts = [
      host('free-1'),
      host('free-2'),
      held('held', {}),
      held('mine', { 'metal3.vcluster.com/node-claim': 'u1', 'vmetal.metal3fn.io/node-type': 'gpu' }),
      held('other-type', { 'metal3.vcluster.com/node-claim': 'u2', 'vmetal.metal3fn.io/node-type': 'cpu' }),
      host('inspecting', { state: 'inspecting' }),
      host('gone', { deleting: true }),
      host('storage', { labels: { role: 'storage' } }),
      host('elsewhere', { namespace: 'other' }),
    ];
    expect(nodeTypeCapacity(hosts, type(), NS)).toEqual({ total: 6, claimed: 3, free: 2, provisioned: 1 });
  });
});
