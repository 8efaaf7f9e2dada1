import { describe, expect, it } from 'vitest';
import { growPoolFor, planHosts, poolCapacity, sampleSize } from '../../../infra/local/dev/hosts.ts';
import type { IPPoolSpec } from '../../../shared/api/index.ts';

describe('sampleSize', () => {
  it.each([
    [5, undefined, { controlPlane: 3, workers: 2, hosts: 8 }],
    [1, undefined, { controlPlane: 1, workers: 0, hosts: 4 }],
    [10, 10, { controlPlane: 3, workers: 7, hosts: 10 }],
  ])('%i machines, %s hosts', (m, h, expected) => {
    expect(sampleSize(m, h)).toEqual(expected);
  });
  it.each([
    [0, undefined, "--machines must be a whole number ≥ 1, not '0'"],
    [5, 4, "--hosts must be a whole number ≥ --machines (5), not '4'"],
  ])('rejects %i machines / %s hosts', (m, h, msg) => {
    expect(() => sampleSize(m, h)).toThrow(msg);
  });
});

describe('planHosts', () => {
  it('labels control-plane hosts with one spare, marks an unhealthy worker and a paused spare', () => {
    const plans = planHosts({ controlPlane: 3, workers: 2, hosts: 8 });
    expect(plans.map((p) => `${p.name}:${p.labels.role}:${Object.keys(p.annotations).join(',')}`)).toEqual([
      'node-0:control-plane:',
      'node-1:control-plane:',
      'node-2:control-plane:',
      'node-3:control-plane:baremetalhost.metal3.io/paused',
      'node-4:worker:',
      'node-5:worker:',
      'node-6:worker:',
      'node-7:worker:capm3.metal3.io/unhealthy',
    ]);
  });
  it('marks nothing when there is no spare to lose', () => {
    const plans = planHosts({ controlPlane: 3, workers: 2, hosts: 5 });
    expect(plans.every((p) => Object.keys(p.annotations).length === 0)).toBe(true);
    // Every machine still finds a host of its role: 3 control-plane, 2 worker.
    expect(plans.filter((p) => p.labels.role === 'control-plane')).toHaveLength(3);
    expect(plans.filter((p) => p.labels.role === 'worker')).toHaveLength(2);
  });
});

describe('growPoolFor', () => {
  // The sample's first range holds 100 addresses; each added /24 range holds 241.
  const sample: IPPoolSpec = {
    namePrefix: 'pool-1',
    pools: [{ start: '192.168.111.100', end: '192.168.111.199' }],
    prefix: 24,
  };

  it('counts whole ranges, and nothing for an empty one', () => {
    expect(poolCapacity(sample)).toBe(100);
    expect(poolCapacity({ namePrefix: 'p', pools: [{ start: '10.0.0.9', end: '10.0.0.1' }] })).toBe(0);
  });

  it.each([
    [5, 0],
    [100, 0],
    [101, 1],
    [341, 1],
    [342, 2],
    [1000, 4],
  ])('%i machines on a pool of 100 adds %i ranges', (machines, added) => {
    const r = growPoolFor(sample, machines);
    expect(r.added).toBe(added);
    expect(poolCapacity({ ...sample, pools: r.pools })).toBe(100 + 241 * added);
    expect(poolCapacity({ ...sample, pools: r.pools })).toBeGreaterThanOrEqual(machines);
    expect(r.pools[0]).toEqual(sample.pools?.[0]);
  });

  it('appends distinct /24s with their own gateway and never changes the input', () => {
    const before = structuredClone(sample);
    const r = growPoolFor(sample, 2000);
    expect(sample).toEqual(before);
    const added = r.pools.slice(1);
    expect(new Set(added.map((p) => p.start)).size).toBe(added.length);
    for (const p of added) {
      expect(p.gateway?.replace(/\.1$/, '')).toBe(p.start?.replace(/\.10$/, ''));
      expect(p.prefix).toBe(24);
    }
  });
});
