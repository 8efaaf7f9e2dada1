import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { projectName, templateValues } from '../../../shared/vmetal/values.ts';

const claim: KubeObject = {
  apiVersion: 'vmetal.metal3fn.io/v1alpha1',
  kind: 'NodeClaim',
  metadata: {
    name: 'team-gpu-x7k2p',
    generateName: 'team-gpu-',
    namespace: 'p-team',
    uid: '0b6c1f7e-1111-2222-3333-444455556666',
    resourceVersion: '42',
    generation: 3,
    labels: { app: 'x' },
    annotations: { note: 'y' },
    finalizers: ['vmetal.metal3fn.io/nodeclaim'],
  },
  spec: {
    providerRef: 'prov',
    typeRef: 'gpu',
    environmentRef: 'env1',
    vClusterRef: 'team',
    controlPlane: true,
    properties: { rack: 'r1' },
    taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }],
    startupTaints: [{ key: 'init', effect: 'NoExecute' }],
    kubeletArgs: { 'max-pods': '250' },
    desiredCapacity: { cpu: '4', memory: '16Gi' },
    requirements: [{ key: 'rack', operator: 'In', values: ['r1', 'r2'] }],
    power: 'on',
  },
  status: { phase: 'Pending', reason: 'Scheduling', message: 'waiting' },
};

const bmh: KubeObject = {
  apiVersion: 'metal3.io/v1alpha1',
  kind: 'BareMetalHost',
  metadata: { name: 'h1', namespace: 'metal3' },
  spec: { bootMACAddress: '00:1a:2b:3c:4d:5e' },
};

describe('templateValues', () => {
  it('Go field names for the NodeClaim and the Project, JSON for the host', () => {
    expect(
      templateValues({
        claim,
        properties: { 'vcluster.com/node-type': 'gpu', rack: 'r1' },
        sshKeys: ['ssh-ed25519 AAAA a@b'],
        host: bmh,
        address: { address: '10.0.0.7', prefix: 24, gateway: '10.0.0.1' },
      }),
    ).toEqual({
      NodeClaim: {
        Kind: 'NodeClaim',
        APIVersion: 'vmetal.metal3fn.io/v1alpha1',
        Name: 'team-gpu-x7k2p',
        GenerateName: 'team-gpu-',
        Namespace: 'p-team',
        UID: '0b6c1f7e-1111-2222-3333-444455556666',
        ResourceVersion: '42',
        Generation: 3,
        Labels: { app: 'x' },
        Annotations: { note: 'y' },
        Finalizers: ['vmetal.metal3fn.io/nodeclaim'],
        Spec: {
          ProviderRef: 'prov',
          TypeRef: 'gpu',
          EnvironmentRef: 'env1',
          VClusterRef: 'team',
          ControlPlane: true,
          Properties: { rack: 'r1' },
          Taints: [{ Key: 'dedicated', Value: 'gpu', Effect: 'NoSchedule' }],
          StartupTaints: [{ Key: 'init', Value: '', Effect: 'NoExecute' }],
          KubeletArgs: { 'max-pods': '250' },
          DesiredCapacity: { cpu: '4', memory: '16Gi' },
          Requirements: [{ Key: 'rack', Operator: 'In', Values: ['r1', 'r2'] }],
          Power: 'on',
        },
        Status: { Phase: 'Pending', Reason: 'Scheduling', Message: 'waiting' },
      },
      Project: { Name: 'team' },
      Properties: { 'vcluster.com/node-type': 'gpu', rack: 'r1' },
      SSHKeys: ['ssh-ed25519 AAAA a@b'],
      BareMetalHost: {
        apiVersion: 'metal3.io/v1alpha1',
        kind: 'BareMetalHost',
        metadata: { name: 'h1', namespace: 'metal3' },
        spec: { bootMACAddress: '00:1a:2b:3c:4d:5e' },
      },
      AllocatedIP: '10.0.0.7',
      PrefixLength: 24,
      Gateway: '10.0.0.1',
    });
  });

  it('unset fields have Go zero values; no address: "", 0, ""', () => {
    const v = templateValues({
      claim: { metadata: { name: 'c', namespace: 'team' }, spec: { vClusterRef: 't' } },
      properties: {},
      sshKeys: [],
    });
    expect(v).toEqual({
      NodeClaim: {
        Kind: '',
        APIVersion: '',
        Name: 'c',
        GenerateName: '',
        Namespace: 'team',
        UID: '',
        ResourceVersion: '',
        Generation: 0,
        Labels: {},
        Annotations: {},
        Finalizers: [],
        Spec: {
          ProviderRef: '',
          TypeRef: '',
          EnvironmentRef: '',
          VClusterRef: 't',
          ControlPlane: false,
          Properties: {},
          Taints: [],
          StartupTaints: [],
          KubeletArgs: {},
          DesiredCapacity: {},
          Requirements: [],
          Power: '',
        },
        Status: { Phase: '', Reason: '', Message: '' },
      },
      Project: { Name: 'team' },
      Properties: {},
      SSHKeys: [],
      AllocatedIP: '',
      PrefixLength: 0,
      Gateway: '',
    });
    expect(v).not.toHaveProperty('BareMetalHost');
  });

  it('copies: changing the values changes no input', () => {
    const host = structuredClone(bmh);
    const props = { a: '1' };
    const v = templateValues({ claim, properties: props, sshKeys: [], host });
    (v.BareMetalHost!.spec as Record<string, unknown>).bootMACAddress = 'changed';
    v.Properties.a = '2';
    v.NodeClaim.Labels.app = 'changed';
    expect(host).toEqual(bmh);
    expect(props).toEqual({ a: '1' });
    expect(claim.metadata.labels).toEqual({ app: 'x' });
  });

  it('a configurable project prefix', () => {
    expect(
      templateValues({ claim, properties: {}, sshKeys: [], projectPrefix: 'loft-p-' }).Project.Name,
    ).toBe('p-team');
  });
});

describe('projectName', () => {
  it.each([
    ['p-team', 'p-', 'team'],
    ['team', 'p-', 'team'],
    ['p-', 'p-', 'p-'],
    ['loft-p-team', 'loft-p-', 'team'],
    ['p-team', '', 'p-team'],
  ])('%s with prefix %j -> %s', (ns, prefix, expected) => {
    expect(projectName(ns, prefix)).toBe(expected);
  });
});
