import { describe, expect, it } from 'vitest';
import { type NodeQuery, nodeSelectors } from '../../../functions/resolve-provider-id/nodes.ts';

const UID = '3f1c2a9e-0d6b-4c1e-9a53-7b2f0e8d4c11';

describe('nodeSelectors: the Node lists a providerID decision sends', () => {
  it.each<[string, NodeQuery, string[] | undefined]>([
    [
      'host uid and hostnames: one list each',
      { hostUID: UID, hostnames: ['node-a', 'node-a.example.com'], cloudProvider: false },
      [`metal3.io/uuid=${UID}`, 'kubernetes.io/hostname in (node-a,node-a.example.com)'],
    ],
    [
      'a hostname listed twice is asked once',
      { hostUID: UID, hostnames: ['node-a', 'node-a'], cloudProvider: false },
      [`metal3.io/uuid=${UID}`, 'kubernetes.io/hostname in (node-a)'],
    ],
    [
      'no hostnames: the uuid list alone',
      { hostUID: UID, hostnames: [], cloudProvider: false },
      [`metal3.io/uuid=${UID}`],
    ],
    [
      'a hostname that cannot be a label value is dropped',
      { hostUID: UID, hostnames: ['bad host', 'ok-host'], cloudProvider: false },
      [`metal3.io/uuid=${UID}`, 'kubernetes.io/hostname in (ok-host)'],
    ],
    [
      'no host uid: the hostname list alone',
      { hostUID: '', hostnames: ['node-a'], cloudProvider: false },
      ['kubernetes.io/hostname in (node-a)'],
    ],
    ['a cloud provider: every Node', { hostUID: UID, hostnames: ['node-a'], cloudProvider: true }, undefined],
  ])('%s', (_what, query, want) => {
    expect(nodeSelectors(query)).toEqual(want);
  });
});
