import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type BareMetalHost, parseBareMetalHost } from '../../../shared/api/baremetalhost.ts';
import { consumerLabelValue, isHeldBy, metal3MachineConsumer } from '../../../shared/hosts/consumer.ts';
import {
  chooseHost,
  classifyHost,
  narrowToFailureDomain,
  nodeReuseValues,
  pickRandom,
  type SelectionInput,
} from '../../../shared/hosts/eligibility.ts';
import { compileHostSelector, labelValueProblem } from '../../../shared/selectors/labels.ts';

const M3M = { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'Metal3Machine' };

function host(
  name: string,
  o: {
    state?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    consumer?: Record<string, string> | null;
    errorMessage?: string;
    deleting?: boolean;
  } = {},
): BareMetalHost {
  return parseBareMetalHost({
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: {
      name,
      namespace: 'metal3',
      labels: o.labels,
      annotations: o.annotations,
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { online: false, ...(o.consumer ? { consumerRef: o.consumer } : {}) },
    status: { provisioning: { state: o.state ?? 'available' }, errorMessage: o.errorMessage ?? '' },
  });
}

const input = (over: Partial<SelectionInput> = {}): SelectionInput => ({
  consumer: metal3MachineConsumer({ name: 'm1', namespace: 'metal3' }),
  selector: compileHostSelector({}),
  reuseValues: [],
  ...over,
});

describe('isHeldBy', () => {
  const me = metal3MachineConsumer({ name: 'm1', namespace: 'metal3' });
  it.each([
    [{ ...M3M, name: 'm1', namespace: 'metal3' }, true],
    [
      {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
        kind: 'Metal3Machine',
        name: 'm1',
        namespace: 'metal3',
      },
      true,
    ],
    [{ ...M3M, name: 'm1' }, true], // namespace defaults to the host's
    [{ ...M3M, name: 'm2', namespace: 'metal3' }, false],
    [{ ...M3M, name: 'm1', namespace: 'other' }, false],
    [{ apiVersion: 'example.com/v1', kind: 'Metal3Machine', name: 'm1', namespace: 'metal3' }, false],
    [{ ...M3M, kind: 'Machine', name: 'm1', namespace: 'metal3' }, false],
    [undefined, false],
  ])('%j -> %s', (ref, expected) => {
    expect(isHeldBy(ref, me, 'metal3')).toBe(expected);
  });

  const claim = {
    apiVersion: 'vmetal.metal3fn.io/v1alpha1',
    kind: 'NodeClaim',
    name: 'c1',
    namespace: 'p-a',
    uid: 'uid-now',
  };
  it.each([
    ['the same uid', { ...claim }, true],
    ['a ref without uid (named only)', { ...claim, uid: undefined }, true],
    ["an earlier object of the same name's uid", { ...claim, uid: 'uid-before' }, false],
  ])('a consumer with a uid: %s', (_n, ref, expected) => {
    expect(isHeldBy(ref, claim, 'metal3')).toBe(expected);
  });
  it('a consumer without a uid (CAPM3) is decided by the name whatever uid the ref carries', () => {
    expect(isHeldBy({ ...M3M, name: 'm1', namespace: 'metal3', uid: 'any' }, me, 'metal3')).toBe(true);
  });
});

describe('classifyHost: exclusions', () => {
  const cases: [string, BareMetalHost, SelectionInput, string][] = [
    ['free and available', host('h'), input(), 'available'],
    ['free and ready', host('h', { state: 'ready' }), input(), 'available'],
    ['provisioning', host('h', { state: 'provisioning' }), input(), 'excluded:state "provisioning"'],
    ['provisioned', host('h', { state: 'provisioned' }), input(), 'excluded:state "provisioned"'],
    ['no state', host('h', { state: '' }), input(), 'excluded:state "<none>"'],
    [
      'another machine',
      host('h', { consumer: { ...M3M, name: 'm2', namespace: 'metal3' } }),
      input(),
      'excluded:consumed by Metal3Machine',
    ],
    [
      'own',
      host('h', { consumer: { ...M3M, name: 'm1', namespace: 'metal3' }, state: 'provisioned' }),
      input(),
      'own',
    ],
    [
      'own even when unhealthy and not matching',
      host('h', {
        consumer: { ...M3M, name: 'm1', namespace: 'metal3' },
        annotations: { 'capm3.metal3.io/unhealthy': '' },
      }),
      input({ selector: compileHostSelector({ matchLabels: { a: 'b' } }) }),
      'own',
    ],
    [
      'unhealthy (new)',
      host('h', { annotations: { 'capm3.metal3.io/unhealthy': '' } }),
      input(),
      'excluded:marked unhealthy (capm3.metal3.io/unhealthy)',
    ],
    [
      'unhealthy (old)',
      host('h', { annotations: { 'capi.metal3.io/unhealthy': 'yes' } }),
      input(),
      'excluded:marked unhealthy (capi.metal3.io/unhealthy)',
    ],
    [
      'paused',
      host('h', { annotations: { 'baremetalhost.metal3.io/paused': '' } }),
      input(),
      'excluded:paused',
    ],
    [
      'error message',
      host('h', { errorMessage: 'BMC unreachable' }),
      input(),
      'excluded:in error: BMC unreachable',
    ],
    ['deleting', host('h', { deleting: true }), input(), 'excluded:being deleted'],
    [
      'selector mismatch',
      host('h', { labels: { a: 'c' } }),
      input({ selector: compileHostSelector({ matchLabels: { a: 'b' } }) }),
      'excluded:does not match hostSelector',
    ],
    [
      'expression mismatch',
      host('h', { labels: { a: 'c' } }),
      input({
        selector: compileHostSelector({ matchExpressions: [{ key: 'a', operator: 'notin', values: ['c'] }] }),
      }),
      'excluded:does not match hostSelector',
    ],
    [
      'reuse: matching name',
      host('h', { labels: { 'infrastructure.cluster.x-k8s.io/node-reuse': 'kcp' } }),
      input({ reuseValues: nodeReuseValues({ kind: 'KubeadmControlPlane', name: 'kcp' }) }),
      'reuse:ready',
    ],
    [
      'reuse: reference cp- value',
      host('h', { labels: { 'infrastructure.cluster.x-k8s.io/node-reuse': 'cp-kcp' } }),
      input({ reuseValues: nodeReuseValues({ kind: 'KubeadmControlPlane', name: 'kcp' }) }),
      'reuse:ready',
    ],
    [
      'reuse: reference md- value',
      host('h', { labels: { 'infrastructure.cluster.x-k8s.io/node-reuse': 'md-md0' } }),
      input({ reuseValues: nodeReuseValues({ kind: 'MachineDeployment', name: 'md0' }) }),
      'reuse:ready',
    ],
    [
      'reuse: not ready yet',
      host('h', { state: 'deprovisioning', labels: { 'infrastructure.cluster.x-k8s.io/node-reuse': 'md0' } }),
      input({ reuseValues: ['md0', 'md-md0'] }),
      'reuse:not-ready',
    ],
    [
      'reuse: booked by a Cluster consumerRef',
      host('h', {
        consumer: { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'c', namespace: 'metal3' },
        labels: { 'infrastructure.cluster.x-k8s.io/node-reuse': 'md0' },
      }),
      input({ reuseValues: ['md0'] }),
      'reuse:ready',
    ],
    [
      'reuse label of another owner',
      host('h', { labels: { 'infrastructure.cluster.x-k8s.io/node-reuse': 'md1' } }),
      input({ reuseValues: ['md0', 'md-md0'] }),
      'excluded:booked for node reuse by "md1"',
    ],
    [
      'reuse label without computable owner',
      host('h', { labels: { 'infrastructure.cluster.x-k8s.io/node-reuse': 'md1' } }),
      input(),
      'excluded:booked for node reuse',
    ],
    [
      'reuse label but another machine holds it',
      host('h', {
        consumer: { ...M3M, name: 'm9', namespace: 'metal3' },
        labels: { 'infrastructure.cluster.x-k8s.io/node-reuse': 'md0' },
      }),
      input({ reuseValues: ['md0'] }),
      'excluded:consumed by Metal3Machine',
    ],
    [
      'reuse host but unhealthy',
      host('h', {
        annotations: { 'capm3.metal3.io/unhealthy': '' },
        labels: { 'infrastructure.cluster.x-k8s.io/node-reuse': 'md0' },
      }),
      input({ reuseValues: ['md0'] }),
      'excluded:marked unhealthy',
    ],
  ];
  it.each(cases)('%s', (_name, h, inp, expected) => {
    const c = classifyHost(h, inp);
    const got =
      c.kind === 'excluded'
        ? `excluded:${c.reason}`
        : c.kind === 'reuse'
          ? `reuse:${c.ready ? 'ready' : 'not-ready'}`
          : c.kind;
    if (expected.startsWith('excluded:')) expect(got.startsWith(expected)).toBe(true);
    else expect(got).toBe(expected);
  });
});

describe('nodeReuseValues', () => {
  it.each([
    [{ kind: 'KubeadmControlPlane' as const, name: 'kcp' }, ['kcp', 'cp-kcp']],
    [{ kind: 'MachineDeployment' as const, name: 'md-0' }, ['md-0', 'md-md-0']],
    [undefined, []],
  ])('%j -> %j', (owner, expected) => {
    expect(nodeReuseValues(owner)).toEqual(expected);
  });
});

describe('narrowToFailureDomain', () => {
  const hosts = [
    host('a', { labels: { 'infrastructure.cluster.x-k8s.io/failure-domain': 'fd1' } }),
    host('b', { labels: { 'infrastructure.cluster.x-k8s.io/failure-domain': 'fd2' } }),
    host('c'),
  ];
  it.each([
    [undefined, ['a', 'b', 'c']],
    ['', ['a', 'b', 'c']],
    ['fd1', ['a']],
    ['fd2', ['b']],
    ['fd3', []],
  ])('%j -> %j', (fd, names) => {
    expect(narrowToFailureDomain(hosts, fd).map((h) => h.metadata.name)).toEqual(names);
  });
});

describe('pickRandom', () => {
  it.each([
    [0, 'a'],
    [0.34, 'b'],
    [0.999999, 'c'],
    [1, 'c'], // clamped even for an out-of-contract source
    [-0.5, 'a'],
  ])('random %s -> %s', (r, expected) => {
    expect(pickRandom(['a', 'b', 'c'], () => r)).toBe(expected);
  });
  it('returns undefined on an empty list', () => {
    expect(pickRandom([], () => 0.5)).toBeUndefined();
  });
});

describe('chooseHost', () => {
  const own = host('own', { consumer: { ...M3M, name: 'm1', namespace: 'metal3' }, state: 'provisioning' });
  const free1 = host('free1', { labels: { 'infrastructure.cluster.x-k8s.io/failure-domain': 'fd1' } });
  const free2 = host('free2', { labels: { 'infrastructure.cluster.x-k8s.io/failure-domain': 'fd2' } });
  const free3 = host('free3', { labels: { 'infrastructure.cluster.x-k8s.io/failure-domain': 'fd2' } });
  const taken = host('taken', { consumer: { ...M3M, name: 'm2', namespace: 'metal3' } });
  const reuseReady = host('reuse-ready', { labels: { 'infrastructure.cluster.x-k8s.io/node-reuse': 'md0' } });
  const reuseBusy = host('reuse-busy', {
    state: 'deprovisioning',
    labels: { 'infrastructure.cluster.x-k8s.io/node-reuse': 'md-md0' },
  });
  const reuseIn = input({ reuseValues: ['md0', 'md-md0'] });

  it('finds its own host first, whatever else exists', () => {
    expect(chooseHost([free1, reuseReady, own], reuseIn)).toEqual({ kind: 'own', host: own });
  });
  it('prefers a ready node-reuse host over available ones', () => {
    expect(chooseHost([free1, reuseReady, free2], reuseIn, () => 0.99)).toEqual({
      kind: 'reuse',
      host: reuseReady,
    });
  });
  it('waits while a booked host is not ready, never falling back', () => {
    const c = chooseHost([free1, reuseReady, reuseBusy], reuseIn);
    expect(c.kind).toBe('wait');
    expect((c as { reason: string }).reason).toMatch(/reuse-busy.*"deprovisioning"/);
  });
  it('chooses uniformly among available hosts with the injected random source', () => {
    expect(chooseHost([free1, taken, free2, free3], input(), () => 0)).toEqual({
      kind: 'available',
      host: free1,
    });
    expect(chooseHost([free1, taken, free2, free3], input(), () => 0.5)).toEqual({
      kind: 'available',
      host: free2,
    });
    expect(chooseHost([free1, taken, free2, free3], input(), () => 0.9)).toEqual({
      kind: 'available',
      host: free3,
    });
  });
  it('narrows to the failure domain', () => {
    expect(chooseHost([free1, free2, free3], { ...input(), failureDomain: 'fd1' }, () => 0.9)).toEqual({
      kind: 'available',
      host: free1,
    });
  });
  it.each([
    // CAPM3 pickHost: hosts in the failure domain are preferred; none there => any available host.
    ['no host carries the domain: any available host', [free1, free2], 'fd9', 0.9, 'free2'],
    ['no host carries the domain: the random choice spans all', [free1, free2], 'fd9', 0, 'free1'],
    [
      'the only host in the domain is taken: another available host',
      [taken, free2, free3],
      'fd1',
      0,
      'free2',
    ],
  ])('failure domain preferred, then any available host: %s', (_t, hosts, fd, r, expected) => {
    const c = chooseHost(hosts, { ...input(), failureDomain: fd }, () => r);
    expect(c.kind).toBe('available');
    expect((c as { host: BareMetalHost }).host.metadata.name).toBe(expected);
  });
  it('failure domain with nothing available anywhere: none', () => {
    expect(chooseHost([taken], { ...input(), failureDomain: 'fd1' })).toEqual({
      kind: 'none',
      reason: 'no available host found (1 considered)',
    });
  });
  it('reports none when nothing is eligible', () => {
    expect(chooseHost([taken], input())).toEqual({
      kind: 'none',
      reason: 'no available host found (1 considered)',
    });
    expect(chooseHost([], input()).kind).toBe('none');
  });
  it('spreads choices: each of 4 hosts is picked for a quarter of the random range', () => {
    const hs = [host('a'), host('b'), host('c'), host('d')];
    const picks = [0.1, 0.3, 0.6, 0.8].map(
      (r) => (chooseHost(hs, input(), () => r) as { host: BareMetalHost }).host.metadata.name,
    );
    expect(picks).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('consumerLabelValue', () => {
  const digest = (name: string) => `sha256-${createHash('sha256').update(name).digest('hex').slice(0, 56)}`;
  const at63 = `m${'a'.repeat(61)}z`;
  const at64 = `m${'a'.repeat(62)}z`;
  it.each([
    ['a short name is itself', 'm-001', 'm-001'],
    ['dots are valid label characters', 'worker.rack-1.0', 'worker.rack-1.0'],
    ['63 characters is still itself', at63, at63],
    ['64 characters becomes the digest form', at64, digest(at64)],
    ['a 253-character name becomes the digest form', 'n'.repeat(253), digest('n'.repeat(253))],
  ])('%s', (_what, name, want) => {
    const got = consumerLabelValue(name);
    expect(got).toBe(want);
    expect(labelValueProblem(got)).toBeUndefined();
  });
  it('long names that differ only at the end get different values', () => {
    const a = `${'x'.repeat(100)}-a`;
    const b = `${'x'.repeat(100)}-b`;
    expect(consumerLabelValue(a)).not.toBe(consumerLabelValue(b));
    expect(consumerLabelValue(a)).toHaveLength(63);
  });
});
