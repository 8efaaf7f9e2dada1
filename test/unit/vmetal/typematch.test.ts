import { describe, expect, it } from 'vitest';
import {
  type ClaimRequest,
  matchNodeType,
  type NodeSelectorRequirement,
  offerSatisfies,
  parseRequirements,
  type TypeCandidate,
  typeOffer,
} from '../../../shared/vmetal/typematch.ts';
import { inputError } from './helpers.ts';

const candidate = (
  name: string,
  o: Partial<TypeCandidate['type']> & {
    free?: number;
    provider?: string;
    providerProps?: Record<string, string>;
  } = {},
): TypeCandidate => ({
  provider: { name: o.provider ?? 'prov', properties: o.providerProps },
  type: { name, properties: o.properties, labels: o.labels, resources: o.resources, cost: o.cost },
  free: o.free ?? 1,
});

describe('typeOffer', () => {
  it('offers the built-ins, provider and type properties (comma lists), and labels', () => {
    const offer = typeOffer(
      candidate('gpu', {
        providerProps: { region: 'eu', rack: 'r0' },
        properties: { rack: 'r1,r2', 'vcluster.com/node-type': 'other' },
        labels: { 'example.com/gpu': 'a100', rack: 'r9' },
      }),
    );
    expect(Object.fromEntries([...offer].map(([k, v]) => [k, [...v]]))).toEqual({
      'vcluster.com/node-type': ['gpu'],
      'node.kubernetes.io/instance-type': ['gpu'],
      'kubernetes.io/os': ['linux'],
      'karpenter.sh/capacity-type': ['on-demand'],
      'vcluster.com/node-provider': ['prov'],
      region: ['eu'],
      rack: ['r1', 'r2', 'r9'],
      'example.com/gpu': ['a100'],
    });
  });
});

describe('offerSatisfies', () => {
  const offer = typeOffer(candidate('gpu', { properties: { rack: 'r1,r2', cores: '64' } }));
  it.each([
    [{ key: 'rack', operator: 'In', values: ['r2', 'r5'] }, true],
    [{ key: 'rack', operator: 'In', values: ['r5'] }, false],
    [{ key: 'missing', operator: 'In', values: ['x'] }, false],
    [{ key: 'rack', operator: 'NotIn', values: ['r1'] }, true],
    [{ key: 'rack', operator: 'NotIn', values: ['r1', 'r2'] }, false],
    [{ key: 'missing', operator: 'NotIn', values: ['x'] }, true],
    [{ key: 'rack', operator: 'Exists' }, true],
    [{ key: 'missing', operator: 'Exists' }, false],
    [{ key: 'missing', operator: 'DoesNotExist' }, true],
    [{ key: 'rack', operator: 'DoesNotExist' }, false],
    [{ key: 'cores', operator: 'Gt', values: ['32'] }, true],
    [{ key: 'cores', operator: 'Gt', values: ['64'] }, false],
    [{ key: 'cores', operator: 'Lt', values: ['65'] }, true],
    [{ key: 'rack', operator: 'Gt', values: ['1'] }, false],
    [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }, true],
    [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['gpu'] }, true],
  ] as [NodeSelectorRequirement, boolean][])('%j -> %s', (req, expected) => {
    expect(offerSatisfies(offer, parseRequirements([req])[0]!)).toBe(expected);
  });
});

describe('parseRequirements: bad input names the field', () => {
  it.each([
    [{ key: '', operator: 'In', values: ['a'] }, 'spec.requirements[0].key'],
    [{ key: 'a', operator: 'in', values: ['a'] }, 'spec.requirements[0].operator'],
    [{ key: 'a', operator: 'Equals', values: ['a'] }, 'spec.requirements[0].operator'],
    [{ key: 'a', operator: 'In', values: [] }, 'spec.requirements[0].values'],
    [{ key: 'a', operator: 'NotIn' }, 'spec.requirements[0].values'],
    [{ key: 'a', operator: 'Exists', values: ['x'] }, 'spec.requirements[0].values'],
    [{ key: 'a', operator: 'Gt', values: ['x'] }, 'spec.requirements[0].values'],
    [{ key: 'a', operator: 'Lt', values: ['1', '2'] }, 'spec.requirements[0].values'],
  ] as [NodeSelectorRequirement, string][])('%j', (req, field) => {
    expect(inputError(() => parseRequirements([req])).field).toBe(field);
  });
});

