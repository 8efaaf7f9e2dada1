/** The vMetal side of `metal3fn dev` (pure parts): the platform simulator's plan, counts, run claims, phase, release. */
import { describe, expect, it } from 'vitest';
import { claimPhase } from '../../../infra/local/dev/phase.ts';
import { checkRelease, type ReleaseScope } from '../../../infra/local/dev/release-check.ts';
import {
  expectedClaims,
  isVmetalObject,
  planVmetalHosts,
  runClaimPredicate,
  vmetalScaleDownPlan,
} from '../../../infra/local/dev/vmetal.ts';
import {
  planTenant,
  TENANT_DECLARATION_LABEL,
  TENANT_LABEL,
  wantedCounts,
} from '../../../infra/local/sim/platform.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

const tenant = (name: string, ns: string, data: Record<string, string>): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, uid: `cm-${name}`, labels: { [TENANT_DECLARATION_LABEL]: 'true' } },
    data,
  }) as KubeObject;
const claim = (
  name: string,
  ns: string,
  type: string,
  meta: Record<string, unknown> = {},
  status?: object,
): KubeObject => ({
  apiVersion: 'vmetal.metal3fn.io/v1alpha1',
  kind: 'NodeClaim',
  metadata: { name, namespace: ns, uid: `uid-${name}`, ...meta },
  spec: { typeRef: type, vClusterRef: 'alpha' },
  ...(status ? { status } : {}),
});

describe('platform simulator plan', () => {
  it('reads counts per type (bad counts are 0) and plans creates and newest-first deletes', () => {
    expect([
      ...wantedCounts(tenant('alpha', 'p-a', { small: '2', large: ' 1 ', bad: 'x', neg: '-1' })),
    ]).toEqual([
      ['small', 2],
      ['large', 1],
      ['bad', 0],
      ['neg', 0],
    ]);
    const old = claim('alpha-small-a', 'p-a', 'small', { creationTimestamp: '2026-01-01T00:00:00Z' });
    const newer = claim('alpha-small-b', 'p-a', 'small', { creationTimestamp: '2026-01-01T00:01:00Z' });
    const gone = claim('alpha-gpu-c', 'p-a', 'gpu');
    const plan = planTenant(
      new Map([
        ['small', 1],
        ['large', 2],
      ]),
      [old, newer, gone],
    );
    expect(plan.create).toEqual(['large', 'large']);
    expect(plan.remove.map((c) => c.metadata.name).sort()).toEqual(['alpha-gpu-c', 'alpha-small-b']);
    expect(planTenant(new Map([['small', 2]]), [old, newer])).toEqual({ create: [], remove: [] });
  });
});

describe('dev --vmetal helpers', () => {
  it('tells vMetal objects, counts the claims to wait for, and plans the scale-down of what the run applied', () => {
    const applied = [
      tenant('alpha', 'p-a', { small: '2', large: '1' }),
      tenant('beta', 'p-b', { small: '1' }),
      claim('by-hand', 'p-a', 'small'),
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other', namespace: 'p-a' } },
    ];
    expect(applied.map(isVmetalObject)).toEqual([true, true, true, false]);
    expect(expectedClaims(applied)).toBe(5);
    expect(vmetalScaleDownPlan(applied)).toEqual({
      tenants: [
        { namespace: 'p-a', name: 'alpha', types: ['small', 'large'] },
        { namespace: 'p-b', name: 'beta', types: ['small'] },
      ],
      claims: [{ namespace: 'p-a', name: 'by-hand' }],
    });
    const isRun = runClaimPredicate(applied);
    expect(isRun(claim('alpha-small-x', 'p-a', 'small', { labels: { [TENANT_LABEL]: 'alpha' } }))).toBe(true);
    expect(isRun(claim('by-hand', 'p-a', 'small'))).toBe(true);
    // Another namespace's tenant of the same name, or a claim made by someone else: not the run's.
    expect(isRun(claim('alpha-small-y', 'p-b', 'small', { labels: { [TENANT_LABEL]: 'alpha' } }))).toBe(
      false,
    );
    expect(isRun(claim('someone', 'p-a', 'small'))).toBe(false);
  });

  it('plans more rack-a worker hosts than every claim and CAPM3 worker of the sample could take, and three decoys', () => {
    const plans = planVmetalHosts();
    const rackA = plans.filter((p) => !p.decoy && p.labels.role === 'worker' && p.labels.rack === 'a');
    expect(rackA.length).toBeGreaterThanOrEqual(5 + 2);
    expect(plans.filter((p) => p.decoy).map((p) => p.decoy)).toEqual(['error', 'held']);
    expect(plans.filter((p) => p.labels.role !== 'worker')).toHaveLength(1);
  });

  it('a claim’s phase on the machines’ scale', () => {
    const host = (state: string, image = false): KubeObject => ({
      kind: 'BareMetalHost',
      metadata: { name: 'h' },
      spec: image ? { image: { url: 'http://i' } } : {},
      status: { provisioning: { state } },
    });
    expect(claimPhase(claim('c', 'p', 's'), undefined)).toBe('waiting for host');
    expect(claimPhase(claim('c', 'p', 's', {}, { host: 'h' }), host('available'))).toBe('associated');
    expect(claimPhase(claim('c', 'p', 's', {}, { host: 'h' }), host('available', true))).toBe('data ready');
    expect(claimPhase(claim('c', 'p', 's', {}, { host: 'h' }), host('provisioning', true))).toBe(
      'provisioning',
    );
    const provisioned = { host: 'h', conditions: [{ type: 'Provisioned', status: 'True' }] };
    expect(claimPhase(claim('c', 'p', 's', {}, provisioned), host('provisioned', true))).toBe('providerID');
    expect(claimPhase(claim('c', 'p', 's', {}, { phase: 'Available' }), undefined)).toBe('Ready');
    expect(claimPhase(claim('c', 'p', 's', {}, { phase: 'Failed' }), undefined)).toBe('failed');
    expect(claimPhase(claim('c', 'p', 's', { deletionTimestamp: 'x' }), undefined)).toBe('deleting');
  });
});

