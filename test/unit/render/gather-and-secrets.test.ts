import { describe, expect, it } from 'vitest';
import { newIPClaim } from '../../../functions/render-data/addresses.ts';
import { buildSecrets, secretNames, secretState } from '../../../functions/render-data/secrets.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

const data: KubeObject = {
  metadata: {
    name: 'tpl-3',
    namespace: 'ns',
    uid: 'd-uid',
    labels: { 'cluster.x-k8s.io/cluster-name': 'c1' },
  },
};

describe('renderData pure parts', () => {
  it('names the Secrets after the Metal3Machine and the index; networkdata only with a networkData part', () => {
    expect(secretNames('m', 3, true)).toEqual({ metaData: 'm-metadata-3', networkData: 'm-networkdata-3' });
    expect(secretNames('m', 3, false)).toEqual({ metaData: 'm-metadata-3', networkData: undefined });
  });

  it('builds byte-identical Secrets from equal inputs', async () => {
    const rendered = {
      metaData: { index: '3', b: 'x', a: '' },
      networkData: { links: [], networks: [], services: [] },
    };
    const a = await buildSecrets(data, secretNames('m', 3, true), rendered as never, 'c1');
    const b = await buildSecrets(data, secretNames('m', 3, true), structuredClone(rendered) as never, 'c1');
    expect(a).toEqual(b);
    expect(a[0]).toEqual({
      metadata: {
        name: 'm-metadata-3',
        namespace: 'ns',
        labels: { 'cluster.x-k8s.io/cluster-name': 'c1' },
        ownerReferences: [
          {
            apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
            kind: 'Metal3Data',
            name: 'tpl-3',
            uid: 'd-uid',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      type: 'infrastructure.cluster.x-k8s.io/secret',
      data: { metaData: Buffer.from('a: ""\nb: x\nindex: "3"\n').toString('base64') },
    });
    expect(Object.keys(a[1]!.data as object)).toEqual(['networkData']);
  });

  it('classifies an existing Secret', () => {
    const owned = (uid: string, kind = 'Metal3Data'): KubeObject => ({
      metadata: { ownerReferences: [{ apiVersion: 'x/v1', kind, name: 'n', uid }] },
    });
    expect(secretState(undefined, 'd-uid')).toBe('missing');
    expect(secretState(owned('d-uid'), 'd-uid')).toBe('ours');
    expect(secretState(owned('old'), 'd-uid')).toBe('foreign-data');
    expect(secretState({ metadata: {} }, 'd-uid')).toBe('user');
    expect(secretState(owned('x', 'ConfigMap'), 'd-uid')).toBe('user');
  });

  it('an IPClaim per pool: <m3d>-<pool>, controller owner, labels, finalizer', () => {
    expect(newIPClaim(data, 'pool-1')).toEqual({
      metadata: {
        name: 'tpl-3-pool-1',
        namespace: 'ns',
        labels: { 'cluster.x-k8s.io/cluster-name': 'c1' },
        // Created with the IPAM finalizer allocateIndex would otherwise add in a second write.
        finalizers: ['metal3data.infrastructure.cluster.x-k8s.io', 'ipclaim.ipam.metal3.io'],
        ownerReferences: [
          {
            apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
            kind: 'Metal3Data',
            name: 'tpl-3',
            uid: 'd-uid',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: { pool: { name: 'pool-1', namespace: 'ns' } },
    });
  });
});
