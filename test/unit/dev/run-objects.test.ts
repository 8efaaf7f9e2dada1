/** What the run applied says: machines to wait for, what scale-down touches, whose hosts are others'. */
import { describe, expect, it } from 'vitest';
import { belongsTo, byUid, runMetal3Machines } from '../../../infra/local/dev/ownership.ts';
import {
  clustersWithOwnKubeconfig,
  expectedMachines,
  foreignHosts,
  scaleDownPlan,
} from '../../../infra/local/dev/run-objects.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

const o = (
  kind: string,
  name: string,
  spec: Record<string, unknown> = {},
  meta: Partial<KubeObject['metadata']> = {},
): KubeObject => ({
  apiVersion: 'x/v1',
  kind,
  metadata: { name, namespace: 'ns', uid: `u-${kind}-${name}`, ...meta },
  spec,
});
const owned = (kind: string, name: string) => ({
  ownerReferences: [{ apiVersion: 'x/v1', kind, name, uid: `u-${kind}-${name}`, controller: true }],
});
const m3mt = { kind: 'Metal3MachineTemplate', name: 't' };

describe('expectedMachines', () => {
  it('counts replicas of control planes, deployments and MachineSets of their own, and Machines of their own', () => {
    expect(
      expectedMachines([
        o('KubeadmControlPlane', 'cp', { replicas: 3, machineTemplate: { infrastructureRef: m3mt } }),
        o('MachineDeployment', 'md', { replicas: 2, template: { spec: { infrastructureRef: m3mt } } }),
        o('MachineDeployment', 'md-default', { template: { spec: { infrastructureRef: m3mt } } }),
        o('MachineSet', 'ms', { replicas: 4, template: { spec: { infrastructureRef: m3mt } } }),
        o(
          'MachineSet',
          'of-md',
          { replicas: 9, template: { spec: { infrastructureRef: m3mt } } },
          owned('MachineDeployment', 'md'),
        ),
        o('Machine', 'bare', { infrastructureRef: { kind: 'Metal3Machine', name: 'bare' } }),
        o(
          'Machine',
          'of-ms',
          { infrastructureRef: { kind: 'Metal3Machine', name: 'x' } },
          owned('MachineSet', 'ms'),
        ),
        o('Machine', 'aws', { infrastructureRef: { kind: 'AWSMachine', name: 'aws' } }),
        o('KubeadmControlPlane', 'other-infra', {
          replicas: 3,
          machineTemplate: { infrastructureRef: { kind: 'DockerMachineTemplate' } },
        }),
        o('Metal3Machine', 'no-machine'),
      ]),
    ).toBe(3 + 2 + 1 + 4 + 1);
  });
});

describe('scaleDownPlan', () => {
  it("scales the run's control planes, deployments and own MachineSets, deletes its own Machines, nothing else", () => {
    expect(
      scaleDownPlan([
        o('KubeadmControlPlane', 'cp'),
        o('MachineDeployment', 'md'),
        o('MachineSet', 'ms'),
        o('MachineSet', 'of-md', {}, owned('MachineDeployment', 'md')),
        o('Machine', 'bare'),
        o('Machine', 'of-ms', {}, owned('MachineSet', 'ms')),
        o('Metal3Machine', 'bare'),
        o('Cluster', 'c'),
      ]),
    ).toEqual({
      scale: [
        { kind: 'KubeadmControlPlane', namespace: 'ns', name: 'cp' },
        { kind: 'MachineDeployment', namespace: 'ns', name: 'md' },
        { kind: 'MachineSet', namespace: 'ns', name: 'ms' },
      ],
      remove: [{ kind: 'Machine', namespace: 'ns', name: 'bare' }],
    });
  });
});

describe('foreignHosts', () => {
  it('is every host whose consumerRef names an object the run did not apply', () => {
    const applied = [o('Metal3Machine', 'mine')];
    const host = (name: string, consumerRef?: Record<string, string>) =>
      o('BareMetalHost', name, consumerRef ? { consumerRef } : {});
    const hosts = [
      host('free'),
      host('mine', { kind: 'Metal3Machine', name: 'mine' }),
      host('mine-explicit-ns', { kind: 'Metal3Machine', name: 'mine', namespace: 'ns' }),
      host('theirs', { kind: 'Metal3Machine', name: 'theirs' }),
      host('same-name-other-ns', { kind: 'Metal3Machine', name: 'mine', namespace: 'elsewhere' }),
      host('other-kind', { kind: 'Widget', name: 'mine' }),
    ];
    expect(foreignHosts(hosts, applied).map((h) => h.metadata.name)).toEqual([
      'theirs',
      'same-name-other-ns',
      'other-kind',
    ]);
  });
});

describe('clustersWithOwnKubeconfig', () => {
  it('names the clusters whose <cluster>-kubeconfig Secret the manifests bring', () => {
    const secret = (name: string, namespace?: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, ...(namespace ? { namespace } : {}) },
    });
    expect([
      ...clustersWithOwnKubeconfig(
        [
          secret('own-kubeconfig', 'team-c'),
          secret('plain-kubeconfig'),
          secret('bmc'),
          o('ConfigMap', 'x-kubeconfig'),
        ],
        'default',
      ),
    ]).toEqual(['team-c/own', 'default/plain']);
  });
});

describe('ownership', () => {
  const md = o('MachineDeployment', 'md');
  const ms = o('MachineSet', 'md', {}, owned('MachineDeployment', 'md'));
  const machine = o('Machine', 'md-x', {}, owned('MachineSet', 'md'));
  const m3m = o('Metal3Machine', 'md-x', {}, owned('Machine', 'md-x'));
  const claim = o('Metal3DataClaim', 'md-x', {}, owned('Metal3Machine', 'md-x'));
  const data = o(
    'Metal3Data',
    't-0',
    {},
    {
      ownerReferences: [
        {
          apiVersion: 'x/v1',
          kind: 'Metal3DataTemplate',
          name: 't',
          uid: 'u-Metal3DataTemplate-t',
          controller: true,
        },
        { apiVersion: 'x/v1', kind: 'Metal3DataClaim', name: 'md-x', uid: 'u-Metal3DataClaim-md-x' },
      ],
    },
  );
  const theirMachine = o('Machine', 'theirs');
  const theirM3m = o('Metal3Machine', 'theirs', {}, owned('Machine', 'theirs'));
  const cycle = o('Machine', 'loop', {}, owned('Machine', 'loop'));
  const all = [md, ms, machine, m3m, claim, data, theirMachine, theirM3m, cycle];

  it('follows ownerReferences upward through known objects', () => {
    const known = byUid(all);
    const roots = new Set([md.metadata.uid!]);
    expect(all.filter((x) => belongsTo(x, roots, known)).map((x) => `${x.kind}/${x.metadata.name}`)).toEqual([
      'MachineDeployment/md',
      'MachineSet/md',
      'Machine/md-x',
      'Metal3Machine/md-x',
      'Metal3DataClaim/md-x',
      'Metal3Data/t-0',
    ]);
  });

  it("finds the run's Metal3Machines: those whose Machine belongs to what it applied", () => {
    expect(runMetal3Machines(all, new Set([md.metadata.uid!])).map((x) => x.metadata.name)).toEqual(['md-x']);
    expect(runMetal3Machines(all, new Set([theirMachine.metadata.uid!])).map((x) => x.metadata.name)).toEqual(
      ['theirs'],
    );
    expect(runMetal3Machines(all, new Set(['nothing']))).toEqual([]);
  });
});
