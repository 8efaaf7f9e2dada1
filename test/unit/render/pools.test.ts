import { describe, expect, it } from 'vitest';
import { isMetal3Pool, referencedPools } from '../../../shared/render/index.ts';
import { inputs, renderErrorOf, template } from '../../helpers/render.ts';

const m3 = (name: string) => ({ name, apiGroup: 'ipam.metal3.io', kind: 'IPPool' });

describe('referencedPools', () => {
  it.each([
    ['nothing', {}, []],
    [
      'metaData pools, deduplicated, apiGroup/kind forced to Metal3 IPPool',
      {
        metaData: {
          ipAddressesFromIPPool: [{ key: 'a', name: 'p1' }],
          prefixesFromIPPool: [
            { key: 'b', name: 'p1' },
            { key: 'c', name: 'p2' },
          ],
          gatewaysFromIPPool: [{ key: 'd', name: 'p3', apiGroup: 'other.io', kind: 'Other' }],
          dnsServersFromIPPool: [{ key: 'e', name: 'p4' }],
        },
      },
      [m3('p1'), m3('p2'), m3('p3'), m3('p4')],
    ],
    [
      'static network precedence: fromPoolAnnotation > fromPoolRef > ipAddressFromIPPool (only one claimed)',
      {
        networkData: {
          networks: {
            ipv4: [
              {
                id: 'a',
                link: 'l',
                ipAddressFromIPPool: 'unused-1',
                fromPoolRef: { name: 'unused-2' },
                fromPoolAnnotation: { object: 'machine', annotation: 'pool-name' },
              },
              {
                id: 'b',
                link: 'l',
                ipAddressFromIPPool: 'unused-3',
                fromPoolRef: { name: 'capi', apiGroup: 'ipam.cluster.x-k8s.io', kind: 'InClusterIPPool' },
              },
            ],
            ipv6: [{ id: 'c', link: 'l', ipAddressFromIPPool: 'v6' }],
          },
        },
      },
      [m3('pool-a'), { name: 'capi', apiGroup: 'ipam.cluster.x-k8s.io', kind: 'InClusterIPPool' }, m3('v6')],
    ],
    [
      'fromPoolRef with only a kind or only a group gets the other defaulted',
      {
        networkData: {
          networks: {
            ipv4: [
              { id: 'a', link: 'l', fromPoolRef: { name: 'k', kind: 'GlobalInClusterIPPool' } },
              { id: 'b', link: 'l', fromPoolRef: { name: 'g', apiGroup: 'example.io' } },
            ],
          },
        },
      },
      [
        { name: 'k', apiGroup: 'ipam.metal3.io', kind: 'GlobalInClusterIPPool' },
        { name: 'g', apiGroup: 'example.io', kind: 'IPPool' },
      ],
    ],
    [
      'routes of every network type, gateway (claimed even when a string wins) and DNS pools, then top-level DNS',
      {
        networkData: {
          networks: {
            ipv6SLAAC: [
              { id: 's', link: 'l', routes: [{ network: '::', gateway: { fromIPPool: 'gw-slaac' } }] },
            ],
            ipv6DHCP: [
              { id: 'd6', link: 'l', routes: [{ network: '::', services: { dnsFromIPPool: 'dns-d6' } }] },
            ],
            ipv4DHCP: [
              {
                id: 'd4',
                link: 'l',
                routes: [
                  { network: '0.0.0.0', gateway: { string: '10.0.0.1', fromIPPool: 'gw-d4' } },
                  {
                    network: '0.0.0.0',
                    gateway: { fromPoolAnnotation: { object: 'machine', annotation: 'pool-name' } },
                  },
                ],
              },
            ],
            ipv4: [
              {
                id: 'v4',
                link: 'l',
                ipAddressFromIPPool: 'addr',
                routes: [
                  { network: '0.0.0.0', gateway: { fromPoolRef: { name: 'gw-ref' }, fromIPPool: 'not-me' } },
                ],
              },
            ],
          },
          services: { dnsFromIPPool: 'dns-top' },
        },
      },
      [m3('addr'), m3('gw-ref'), m3('gw-d4'), m3('pool-a'), m3('dns-d6'), m3('gw-slaac'), m3('dns-top')],
    ],
    [
      'empty names are ignored',
      {
        networkData: {
          networks: {
            ipv4DHCP: [{ id: 'd', link: 'l', routes: [{ network: '0.0.0.0', gateway: { fromIPPool: '' } }] }],
          },
          services: { dnsFromIPPool: '' },
        },
      },
      [],
    ],
  ])('%s', (_name, spec, expected) => {
    expect(referencedPools(template(spec), inputs())).toEqual(expected);
  });

  it('same name with another apiGroup/kind is an error naming both places', () => {
    const spec = template({
      metaData: { ipAddressesFromIPPool: [{ key: 'ip', name: 'shared' }] },
      networkData: {
        networks: {
          ipv4: [
            {
              id: 'n',
              link: 'l',
              fromPoolRef: { name: 'shared', apiGroup: 'ipam.cluster.x-k8s.io', kind: 'InClusterIPPool' },
            },
          ],
        },
      },
    });
    const field = 'spec.networkData.networks.ipv4[0]';
    expect(renderErrorOf(() => referencedPools(spec, inputs()))).toEqual({
      field,
      message:
        `${field}: pool "shared" is referenced as InClusterIPPool.ipam.cluster.x-k8s.io here but as ` +
        'IPPool.ipam.metal3.io at spec.metaData.ipAddressesFromIPPool[0].name; one name can only be one pool',
    });
  });

  it.each([
    [
      'empty pool annotation on a static network',
      {
        networkData: {
          networks: {
            ipv6: [
              { id: 'n', link: 'l', fromPoolAnnotation: { object: 'baremetalhost', annotation: 'nope' } },
            ],
          },
        },
      },
      'spec.networkData.networks.ipv6[0].fromPoolAnnotation',
      'annotation "nope" of the baremetalhost is missing or empty; it must name the IP pool',
    ],
    [
      'empty pool annotation on a route gateway',
      {
        networkData: {
          networks: {
            ipv4DHCP: [
              {
                id: 'n',
                link: 'l',
                routes: [
                  {
                    network: '0.0.0.0',
                    gateway: { fromPoolAnnotation: { object: 'machine', annotation: 'x' } },
                  },
                ],
              },
            ],
          },
        },
      },
      'spec.networkData.networks.ipv4DHCP[0].routes[0].gateway.fromPoolAnnotation',
      'annotation "x" of the machine is missing or empty; it must name the IP pool',
    ],
    [
      'unknown object kind in a pool annotation',
      {
        networkData: {
          networks: {
            ipv4: [{ id: 'n', link: 'l', fromPoolAnnotation: { object: 'secret', annotation: 'x' } }],
          },
        },
      },
      'spec.networkData.networks.ipv4[0].fromPoolAnnotation.object',
      'unknown object type "secret": expected machine, metal3machine or baremetalhost',
    ],
  ])('%s', (_name, spec, field, detail) => {
    expect(renderErrorOf(() => referencedPools(template(spec), inputs()))).toEqual({
      field,
      message: `${field}: ${detail}`,
    });
  });

  it.each([
    [m3('p'), true],
    [{ name: 'p', apiGroup: 'ipam.cluster.x-k8s.io', kind: 'InClusterIPPool' }, false],
    [{ name: 'p', apiGroup: 'ipam.metal3.io', kind: 'Other' }, false],
  ])('isMetal3Pool(%j) = %s', (ref, expected) => {
    expect(isMetal3Pool(ref)).toBe(expected);
  });
});
