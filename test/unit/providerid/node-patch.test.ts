/** The guarded Node write of resolveProviderID (shared/providerid/node-patch.ts, ADR 026). */
import { describe, expect, it } from 'vitest';
import { providerIDPatch } from '../../../shared/providerid/index.ts';

describe('providerIDPatch', () => {
  it('tests the uid, each label read (escaped, null when absent) and the unset providerID, then adds it', () => {
    expect(
      providerIDPatch(
        {
          uid: 'u-1',
          labels: { 'metal3.io/uuid': null, 'kubernetes.io/hostname': 'h-1' },
          providerID: undefined,
        },
        'metal3://ns/h-1/m-1',
      ),
    ).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'u-1' },
      { op: 'test', path: '/metadata/labels/kubernetes.io~1hostname', value: 'h-1' },
      { op: 'test', path: '/metadata/labels/metal3.io~1uuid', value: null },
      { op: 'test', path: '/spec/providerID', value: null },
      { op: 'add', path: '/spec/providerID', value: 'metal3://ns/h-1/m-1' },
    ]);
  });

  it('a providerID read as "" is tested as ""', () => {
    expect(providerIDPatch({ uid: 'u', labels: {}, providerID: '' }, 'metal3://a/b/c')).toContainEqual({
      op: 'test',
      path: '/spec/providerID',
      value: '',
    });
  });
});