describe('matchNodeType', () => {
  const types = [
    candidate('large', { cost: 30, properties: { rack: 'r1' }, resources: { cpu: '64', memory: '256Gi' } }),
    candidate('small', { cost: 10, properties: { rack: 'r1' }, resources: { cpu: '8', memory: '32Gi' } }),
    candidate('medium-b', { cost: 20, properties: { rack: 'r2' }, resources: { cpu: '16', memory: '64Gi' } }),
    candidate('medium-a', { cost: 20, properties: { rack: 'r2' }, resources: { cpu: '16', memory: '64Gi' } }),
    candidate('other-prov', { cost: 1, provider: 'other', properties: { rack: 'r1' } }),
  ];
  it.each([
    ['no requirements: lowest cost of any provider', {}, 'other-prov'],
    ['providerRef narrows', { providerRef: 'prov' }, 'small'],
    [
      'requirement narrows',
      { providerRef: 'prov', requirements: [{ key: 'rack', operator: 'In', values: ['r2'] }] },
      'medium-a',
    ],
    [
      'equal cost: by name',
      { requirements: [{ key: 'rack', operator: 'NotIn', values: ['r1'] }] },
      'medium-a',
    ],
    [
      'by type name',
      { requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['large'] }] },
      'large',
    ],
    [
      'desiredCapacity narrows',
      { providerRef: 'prov', desiredCapacity: { cpu: '12', memory: '48Gi' } },
      'medium-a',
    ],
    [
      'desiredCapacity exactly the resources',
      { providerRef: 'prov', desiredCapacity: { cpu: '64' } },
      'large',
    ],
  ] as [string, ClaimRequest, string][])('%s', (_n, claim, expected) => {
    expect(matchNodeType(claim, types)).toEqual({ kind: 'matched', type: expected });
  });

  it('skips a type with no free host', () => {
    const r = matchNodeType({ providerRef: 'prov' }, [
      candidate('cheap', { cost: 1, free: 0 }),
      candidate('dear', { cost: 9, free: 2 }),
    ]);
    expect(r).toEqual({ kind: 'matched', type: 'dear' });
  });

  it('an unset cost is 0 (Go zero value)', () => {
    const r = matchNodeType({}, [candidate('b', { cost: 5 }), candidate('a-costless', {})]);
    expect(r).toEqual({ kind: 'matched', type: 'a-costless' });
  });

  it('a resource the type does not list is not covered', () => {
    const r = matchNodeType({ desiredCapacity: { 'nvidia.com/gpu': '1' } }, [
      candidate('cpu-only', { resources: { cpu: '8' } }),
      candidate('gpu', { cost: 99, resources: { 'nvidia.com/gpu': '2' } }),
    ]);
    expect(r).toEqual({ kind: 'matched', type: 'gpu' });
  });

  const full = [
    candidate('b-full', { free: 0, properties: { rack: 'r1' } }),
    candidate('a-full', { free: 0, properties: { rack: 'r1' } }),
  ];
  it.each([
    [
      'nothing compatible',
      { providerRef: 'prov', requirements: [{ key: 'rack', operator: 'In', values: ['r9'] }] },
      types,
      'no NodeType of NodeProvider prov satisfies spec.requirements and spec.desiredCapacity (4 considered)',
    ],
    [
      'compatible but full',
      { requirements: [{ key: 'rack', operator: 'In', values: ['r1'] }] },
      full,
      'no free host in the matching NodeTypes a-full, b-full',
    ],
  ] as [string, ClaimRequest, TypeCandidate[], string][])('waits: %s', (_n, claim, candidates, message) => {
    const r = matchNodeType(claim, candidates);
    expect(r.kind).toBe('wait');
    if (r.kind === 'wait') {
      expect(r.wait.reason).toBe('NoNodeTypeAvailable');
      expect(r.wait.message).toBe(message);
    }
  });

  it.each([
    [{ desiredCapacity: { cpu: 'lots' } }, [candidate('a')], 'spec.desiredCapacity["cpu"]'],
    [
      { desiredCapacity: { cpu: '1' } },
      [candidate('a', { resources: { cpu: 'x' } })],
      'NodeType a spec.resources["cpu"]',
    ],
  ] as [ClaimRequest, TypeCandidate[], string][])(
    'refuses a bad quantity: %s',
    (claim, candidates, field) => {
      expect(inputError(() => matchNodeType(claim, candidates)).field).toBe(field);
    },
  );
});
