import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../shared/kube/types.ts';
import {
  bootstrapSecret,
  cloneMetal3Machine,
  newKubeadmConfig,
  newMachine,
  ownerLabels,
  scalePlan,
} from './capi-objects.ts';

const m = (name: string, created: string, deleting = false): KubeObject => ({
  metadata: { name, creationTimestamp: created, ...(deleting ? { deletionTimestamp: created } : {}) },
});

describe('scalePlan', () => {
  const ms = [
    m('a', '2026-01-01T00:00:01Z'),
    m('b', '2026-01-01T00:00:03Z'),
    m('c', '2026-01-01T00:00:02Z'),
    m('d', '2026-01-01T00:00:09Z', true),
  ];
  it.each([
    [3, 0, []],
    [5, 2, []],
    [2, 0, ['b']],
    [0, 0, ['b', 'c', 'a']],
  ])('replicas %i -> create %i, remove %j', (replicas, create, remove) => {
    const p = scalePlan(ms, replicas);
    expect(p.create).toBe(create);
    expect(p.remove.map((x) => x.metadata.name)).toEqual(remove);
  });
});

describe('objects', () => {
  const kcp: KubeObject = {
    apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1',
    kind: 'KubeadmControlPlane',
    metadata: { name: 'cp', namespace: 'metal3', uid: 'u-cp' },
  };
  const owner = {
    owner: kcp,
    kind: 'KubeadmControlPlane' as const,
    name: 'cp',
    clusterName: 'c',
    version: 'v1.28.1',
    labels: ownerLabels('KubeadmControlPlane', 'cp', 'c'),
    templateName: 'tmpl',
  };
  it('newMachine: owner, labels, finalizer, infrastructureRef', () => {
    expect(newMachine(owner, 'cp-abcde')).toEqual({
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      metadata: {
        name: 'cp-abcde',
        namespace: 'metal3',
        labels: {
          'cluster.x-k8s.io/cluster-name': 'c',
          'cluster.x-k8s.io/control-plane': '',
          'cluster.x-k8s.io/control-plane-name': 'cp',
        },
        ownerReferences: [
          {
            apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1',
            kind: 'KubeadmControlPlane',
            name: 'cp',
            uid: 'u-cp',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        finalizers: ['machine.cluster.x-k8s.io'],
      },
      spec: {
        clusterName: 'c',
        bootstrap: {},
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'Metal3Machine',
          name: 'cp-abcde',
          namespace: 'metal3',
        },
        version: 'v1.28.1',
      },
    });
  });
  it('cloneMetal3Machine: cloned-from annotations, template metadata, spec copy', () => {
    const machine = {
      ...newMachine(owner, 'cp-x'),
      metadata: { ...newMachine(owner, 'cp-x').metadata, uid: 'u-m' },
    };
    const tmpl: KubeObject = {
      metadata: { name: 'tmpl' },
      spec: {
        template: {
          metadata: { labels: { t: '1' }, annotations: { a: '2' } },
          spec: { image: { url: 'u', checksum: 'c' } },
        },
      },
    };
    const c = cloneMetal3Machine(tmpl, machine);
    expect(c.metadata.annotations).toEqual({
      a: '2',
      'cluster.x-k8s.io/cloned-from-name': 'tmpl',
      'cluster.x-k8s.io/cloned-from-groupkind': 'Metal3MachineTemplate.infrastructure.cluster.x-k8s.io',
    });
    expect(c.metadata.labels).toMatchObject({ t: '1', 'cluster.x-k8s.io/control-plane-name': 'cp' });
    expect(c.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'Machine',
      name: 'cp-x',
      uid: 'u-m',
      controller: true,
    });
    expect(c.spec).toEqual({ image: { url: 'u', checksum: 'c' } });
  });
  it('bootstrapSecret: key value and format cloud-config', () => {
    const s = bootstrapSecret(
      { ...newMachine(owner, 'cp-x'), metadata: { ...newMachine(owner, 'cp-x').metadata, uid: 'u' } },
      'c',
    );
    expect(s.metadata.name).toBe('cp-x-bootstrap');
    expect(s.type).toBe('cluster.x-k8s.io/secret');
    expect(Buffer.from((s.data as any).format, 'base64').toString()).toBe('cloud-config');
    expect(Buffer.from((s.data as any).value, 'base64').toString()).toMatch(/^#cloud-config\n/);
  });
  it('newKubeadmConfig: named after the Machine, cluster label, owned by the owner; newMachine refers to it', () => {
    const config = newKubeadmConfig(owner, 'cp-x', { joinConfiguration: {} });
    expect(config).toEqual({
      apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1',
      kind: 'KubeadmConfig',
      metadata: {
        name: 'cp-x',
        namespace: 'metal3',
        labels: { 'cluster.x-k8s.io/cluster-name': 'c' },
        ownerReferences: [
          expect.objectContaining({ kind: 'KubeadmControlPlane', name: 'cp', uid: 'u-cp', controller: true }),
        ],
      },
      spec: { joinConfiguration: {} },
    });
    const ref = {
      configRef: { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1', kind: 'KubeadmConfig', name: 'cp-x' },
    };
    expect((newMachine(owner, 'cp-x', ref).spec as { bootstrap: unknown }).bootstrap).toEqual(ref);
  });
});
