import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../shared/kube/types.ts';
import {
  environmentName,
  kubeletLabelProblem,
  mergeProperties,
  type PropertyLevels,
} from '../../../shared/vmetal/properties.ts';
import { inputError } from './helpers.ts';

type Props = Record<string, string> | undefined;

const levels = (
  p: Props,
  t: Props,
  e: Props,
  c: Props,
  extra: Partial<PropertyLevels> = {},
): PropertyLevels => ({
  provider: { name: 'prov', properties: p },
  type: { name: 'gpu', properties: t },
  environment: e ? { name: 'env1', properties: e } : undefined,
  claim: { namespace: 'p-team', name: 'c1', properties: c },
  ...extra,
});

const host = (labels: Record<string, string>): KubeObject => ({
  metadata: { name: 'h1', namespace: 'metal3', labels },
});

const BUILT_INS = {
  'karpenter.sh/capacity-type': 'on-demand',
  'kubernetes.io/os': 'linux',
  'node.kubernetes.io/instance-type': 'gpu',
  'vcluster.com/node-type': 'gpu',
};

describe('mergeProperties: the most specific level wins', () => {
  it.each([
    ['provider only', { a: '1' }, undefined, undefined, undefined, '1', 'NodeProvider prov'],
    ['type beats provider', { a: '1' }, { a: '2' }, undefined, undefined, '2', 'NodeType gpu'],
    [
      'environment beats type',
      { a: '1' },
      { a: '2' },
      { a: '3' },
      undefined,
      '3',
      'NodeEnvironment p-team/env1',
    ],
    ['claim beats environment', { a: '1' }, { a: '2' }, { a: '3' }, { a: '4' }, '4', 'NodeClaim p-team/c1'],
    [
      'claim beats provider, nothing between',
      { a: '1' },
      undefined,
      undefined,
      { a: '4' },
      '4',
      'NodeClaim p-team/c1',
    ],
    [
      'environment beats provider',
      { a: '1' },
      undefined,
      { a: '3' },
      undefined,
      '3',
      'NodeEnvironment p-team/env1',
    ],
    ['an empty value still wins', { a: '1' }, { a: '' }, undefined, undefined, '', 'NodeType gpu'],
  ])('%s', (_name, p, t, e, c, value, origin) => {
    const merged = mergeProperties(levels(p, t, e, c));
    expect(merged.properties.a).toBe(value);
    expect(merged.origins.a).toBe(origin);
  });

  it('keeps every key of every level, sorted', () => {
    const merged = mergeProperties(levels({ z: 'p' }, { y: 't' }, { x: 'e' }, { w: 'c' }));
    expect(merged.properties).toEqual({ ...BUILT_INS, w: 'c', x: 'e', y: 't', z: 'p' });
    expect(Object.keys(merged.properties)).toEqual([
      'karpenter.sh/capacity-type',
      'kubernetes.io/os',
      'node.kubernetes.io/instance-type',
      'vcluster.com/node-type',
      'w',
      'x',
      'y',
      'z',
    ]);
  });
});

