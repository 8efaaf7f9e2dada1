import { describe, expect, it } from 'vitest';
import { planHosts, sampleSize } from '../../../infra/local/dev/hosts.ts';

describe('sampleSize', () => {
  it.each([
    [5, undefined, { controlPlane: 3, workers: 2, hosts: 8 }],
    [1, undefined, { controlPlane: 1, workers: 0, hosts: 4 }],
    [10, 10, { controlPlane: 3, workers: 7, hosts: 10 }],
  ])('%i machines, %s hosts', (m, h, expected) => {
    expect(sampleSize(m, h)).toEqual(expected);
  });
  it.each([
    [0, undefined, '--machines must be a positive integer, not 0'],
    [5, 4, '--hosts must be an integer ≥ --machines (5), not 4'],
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
