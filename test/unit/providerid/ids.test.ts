import { describe, expect, it } from 'vitest';
import {
  cloudProviderEnabled,
  legacyProviderID,
  newProviderID,
  parseProviderID,
} from '../../../shared/providerid/index.ts';

describe('provider ID formats', () => {
  it('builds both formats', () => {
    expect(newProviderID('metal3', 'node-0', 'test-m3m')).toBe('metal3://metal3/node-0/test-m3m');
    expect(legacyProviderID('d668eb95-5df6-4c10-a01a-fc69f4299fc6')).toBe(
      'metal3://d668eb95-5df6-4c10-a01a-fc69f4299fc6',
    );
  });

  it.each([
    ['', { format: 'empty' }],
    [undefined, { format: 'empty' }],
    [
      'metal3://metal3/node-0/test-m3m',
      { format: 'new', namespace: 'metal3', host: 'node-0', machine: 'test-m3m' },
    ],
    [
      'metal3://d668eb95-5df6-4c10-a01a-fc69f4299fc6',
      { format: 'legacy', uid: 'd668eb95-5df6-4c10-a01a-fc69f4299fc6' },
    ],
    ['metal3://a/b', { format: 'unsupported' }],
    ['metal3://a/b/c/d', { format: 'unsupported' }],
    ['metal3:///b/c', { format: 'unsupported' }],
    ['metal3://', { format: 'unsupported' }],
    ['aws:///eu-west-1a/i-0', { format: 'unsupported' }],
    ['metal3://Upper/b/c', { format: 'unsupported' }],
  ])('parses %j', (id, want) => {
    expect(parseProviderID(id as string | undefined)).toMatchObject(want);
  });

  it('cloud provider switch: cloudProviderEnabled true or noCloudProvider explicitly false', () => {
    expect(cloudProviderEnabled({ cloudProviderEnabled: true })).toBe(true);
    expect(cloudProviderEnabled({ noCloudProvider: false })).toBe(true);
    expect(cloudProviderEnabled({ noCloudProvider: true })).toBe(false);
    expect(cloudProviderEnabled({})).toBe(false);
    expect(cloudProviderEnabled(undefined)).toBe(false);
    expect(cloudProviderEnabled({ cloudProviderEnabled: false, noCloudProvider: true })).toBe(false);
  });
});