describe('mergeProperties: built-ins', () => {
  it('without a host: no zone', () => {
    const merged = mergeProperties(levels(undefined, undefined, undefined, undefined));
    expect(merged.properties).toEqual(BUILT_INS);
    expect(merged.nodeLabels).toEqual(BUILT_INS);
  });

  it("with a host: the host's zone label", () => {
    const merged = mergeProperties(
      levels(undefined, undefined, undefined, undefined, {
        host: host({ 'topology.kubernetes.io/zone': 'rack-3' }),
      }),
    );
    expect(merged.properties['topology.kubernetes.io/zone']).toBe('rack-3');
    expect(merged.nodeLabels['topology.kubernetes.io/zone']).toBe('rack-3');
    expect(merged.origins['topology.kubernetes.io/zone']).toBe('built-in');
  });

  it('a host without the zone label: no zone', () => {
    const merged = mergeProperties(
      levels(undefined, undefined, undefined, undefined, { host: host({ other: 'x' }) }),
    );
    expect(merged.properties).not.toHaveProperty(['topology.kubernetes.io/zone']);
  });

  it.each([
    ['provider', { 'topology.kubernetes.io/zone': 'z-prov' }, undefined, 'z-prov'],
    ['claim', undefined, { 'topology.kubernetes.io/zone': 'z-claim' }, 'z-claim'],
  ])('a %s property beats the host zone', (_n, p, c, zone) => {
    const merged = mergeProperties(
      levels(p, undefined, undefined, c, { host: host({ 'topology.kubernetes.io/zone': 'rack-3' }) }),
    );
    expect(merged.properties['topology.kubernetes.io/zone']).toBe(zone);
    expect(merged.nodeLabels['topology.kubernetes.io/zone']).toBe(zone);
  });

  it.each([['vcluster.com/node-type'], ['node.kubernetes.io/instance-type']])(
    '%s is always the real type, whatever a level sets',
    (key) => {
      const merged = mergeProperties(
        levels({ [key]: 'cpu' }, { [key]: 'x' }, { [key]: 'y' }, { [key]: 'small' }),
      );
      expect(merged.properties[key]).toBe('gpu');
      expect(merged.origins[key]).toBe('built-in');
      expect(merged.nodeLabels[key]).toBe('gpu');
    },
  );

  it.each([
    ['kubernetes.io/os', 'windows'],
    ['karpenter.sh/capacity-type', 'spot'],
  ])('other built-ins rank lowest: %s', (key, value) => {
    const merged = mergeProperties(levels(undefined, { [key]: value }, undefined, undefined));
    expect(merged.properties[key]).toBe(value);
    expect(merged.nodeLabels[key]).toBe(value);
  });
});

describe('mergeProperties: Node labels', () => {
  it('are the built-ins and the NodeType metadata.labels, not other properties', () => {
    const merged = mergeProperties({
      ...levels({ 'metal3.vcluster.com/network-cidr': '10.0.0.1/24' }, { rack: 'r1' }, undefined, undefined),
      type: { name: 'gpu', properties: { rack: 'r1' }, labels: { 'example.com/gpu': 'a100', tier: 'gold' } },
    });
    expect(merged.nodeLabels).toEqual({ ...BUILT_INS, 'example.com/gpu': 'a100', tier: 'gold' });
  });

  it('a type label beats a built-in default; a property beats the type label; the type name always wins', () => {
    const base = {
      ...levels(undefined, undefined, undefined, undefined),
      host: host({ 'topology.kubernetes.io/zone': 'host-zone' }),
    };
    const labels = {
      'topology.kubernetes.io/zone': 'label-zone',
      'kubernetes.io/os': 'label-os',
      'vcluster.com/node-type': 'not-gpu',
    };
    const byLabel = mergeProperties({ ...base, type: { name: 'gpu', labels } });
    expect(byLabel.nodeLabels['topology.kubernetes.io/zone']).toBe('label-zone');
    expect(byLabel.nodeLabels['kubernetes.io/os']).toBe('label-os');
    expect(byLabel.nodeLabels['vcluster.com/node-type']).toBe('gpu');
    const byProperty = mergeProperties({
      ...base,
      type: { name: 'gpu', labels },
      claim: { namespace: 'p-team', name: 'c1', properties: { 'topology.kubernetes.io/zone': 'prop-zone' } },
    });
    expect(byProperty.nodeLabels['topology.kubernetes.io/zone']).toBe('prop-zone');
  });

  it.each([
    [
      'a property value that is no label value',
      levels(undefined, undefined, undefined, { 'topology.kubernetes.io/zone': 'rack 1' }),
      'properties["topology.kubernetes.io/zone"] (set on NodeClaim p-team/c1)',
      'label value "rack 1"',
    ],
    [
      'a type label the kubelet may not set',
      {
        ...levels(undefined, undefined, undefined, undefined),
        type: { name: 'gpu', labels: { 'node-role.kubernetes.io/worker': '' } },
      },
      'NodeType gpu metadata.labels["node-role.kubernetes.io/worker"]',
      'the kubelet may not set labels',
    ],
    [
      'a type label key that is no label key',
      {
        ...levels(undefined, undefined, undefined, undefined),
        type: { name: 'gpu', labels: { 'bad key': 'v' } },
      },
      'NodeType gpu metadata.labels["bad key"]',
      'label key "bad key"',
    ],
  ])('refuses %s, naming the field', (_name, input, field, detail) => {
    const e = inputError(() => mergeProperties(input));
    expect(e.field).toBe(field);
    expect(e.detail).toContain(detail);
    expect(e.message.startsWith(`${field}: not a valid Node label`)).toBe(true);
  });

  it('refuses a type name of 64 characters (no label value)', () => {
    const e = inputError(() =>
      mergeProperties({
        ...levels(undefined, undefined, undefined, undefined),
        type: { name: 'x'.repeat(64) },
      }),
    );
    expect(e.field).toBe('properties["vcluster.com/node-type"]');
    expect(e.detail).toContain('at most 63');
  });

  it('refuses a NodeEnvironment of another provider', () => {
    const e = inputError(() =>
      mergeProperties({
        ...levels(undefined, undefined, undefined, undefined),
        environment: { name: 'env1', providerRef: 'other', properties: {} },
      }),
    );
    expect(e.field).toBe('NodeEnvironment p-team/env1 spec.providerRef');
    expect(e.detail).toBe('names NodeProvider "other", but the claim\'s provider is "prov"');
  });
});