describe('release check of the run’s NodeClaims', () => {
  const ann = 'metal3.vcluster.com/ip-address';
  const hostBefore: KubeObject = {
    kind: 'BareMetalHost',
    metadata: { name: 'h1', namespace: 'metal3', uid: 'h1', annotations: { [ann]: '10.9.9.9/24' } },
    spec: {},
    status: { provisioning: { state: 'available' } },
  };
  const c = claim('alpha-small-x', 'p-a', 'small', { labels: { [TENANT_LABEL]: 'alpha' } });
  const heldAtReady: KubeObject = {
    ...hostBefore,
    metadata: {
      ...hostBefore.metadata,
      labels: { 'metal3.vcluster.com/node-claim': 'uid-alpha-small-x' },
      annotations: { [ann]: '10.60.0.10/24', 'metal3.vcluster.com/original-network-annotations': '{}' },
    },
    spec: { consumerRef: { kind: 'NodeClaim', name: 'alpha-small-x', namespace: 'p-a' } },
  };
  const scope: ReleaseScope = {
    applied: new Set(['cm-alpha']),
    atReady: [c, heldAtReady],
    foreignHosts: [],
    isRunClaim: runClaimPredicate([tenant('alpha', 'p-a', { small: '1' })]),
    hostsBefore: [hostBefore],
  };

  it('is clean when the claim, its address objects and Secrets are gone and the host is as before', () => {
    expect(checkRelease([hostBefore], scope)).toEqual([]);
  });

  it('reports the claim, its labelled objects, and the host’s label, record and annotations left behind', () => {
    const label = { labels: { 'vmetal.metal3fn.io/node-claim-uid': 'uid-alpha-small-x' } };
    const left: KubeObject[] = [
      c,
      { kind: 'IPClaim', metadata: { name: 'alpha-small-x-1234', namespace: 'metal3', ...label } },
      { kind: 'Secret', metadata: { name: 'alpha-small-x-user-data', namespace: 'metal3', ...label } },
      { ...heldAtReady, spec: {} },
    ];
    expect(checkRelease(left, scope).map((f) => `${f.object}: ${f.problem}`)).toEqual([
      'NodeClaim p-a/alpha-small-x: still exists after scale-down',
      'IPClaim metal3/alpha-small-x-1234: still exists after scale-down',
      'Secret metal3/alpha-small-x-user-data: rendered data Secret left behind',
      'BareMetalHost metal3/h1: still labelled metal3.vcluster.com/node-claim=uid-alpha-small-x',
      'BareMetalHost metal3/h1: still carries metal3.vcluster.com/original-network-annotations',
      'BareMetalHost metal3/h1: network annotations not as before the run: metal3.vcluster.com/ip-address',
    ]);
  });
});
