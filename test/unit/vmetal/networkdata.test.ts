import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { serializeNetworkData } from '../../../shared/render/serialize.ts';
import {
  bootMacAddress,
  generatedNetworkData,
  parseNetworkDataText,
} from '../../../shared/vmetal/networkdata.ts';
import { inputError } from './helpers.ts';

const host = (mac: unknown): KubeObject => ({
  metadata: { name: 'h1', namespace: 'metal3' },
  spec: mac === undefined ? {} : { bootMACAddress: mac },
});

describe('bootMacAddress', () => {
  it.each([
    ['00:1A:2b:3c:4d:5e', '00:1a:2b:3c:4d:5e'],
    ['00-1a-2b-3c-4d-5e', '00-1a-2b-3c-4d-5e'],
  ])('%s', (mac, expected) => {
    expect(bootMacAddress(host(mac))).toBe(expected);
  });
  it.each([
    [undefined, 'is not set (generated network data keys on it)'],
    ['', 'is not set (generated network data keys on it)'],
    ['00:1a:2b:3c:4d', '"00:1a:2b:3c:4d" is not a MAC address'],
  ])('refuses %j', (mac, detail) => {
    const e = inputError(() => bootMacAddress(host(mac)));
    expect(e.field).toBe('BareMetalHost metal3/h1 spec.bootMACAddress');
    expect(e.detail).toBe(detail);
  });
});

describe('generatedNetworkData', () => {
  it('IPv4: phy link by MAC, the network, a default route, DNS services', () => {
    expect(
      generatedNetworkData('00:1a:2b:3c:4d:5e', {
        address: '10.0.0.7',
        prefix: 24,
        gateway: '10.0.0.1',
        dnsServers: ['8.8.8.8', '1.1.1.1'],
        ntpServers: ['pool.ntp.org'],
      }),
    ).toEqual({
      links: [{ id: 'eth0', type: 'phy', mtu: 1500, ethernet_mac_address: '00:1a:2b:3c:4d:5e' }],
      networks: [
        {
          id: 'network0',
          type: 'ipv4',
          link: 'eth0',
          ip_address: '10.0.0.7',
          netmask: '255.255.255.0',
          routes: [{ network: '0.0.0.0', netmask: '0.0.0.0', gateway: '10.0.0.1', services: [] }],
        },
      ],
      services: [
        { type: 'dns', address: '8.8.8.8' },
        { type: 'dns', address: '1.1.1.1' },
      ],
    });
  });

  it('IPv6, no gateway, no DNS', () => {
    expect(
      generatedNetworkData('00:1a:2b:3c:4d:5e', {
        address: '2001:db8::7',
        prefix: 64,
        dnsServers: [],
        ntpServers: [],
      }),
    ).toEqual({
      links: [{ id: 'eth0', type: 'phy', mtu: 1500, ethernet_mac_address: '00:1a:2b:3c:4d:5e' }],
      networks: [
        {
          id: 'network0',
          type: 'ipv6',
          link: 'eth0',
          ip_address: '2001:db8::7',
          netmask: 'ffff:ffff:ffff:ffff::',
          routes: [],
        },
      ],
      services: [],
    });
  });

  it('serializes with the CAPM3 serializer', () => {
    const yaml = serializeNetworkData(
      generatedNetworkData('00:1a:2b:3c:4d:5e', {
        address: '10.0.0.7',
        prefix: 24,
        gateway: '10.0.0.1',
        dnsServers: ['8.8.8.8'],
        ntpServers: [],
      }),
    );
    expect(yaml).toBe(
      [
        'links:',
        '  - ethernet_mac_address: 00:1a:2b:3c:4d:5e',
        '    id: eth0',
        '    mtu: 1500',
        '    type: phy',
        'networks:',
        '  - id: network0',
        '    ip_address: 10.0.0.7',
        '    link: eth0',
        '    netmask: 255.255.255.0',
        '    routes:',
        '      - gateway: 10.0.0.1',
        '        netmask: 0.0.0.0',
        '        network: 0.0.0.0',
        '        services: []',
        '    type: ipv4',
        'services:',
        '  - address: 8.8.8.8',
        '    type: dns',
        '',
      ].join('\n'),
    );
  });
});

describe('parseNetworkDataText', () => {
  const F = 'properties["metal3.vcluster.com/network-data"]';
  it.each([
    [
      'JSON',
      '{"links": [{"id": "eth0", "type": "phy"}], "networks": [], "services": []}',
      { links: [{ id: 'eth0', type: 'phy' }], networks: [], services: [] },
    ],
    [
      'YAML',
      'links:\n  - id: eth0\n    mtu: 9000\nnetworks: []\n',
      { links: [{ id: 'eth0', mtu: 9000 }], networks: [] },
    ],
    ['an empty mapping', '{}', {}],
  ])('%s', (_n, text, expected) => {
    expect(parseNetworkDataText(text, F)).toEqual(expected);
  });

  it.each([
    ['not YAML', '{"links": [', 'is not JSON or YAML: '],
    ['duplicate keys', 'links: []\nlinks: []\n', 'is not JSON or YAML: '],
    ['two documents', 'links: []\n---\nnetworks: []\n', 'is not JSON or YAML: '],
    ['a list', '- a\n- b\n', 'must be a JSON or YAML mapping (network_data.json: links, networks, services)'],
    ['a scalar', 'hello', 'must be a JSON or YAML mapping (network_data.json: links, networks, services)'],
    ['empty', '', 'must be a JSON or YAML mapping (network_data.json: links, networks, services)'],
    ['links not a list', 'links: eth0\n', 'links must be a list'],
  ])('refuses %s', (_n, text, detail) => {
    const e = inputError(() => parseNetworkDataText(text, F));
    expect(e.field).toBe(F);
    expect(e.detail.startsWith(detail)).toBe(true);
  });
});