describe('environmentName', () => {
  const env = 'vcluster.com/network-environment';
  it.each([
    ['nothing', {}, {}, {}, undefined, undefined],
    ['environmentRef only', {}, {}, {}, 'ref-env', { name: 'ref-env', from: 'environmentRef' }],
    [
      'the property beats environmentRef',
      { [env]: 'prov-env' },
      {},
      {},
      'ref-env',
      { name: 'prov-env', from: 'property' },
    ],
    [
      'the claim property beats the type property',
      {},
      { [env]: 'type-env' },
      { [env]: 'claim-env' },
      undefined,
      { name: 'claim-env', from: 'property' },
    ],
    [
      'the type property beats the provider property',
      { [env]: 'prov-env' },
      { [env]: 'type-env' },
      {},
      undefined,
      { name: 'type-env', from: 'property' },
    ],
    [
      'an empty property falls back to environmentRef',
      {},
      {},
      { [env]: '' },
      'ref-env',
      { name: 'ref-env', from: 'environmentRef' },
    ],
  ])('%s', (_n, p, t, c, ref, expected) => {
    const l = levels(p, t, undefined, c);
    expect(environmentName(l, ref)).toEqual(expected);
  });
});

describe('kubeletLabelProblem', () => {
  it.each([
    ['tier', false],
    ['example.com/gpu', false],
    ['kubernetes.io/os', false],
    ['kubernetes.io/arch', false],
    ['topology.kubernetes.io/zone', false],
    ['topology.kubernetes.io/region', false],
    ['node.kubernetes.io/instance-type', false],
    ['node.kubernetes.io/anything', false],
    ['foo.node.kubernetes.io/x', false],
    ['kubelet.kubernetes.io/x', false],
    ['node-role.kubernetes.io/worker', true],
    ['kubernetes.io/role', true],
    ['node-restriction.kubernetes.io/x', true],
    ['k8s.io/x', true],
    ['example.k8s.io/x', true],
    ['notkubernetes.io/x', false],
  ])('%s refused: %s', (key, refused) => {
    expect(kubeletLabelProblem(key) !== undefined).toBe(refused);
  });
});
