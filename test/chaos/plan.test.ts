/**
 * The chaos pieces on their own: the fault plan against the API server's real fault injector, the
 * crash wrapper against the embedded API server (the write is done, the caller never learns it),
 * the duplicate plan, and the invariant checker on hand-made snapshots.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultInjector } from '../../infra/local/apiserver/faults.ts';
import { R } from '../../shared/api/resources.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { noEvents } from '../../shared/observability/events.ts';
import { silentLogger } from '../../shared/observability/logger.ts';
import { DEFAULT_CONFIG, type ReconcileContext, type ReconcileFn } from '../../shared/reconcile/context.ts';
import { done } from '../../shared/reconcile/result.ts';
import { startTestCluster, type TestCluster } from '../helpers/cluster.ts';
import {
  canonicalIp,
  checkInvariants,
  crashingClient,
  crashingTable,
  duplicatePlan,
  faultRules,
  InvariantChecker,
  PRODUCT_WRITES,
  SimulatedCrash,
  type Snapshot,
  stream,
  sumHits,
} from './plan.ts';

describe('fault plan', () => {
  const plan = faultRules(PRODUCT_WRITES);
  const injector = (seed: number) => {
    const f = new FaultInjector(() => {}, true, seed);
    for (const r of plan.rules) f.add(r);
    return f;
  };

  it('about 10% 409s and 5% 5xx on product writes, none on the simulators’ own kinds', () => {
    const f = injector(7);
    const n = 20_000;
    let c409 = 0;
    let c5xx = 0;
    for (let i = 0; i < n; i++) {
      const d = f.decide({
        verb: 'patch',
        resource: 'metal3machines',
        group: 'infrastructure.cluster.x-k8s.io',
        name: `m${i}`,
      });
      if (d.error?.code === 409) c409++;
      else if (d.error && d.error.code >= 500) c5xx++;
    }
    expect(c409 / n).toBeGreaterThan(0.09);
    expect(c409 / n).toBeLessThan(0.11);
    expect(c5xx / n).toBeGreaterThan(0.04);
    expect(c5xx / n).toBeLessThan(0.06);
    for (let i = 0; i < 2_000; i++) {
      expect(
        f.decide({ verb: 'patch', resource: 'machines', group: 'cluster.x-k8s.io', name: 'x' }).error,
      ).toBeUndefined();
      expect(
        f.decide({
          verb: 'update',
          resource: 'baremetalhosts',
          subresource: 'status',
          group: 'metal3.io',
          name: 'h',
        }).error,
      ).toBeUndefined();
      // Creates get 5xx but never 409 (a create conflicts only as AlreadyExists, by name).
      expect(
        f.decide({ verb: 'create', resource: 'metal3datas', group: 'infrastructure.cluster.x-k8s.io' }).error
          ?.code,
      ).not.toBe(409);
      expect(
        f.decide({
          verb: 'get',
          resource: 'metal3machines',
          group: 'infrastructure.cluster.x-k8s.io',
          name: 'm',
        }).error,
      ).toBeUndefined();
    }
    const hits = sumHits(plan, f.hits());
    expect(hits['409']).toBe(c409);
    expect(hits.latency).toBeGreaterThan(0);
  });

  it('drops and 410s only watches, and the same seed makes the same decisions', () => {
    const run = (seed: number) => {
      const f = injector(seed);
      return Array.from({ length: 500 }, () => {
        const d = f.decide({ verb: 'watch', resource: 'baremetalhosts', group: 'metal3.io' });
        return `${d.error?.code ?? '-'}/${d.dropWatchAfter ?? '-'}/${d.latencyMs}`;
      });
    };
    const a = run(3);
    expect(a).toEqual(run(3));
    expect(a).not.toEqual(run(4));
    expect(a.filter((x) => x.startsWith('410')).length).toBeGreaterThan(5);
    expect(a.filter((x) => x.includes('/20/')).length).toBeGreaterThan(100);
  });
});

describe('crash between two writes', () => {
  let tc: TestCluster;
  let ctx: ReconcileContext;
  beforeAll(async () => {
    tc = await startTestCluster();
    ctx = {
      client: tc.client,
      workloadClient: async () => tc.client,
      events: noEvents,
      log: silentLogger,
      config: DEFAULT_CONFIG,
      now: () => new Date(),
    };
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const cm = (name: string): KubeObject => ({ metadata: { name, namespace: 'metal3' }, data: { k: 'v' } });

  it('the k-th write is done, then the caller gets SimulatedCrash and nothing else runs', async () => {
    let crashes = 0;
    const c = crashingClient(tc.client, { after: 2, writes: 0, crashed: false }, () => crashes++);
    await c.create(R.ConfigMap, cm('crash-a'));
    await expect(c.create(R.ConfigMap, cm('crash-b'))).rejects.toBeInstanceOf(SimulatedCrash);
    await expect(c.create(R.ConfigMap, cm('crash-c'))).rejects.toBeInstanceOf(SimulatedCrash);
    expect(await tc.client.get(R.ConfigMap, 'metal3', 'crash-b')).toBeDefined();
    expect(await tc.client.get(R.ConfigMap, 'metal3', 'crash-c')).toBeUndefined();
    expect(crashes).toBe(1);
    // Reads pass through untouched.
    expect((await c.list(R.ConfigMap, 'metal3')).items.length).toBeGreaterThanOrEqual(2);
  });

  it('a wrapped core crashes part-way; the redelivery (unarmed) finishes from the half-done state', async () => {
    const core: ReconcileFn = async (c, msg) => {
      for (const i of [1, 2, 3]) {
        const name = `${msg.name}-${i}`;
        if (!(await c.client.get(R.ConfigMap, 'metal3', name))) await c.client.create(R.ConfigMap, cm(name));
      }
      return done();
    };
    const stats = { invocations: 0, armed: 0, crashed: 0 };
    const armed = crashingTable({ selectHost: core }, 1, stream(1, 'crash'), stats);
    const msg = {
      v: 1 as const,
      function: 'selectHost' as const,
      cluster: 'management',
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'metal3',
      name: 'job',
      reason: 'modified' as const,
    };
    await expect(armed.selectHost!(ctx, msg)).rejects.toBeInstanceOf(SimulatedCrash);
    expect(stats).toMatchObject({ invocations: 1, armed: 1, crashed: 1 });
    const made = (await tc.client.list(R.ConfigMap, 'metal3')).items.filter((x) =>
      x.metadata.name?.startsWith('job-'),
    );
    expect(made.length).toBeGreaterThanOrEqual(1);
    expect(made.length).toBeLessThanOrEqual(3);
    const unarmed = crashingTable({ selectHost: core }, 0, stream(1, 'crash'), stats);
    expect(await unarmed.selectHost!(ctx, msg)).toEqual(done());
    const all = (await tc.client.list(R.ConfigMap, 'metal3')).items.filter((x) =>
      x.metadata.name?.startsWith('job-'),
    );
    expect(all.map((x) => x.metadata.name).sort()).toEqual(['job-1', 'job-2', 'job-3']);
  });
});

describe('duplicate plan', () => {
  it('duplicates about 20%, each up to 3 s late, deterministically per seed', () => {
    const draw = (seed: number) => {
      const next = duplicatePlan(0.2, stream(seed, 'dup'));
      return Array.from({ length: 5_000 }, next);
    };
    const a = draw(11);
    expect(draw(11)).toEqual(a);
    const dups = a.filter((d) => d.duplicate);
    expect(dups.length / a.length).toBeGreaterThan(0.18);
    expect(dups.length / a.length).toBeLessThan(0.22);
    expect(new Set(dups.map((d) => d.delaySeconds))).toEqual(new Set([0, 1, 2, 3]));
  });
});

describe('invariants', () => {
  const m3m = (name: string, host?: string, deleting = false): KubeObject => ({
    kind: 'Metal3Machine',
    metadata: {
      name,
      namespace: 'metal3',
      ...(host ? { annotations: { 'metal3.io/BareMetalHost': host } } : {}),
      ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
  });
  const host = (name: string, consumer?: string): KubeObject => ({
    kind: 'BareMetalHost',
    metadata: { name, namespace: 'metal3' },
    spec: consumer ? { consumerRef: { kind: 'Metal3Machine', name: consumer, namespace: 'metal3' } } : {},
  });
  const data = (name: string, template: string, claim: string): KubeObject => ({
    metadata: { name, namespace: 'metal3' },
    spec: { template: { name: template }, claim: { name: claim } },
  });
  const addr = (name: string, pool: string, ip: string, claim: string): KubeObject => ({
    metadata: { name, namespace: 'metal3' },
    spec: { pool: { name: pool }, address: ip, claim: { name: claim } },
  });
  const claim = (name: string, onHost?: string, deleting = false): KubeObject => ({
    kind: 'NodeClaim',
    metadata: { name, namespace: 'p-a', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    status: onHost ? { host: onHost, hostNamespace: 'metal3' } : {},
  });
  const claimHost = (name: string, consumer: string): KubeObject => ({
    kind: 'BareMetalHost',
    metadata: { name, namespace: 'metal3' },
    spec: { consumerRef: { kind: 'NodeClaim', name: consumer, namespace: 'p-a' } },
  });
  const empty: Snapshot = {
    metal3Machines: [],
    hosts: [],
    metal3Datas: [],
    templates: [],
    ipAddresses: [],
    ipPools: [],
  };

  const CASES: { name: string; snap: Partial<Snapshot>; expect: string[] }[] = [
    {
      name: 'a clean cluster',
      snap: {
        metal3Machines: [m3m('a', 'metal3/h1'), m3m('b', 'metal3/h2'), m3m('c')],
        hosts: [host('h1', 'a'), host('h2', 'b'), host('h3', 'c')],
        metal3Datas: [data('t-0', 't', 'a'), data('t-1', 't', 'b')],
        templates: [{ metadata: { name: 't', namespace: 'metal3' }, status: { indexes: { a: 0, b: 1 } } }],
        ipAddresses: [addr('p-1', 'p', '2001:db8::1', 'a'), addr('p-2', 'p', '2001:db8::2', 'b')],
        ipPools: [
          {
            metadata: { name: 'p', namespace: 'metal3' },
            status: { indexes: { a: '2001:db8::1', b: '2001:db8::2' } },
          },
        ],
      },
      expect: [],
    },
    {
      name: 'two live machines annotated with one host',
      snap: { metal3Machines: [m3m('a', 'metal3/h1'), m3m('b', 'metal3/h1')], hosts: [host('h1', 'a')] },
      expect: ['host-two-machines', 'host-annotation-mismatch'],
    },
    {
      name: 'a deleting machine still annotated with a host another machine took (release in progress)',
      snap: {
        metal3Machines: [m3m('a', 'metal3/h1', true), m3m('b', 'metal3/h1')],
        hosts: [host('h1', 'b')],
      },
      expect: [],
    },
    {
      name: 'a machine annotated with a host that names another consumer',
      snap: { metal3Machines: [m3m('a', 'metal3/h1')], hosts: [host('h1', 'z')] },
      expect: ['host-annotation-mismatch'],
    },
    {
      name: 'one claim holding two indexes',
      snap: { metal3Datas: [data('t-0', 't', 'a'), data('t-1', 't', 'a')] },
      expect: ['index-twice'],
    },
    {
      name: 'a template status giving one index to two claims',
      snap: {
        templates: [{ metadata: { name: 't', namespace: 'metal3' }, status: { indexes: { a: 0, b: 0 } } }],
      },
      expect: ['index-twice'],
    },
    {
      name: 'one address twice (different spellings)',
      snap: {
        ipAddresses: [addr('p-x', 'p', '2001:db8::1', 'a'), addr('p-y', 'p', '2001:DB8:0:0::0001', 'b')],
      },
      expect: ['address-twice'],
    },
    {
      name: 'one claim holding two addresses',
      snap: { ipAddresses: [addr('p-1', 'p', '10.0.0.1', 'a'), addr('p-2', 'p', '10.0.0.2', 'a')] },
      expect: ['address-twice'],
    },
    {
      name: 'the same address in two pools is fine',
      snap: { ipAddresses: [addr('p-1', 'p', '10.0.0.1', 'a'), addr('q-1', 'q', '10.0.0.1', 'b')] },
      expect: [],
    },
    {
      name: 'the same address in a vMetal pool and a CAPM3 pool',
      snap: {
        ipAddresses: [addr('p-1', 'p', '10.0.0.1', 'a'), addr('v-1', 'v', '10.0.0.1', 'b')],
        ipPools: [
          {
            metadata: {
              name: 'v',
              namespace: 'metal3',
              ownerReferences: [
                { apiVersion: 'vmetal.metal3fn.io/v1alpha1', kind: 'NodeProvider', name: 'metal', uid: 'u' },
              ],
            },
          },
        ],
      },
      expect: ['address-twice'],
    },
    {
      name: 'claims and machines each on their own host (a deleting claim’s host retaken)',
      snap: {
        metal3Machines: [m3m('a', 'metal3/h1')],
        hosts: [host('h1', 'a'), claimHost('h2', 'c1'), claimHost('h3', 'c3')],
        nodeClaims: [claim('c1', 'h2'), claim('c2'), claim('c3', 'h3'), claim('c4', 'h1', true)],
      },
      expect: [],
    },
    {
      name: 'two claims on one host, and a claim on a machine’s host',
      snap: {
        metal3Machines: [m3m('a', 'metal3/h1')],
        hosts: [host('h1', 'a'), claimHost('h2', 'c1')],
        nodeClaims: [claim('c1', 'h2'), claim('c2', 'h2'), claim('c3', 'h1')],
      },
      expect: ['host-two-owners', 'host-two-owners', 'host-claim-mismatch', 'host-claim-mismatch'],
    },
  ];

  it.each(CASES)('$name', (c) => {
    expect(
      checkInvariants({ ...empty, ...c.snap })
        .map((v) => v.invariant)
        .sort(),
    ).toEqual([...c.expect].sort());
  });

  it('canonical IPs', () => {
    expect(canonicalIp('2001:DB8:0:0::0001')).toBe(canonicalIp('2001:db8::1'));
    expect(canonicalIp('::1')).toBe('0:0:0:0:0:0:0:1');
    expect(canonicalIp('10.0.0.1')).toBe('10.0.0.1');
  });

  it('a cross-kind finding counts only when the next check confirms it', async () => {
    let snap: Snapshot = { ...empty, metal3Machines: [m3m('a', 'metal3/h1')], hosts: [host('h1', 'z')] };
    const checker = new InvariantChecker(async () => snap, 0);
    expect(await checker.checkOnce()).toEqual([]);
    snap = { ...empty, metal3Machines: [m3m('a', 'metal3/h1')], hosts: [host('h1', 'a')] };
    expect(await checker.checkOnce()).toEqual([]);
    snap = { ...empty, metal3Machines: [m3m('a', 'metal3/h1')], hosts: [host('h1', 'z')] };
    await checker.checkOnce();
    expect((await checker.checkOnce()).map((v) => v.invariant)).toEqual(['host-annotation-mismatch']);
    expect(checker.violations).toHaveLength(1);
    expect(checker.checks).toBe(4);
  });
});
