import { describe, expect, it } from 'vitest';
import { renderNetworkData } from '../../../shared/render/index.ts';
import { inputs, renderErrorOf, template } from '../../helpers/render.ts';

const nd = (networkData: unknown) => template({ networkData });

describe('renderNetworkData: document shape', () => {
  it.each([
    ['no networkData template', {}],
    ['empty networkData', { networkData: {} }],
    ['empty groups', { networkData: { links: {}, networks: {}, services: {} } }],
  ])('%s -> all three keys, empty arrays', (_name, spec) => {
    expect(renderNetworkData(template(spec), inputs())).toEqual({ links: [], networks: [], services: [] });
  });
});

describe('renderNetworkData: links', () => {
  it.each([
    [
      'ethernet without MAC',
      { ethernets: [{ type: 'phy', id: 'eth0', mtu: 1500 }] },
      [{ type: 'phy', id: 'eth0', mtu: 1500 }],
    ],
    [
      'ethernet MAC from string, host interface, annotation (any object)',
      {
        ethernets: [
          { type: 'phy', id: 'a', mtu: 9000, macAddress: { string: 'AA:bb:CC:dd:EE:ff' } },
          { type: 'tap', id: 'b', mtu: 1500, macAddress: { fromHostInterface: 'eth1' } },
          {
            type: 'vif',
            id: 'c',
            mtu: 1500,
            macAddress: { fromAnnotation: { object: 'machine', annotation: 'primary-mac' } },
          },
          {
            type: 'ovs',
            id: 'd',
            mtu: 1500,
            macAddress: { fromAnnotation: { object: 'baremetalhost', annotation: 'host-mac' } },
          },
        ],
      },
      [
        { type: 'phy', id: 'a', mtu: 9000, ethernet_mac_address: 'AA:bb:CC:dd:EE:ff' },
        { type: 'tap', id: 'b', mtu: 1500, ethernet_mac_address: '00:00:5e:00:53:a1' },
        { type: 'vif', id: 'c', mtu: 1500, ethernet_mac_address: '00:00:5e:00:53:01' },
        { type: 'ovs', id: 'd', mtu: 1500, ethernet_mac_address: '00-00-5E-00-53-FF' },
      ],
    ],
    [
      'MAC precedence: string > fromHostInterface > fromAnnotation',
      {
        ethernets: [
          {
            type: 'phy',
            id: 'a',
            mtu: 1500,
            macAddress: {
              string: '02:00:00:00:00:01',
              fromHostInterface: 'eth0',
              fromAnnotation: { object: 'machine', annotation: 'primary-mac' },
            },
          },
          {
            type: 'phy',
            id: 'b',
            mtu: 1500,
            macAddress: {
              fromHostInterface: 'eth0',
              fromAnnotation: { object: 'machine', annotation: 'primary-mac' },
            },
          },
        ],
      },
      [
        { type: 'phy', id: 'a', mtu: 1500, ethernet_mac_address: '02:00:00:00:00:01' },
        { type: 'phy', id: 'b', mtu: 1500, ethernet_mac_address: '00:00:5e:00:53:a0' },
      ],
    ],
    [
      'bond with hash policy, parameters and MAC',
      {
        bonds: [
          {
            id: 'bond0',
            mtu: 9000,
            bondMode: 'balance-xor',
            bondXmitHashPolicy: 'layer3+4',
            bondLinks: ['eth0', 'eth1'],
            macAddress: { fromHostInterface: 'eth0' },
            parameters: { miimon: 100, lacp_rate: 'fast', updelay: { ms: 5 } },
          },
        ],
      },
      [
        {
          type: 'bond',
          id: 'bond0',
          mtu: 9000,
          bond_mode: 'balance-xor',
          bond_xmit_hash_policy: 'layer3+4',
          bond_links: ['eth0', 'eth1'],
          ethernet_mac_address: '00:00:5e:00:53:a0',
          bond_miimon: 100,
          bond_lacp_rate: 'fast',
          bond_updelay: { ms: 5 },
        },
      ],
    ],
    [
      'bond without hash policy or MAC',
      { bonds: [{ id: 'bond1', mtu: 1500, bondMode: 'active-backup', bondLinks: [] }] },
      [
        {
          type: 'bond',
          id: 'bond1',
          mtu: 1500,
          bond_mode: 'active-backup',
          bond_xmit_hash_policy: '',
          bond_links: [],
        },
      ],
    ],
    [
      'vlan with and without MAC; vlan 0 is a valid id',
      {
        vlans: [
          {
            id: 'vlan10',
            mtu: 1500,
            vlanID: 10,
            vlanLink: 'bond0',
            macAddress: { string: '02-00-00-00-00-0a' },
          },
          { id: 'vlan0', mtu: 1400, vlanID: 0, vlanLink: 'eth0' },
        ],
      },
      [
        {
          type: 'vlan',
          id: 'vlan10',
          mtu: 1500,
          vlan_link: 'bond0',
          vlan_id: 10,
          vlan_mac_address: '02-00-00-00-00-0a',
        },
        { type: 'vlan', id: 'vlan0', mtu: 1400, vlan_link: 'eth0', vlan_id: 0 },
      ],
    ],
    [
      'order: bonds, then ethernets, then vlans, each in template order',
      {
        vlans: [{ id: 'v1', mtu: 1500, vlanID: 1, vlanLink: 'b1' }],
        ethernets: [
          { type: 'phy', id: 'e1', mtu: 1500 },
          { type: 'phy', id: 'e2', mtu: 1500 },
        ],
        bonds: [
          { id: 'b1', mtu: 1500, bondMode: '802.3ad', bondLinks: ['e1', 'e2'] },
          { id: 'b2', mtu: 1500, bondMode: '802.3ad', bondLinks: [] },
        ],
      },
      [
        {
          type: 'bond',
          id: 'b1',
          mtu: 1500,
          bond_mode: '802.3ad',
          bond_xmit_hash_policy: '',
          bond_links: ['e1', 'e2'],
        },
        {
          type: 'bond',
          id: 'b2',
          mtu: 1500,
          bond_mode: '802.3ad',
          bond_xmit_hash_policy: '',
          bond_links: [],
        },
        { type: 'phy', id: 'e1', mtu: 1500 },
        { type: 'phy', id: 'e2', mtu: 1500 },
        { type: 'vlan', id: 'v1', mtu: 1500, vlan_link: 'b1', vlan_id: 1 },
      ],
    ],
    [
      'an interface name on each kind of link is rendered as cloud-init\'s "name" (CAPM3 v1beta1)',
      {
        bonds: [{ id: 'b0', name: 'bond0', mtu: 1500, bondMode: 'active-backup', bondLinks: ['e0'] }],
        ethernets: [
          { type: 'phy', id: 'e0', name: 'prov0', mtu: 1500, macAddress: { string: '02:00:00:00:00:01' } },
          { type: 'phy', id: 'e1', mtu: 1500 },
        ],
        vlans: [{ id: 'v5', name: 'vlan5', mtu: 1500, vlanID: 5, vlanLink: 'b0' }],
      },
      [
        {
          type: 'bond',
          id: 'b0',
          name: 'bond0',
          mtu: 1500,
          bond_mode: 'active-backup',
          bond_xmit_hash_policy: '',
          bond_links: ['e0'],
        },
        { type: 'phy', id: 'e0', name: 'prov0', mtu: 1500, ethernet_mac_address: '02:00:00:00:00:01' },
        { type: 'phy', id: 'e1', mtu: 1500 },
        { type: 'vlan', id: 'v5', name: 'vlan5', mtu: 1500, vlan_link: 'b0', vlan_id: 5 },
      ],
    ],
  ])('%s', (_name, links, expected) => {
    const out = renderNetworkData(nd({ links }), inputs());
    expect(out.links).toEqual(expected);
    expect(out.networks).toEqual([]);
    expect(out.services).toEqual([]);
  });
});

describe('renderNetworkData: networks and routes', () => {
  it.each([
    [
      'ipv4 static from ipAddressFromIPPool, no routes',
      { ipv4: [{ id: 'n4', link: 'eth0', ipAddressFromIPPool: 'pool-1' }] },
      [
        {
          type: 'ipv4',
          id: 'n4',
          link: 'eth0',
          ip_address: '192.168.0.13',
          netmask: '255.255.255.0',
          routes: [],
        },
      ],
    ],
    [
      'ipv6 static',
      { ipv6: [{ id: 'n6', link: 'eth0', ipAddressFromIPPool: 'pool6-1' }] },
      [
        {
          type: 'ipv6',
          id: 'n6',
          link: 'eth0',
          ip_address: '2001:db8::13',
          netmask: 'ffff:ffff:ffff:ffff::',
          routes: [],
        },
      ],
    ],
    [
      'static pool precedence: fromPoolAnnotation > fromPoolRef > ipAddressFromIPPool',
      {
        ipv4: [
          {
            id: 'a',
            link: 'eth0',
            ipAddressFromIPPool: 'pool-nogw',
            fromPoolRef: { name: 'pool-nogw' },
            fromPoolAnnotation: { object: 'machine', annotation: 'pool-name' },
          },
          { id: 'b', link: 'eth0', ipAddressFromIPPool: 'pool-1', fromPoolRef: { name: 'pool-nogw' } },
        ],
      },
      [
        // pool-name annotation = pool-a (same address as pool-1)
        {
          type: 'ipv4',
          id: 'a',
          link: 'eth0',
          ip_address: '192.168.0.13',
          netmask: '255.255.255.0',
          routes: [],
        },
        { type: 'ipv4', id: 'b', link: 'eth0', ip_address: '10.0.0.5', netmask: '255.0.0.0', routes: [] },
      ],
    ],
    [
      'route netmask from prefix, from netmask, prefix wins, default 0',
      {
        ipv4: [
          {
            id: 'n',
            link: 'eth0',
            ipAddressFromIPPool: 'pool-1',
            routes: [
              { network: '10.0.0.0', prefix: 8 },
              { network: '172.16.0.0', netmask: 12 },
              { network: '192.168.128.0', prefix: 17, netmask: 30 },
              { network: '0.0.0.0' },
            ],
          },
        ],
      },
      [
        {
          type: 'ipv4',
          id: 'n',
          link: 'eth0',
          ip_address: '192.168.0.13',
          netmask: '255.255.255.0',
          routes: [
            { network: '10.0.0.0', netmask: '255.0.0.0', gateway: '', services: [] },
            { network: '172.16.0.0', netmask: '255.240.0.0', gateway: '', services: [] },
            { network: '192.168.128.0', netmask: '255.255.128.0', gateway: '', services: [] },
            { network: '0.0.0.0', netmask: '0.0.0.0', gateway: '', services: [] },
          ],
        },
      ],
    ],
    [
      'IPv6 route netmasks: prefix 64, netmask 112, 0',
      {
        ipv6: [
          {
            id: 'n',
            link: 'eth0',
            ipAddressFromIPPool: 'pool6-1',
            routes: [
              { network: '2001:db8:1::', prefix: 64 },
              { network: '2001:db8:2::', netmask: 112 },
              { network: '::', netmask: 0 },
            ],
          },
        ],
      },
      [
        {
          type: 'ipv6',
          id: 'n',
          link: 'eth0',
          ip_address: '2001:db8::13',
          netmask: 'ffff:ffff:ffff:ffff::',
          routes: [
            { network: '2001:db8:1::', netmask: 'ffff:ffff:ffff:ffff::', gateway: '', services: [] },
            {
              network: '2001:db8:2::',
              netmask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:0',
              gateway: '',
              services: [],
            },
            { network: '::', netmask: '::', gateway: '', services: [] },
          ],
        },
      ],
    ],
    [
      'route gateway precedence: string > fromPoolAnnotation > fromPoolRef > fromIPPool, pool without gateway -> ""',
      {
        ipv4DHCP: [
          {
            id: 'd',
            link: 'eth0',
            routes: [
              {
                network: '10.1.0.0',
                prefix: 16,
                gateway: {
                  string: '10.1.0.254',
                  fromIPPool: 'pool-1',
                  fromPoolRef: { name: 'pool-1' },
                  fromPoolAnnotation: { object: 'machine', annotation: 'pool-name' },
                },
              },
              {
                network: '10.2.0.0',
                prefix: 16,
                gateway: {
                  fromIPPool: 'pool-nogw',
                  fromPoolAnnotation: { object: 'machine', annotation: 'pool-name' },
                },
              },
              {
                network: '10.3.0.0',
                prefix: 16,
                gateway: { fromIPPool: 'pool-1', fromPoolRef: { name: 'pool-nogw' } },
              },
              { network: '10.4.0.0', prefix: 16, gateway: { fromIPPool: 'pool-1' } },
              { network: '10.5.0.0', prefix: 16, gateway: {} },
            ],
          },
        ],
      },
      [
        {
          type: 'ipv4_dhcp',
          id: 'd',
          link: 'eth0',
          routes: [
            { network: '10.1.0.0', netmask: '255.255.0.0', gateway: '10.1.0.254', services: [] },
            { network: '10.2.0.0', netmask: '255.255.0.0', gateway: '192.168.0.1', services: [] },
            { network: '10.3.0.0', netmask: '255.255.0.0', gateway: '', services: [] },
            { network: '10.4.0.0', netmask: '255.255.0.0', gateway: '192.168.0.1', services: [] },
            { network: '10.5.0.0', netmask: '255.255.0.0', gateway: '', services: [] },
          ],
        },
      ],
    ],
    [
      'route services: static DNS first, then the pool DNS servers',
      {
        ipv6SLAAC: [
          {
            id: 's',
            link: 'eth0',
            routes: [
              {
                network: '2001:db8:9::',
                prefix: 48,
                gateway: { fromIPPool: 'pool6-1' },
                services: { dns: ['2001:db8::99'], dnsFromIPPool: 'pool6-1' },
              },
            ],
          },
        ],
      },
      [
        {
          type: 'ipv6_slaac',
          id: 's',
          link: 'eth0',
          routes: [
            {
              network: '2001:db8:9::',
              netmask: 'ffff:ffff:ffff::',
              gateway: '2001:db8::1',
              services: [
                { type: 'dns', address: '2001:db8::99' },
                { type: 'dns', address: '2001:db8::53' },
              ],
            },
          ],
        },
      ],
    ],
    [
      'order: ipv4, ipv6, ipv4DHCP, ipv6DHCP, ipv6SLAAC',
      {
        ipv6SLAAC: [{ id: 'slaac', link: 'l' }],
        ipv6DHCP: [{ id: 'dhcp6', link: 'l' }],
        ipv4DHCP: [
          { id: 'dhcp4a', link: 'l' },
          { id: 'dhcp4b', link: 'l' },
        ],
        ipv6: [{ id: 'v6', link: 'l', ipAddressFromIPPool: 'pool6-1' }],
        ipv4: [{ id: 'v4', link: 'l', ipAddressFromIPPool: 'pool-nogw' }],
      },
      [
        { type: 'ipv4', id: 'v4', link: 'l', ip_address: '10.0.0.5', netmask: '255.0.0.0', routes: [] },
        {
          type: 'ipv6',
          id: 'v6',
          link: 'l',
          ip_address: '2001:db8::13',
          netmask: 'ffff:ffff:ffff:ffff::',
          routes: [],
        },
        { type: 'ipv4_dhcp', id: 'dhcp4a', link: 'l', routes: [] },
        { type: 'ipv4_dhcp', id: 'dhcp4b', link: 'l', routes: [] },
        { type: 'ipv6_dhcp', id: 'dhcp6', link: 'l', routes: [] },
        { type: 'ipv6_slaac', id: 'slaac', link: 'l', routes: [] },
      ],
    ],
  ])('%s', (_name, networks, expected) => {
    expect(renderNetworkData(nd({ networks }), inputs()).networks).toEqual(expected);
  });

  it('top-level services: static DNS, then the pool DNS servers', () => {
    const out = renderNetworkData(
      nd({ services: { dns: ['1.1.1.1', '2606:4700::1111'], dnsFromIPPool: 'pool-1' } }),
      inputs(),
    );
    expect(out.services).toEqual([
      { type: 'dns', address: '1.1.1.1' },
      { type: 'dns', address: '2606:4700::1111' },
      { type: 'dns', address: '8.8.8.8' },
      { type: 'dns', address: '8.8.4.4' },
    ]);
  });
});

describe('renderNetworkData: bad input gives a RenderError naming the field', () => {
  it.each([
    [
      'vlan without vlanID',
      { links: { vlans: [{ id: 'v', mtu: 1500, vlanLink: 'eth0' }] } },
      {},
      'spec.networkData.links.vlans[0].vlanID',
      'vlanID is required and must be an integer, got null',
    ],
    [
      'bond parameter clashing with bond_mode',
      {
        links: {
          bonds: [
            { id: 'ok', mtu: 1500, bondMode: '802.3ad', bondLinks: [] },
            {
              id: 'b',
              mtu: 1500,
              bondMode: '802.3ad',
              bondLinks: [],
              parameters: { miimon: 1, mode: 'x', links: [] },
            },
          ],
        },
      },
      {},
      'spec.networkData.links.bonds[1].parameters.mode',
      'illegal bond parameter(s) "mode", "links": bond_mode is set from the structured field; remove it from parameters',
    ],
    [
      'bond parameter clashing with bond_xmit_hash_policy (even when unset)',
      {
        links: {
          bonds: [
            {
              id: 'b',
              mtu: 1500,
              bondMode: '802.3ad',
              bondLinks: [],
              parameters: { xmit_hash_policy: 'layer2' },
            },
          ],
        },
      },
      {},
      'spec.networkData.links.bonds[0].parameters.xmit_hash_policy',
      'illegal bond parameter(s) "xmit_hash_policy": bond_xmit_hash_policy is set from the structured field; remove it from parameters',
    ],
    [
      'bad MAC string',
      {
        links: { ethernets: [{ type: 'phy', id: 'e', mtu: 1500, macAddress: { string: '00:11:22:33:44' } }] },
      },
      {},
      'spec.networkData.links.ethernets[0].macAddress.string',
      'bad MAC address "00:11:22:33:44" (expected six hex pairs separated by ":" or "-")',
    ],
    [
      'bad MAC from an annotation',
      {
        links: {
          vlans: [
            {
              id: 'v',
              mtu: 1500,
              vlanID: 3,
              vlanLink: 'e',
              macAddress: { fromAnnotation: { object: 'metal3machine', annotation: 'bad-mac' } },
            },
          ],
        },
      },
      {},
      'spec.networkData.links.vlans[0].macAddress.fromAnnotation',
      'bad MAC address "not-a-mac" (expected six hex pairs separated by ":" or "-")',
    ],
    [
      'missing annotation for a MAC is "" and so a bad MAC',
      {
        links: {
          bonds: [
            {
              id: 'b',
              mtu: 1500,
              bondMode: '802.3ad',
              macAddress: { fromAnnotation: { object: 'machine', annotation: 'absent' } },
            },
          ],
        },
      },
      {},
      'spec.networkData.links.bonds[0].macAddress.fromAnnotation',
      'bad MAC address "" (expected six hex pairs separated by ":" or "-")',
    ],
    [
      'unknown object kind for a MAC annotation',
      {
        links: {
          ethernets: [
            {
              type: 'phy',
              id: 'e',
              mtu: 1500,
              macAddress: { fromAnnotation: { object: 'cluster', annotation: 'x' } },
            },
          ],
        },
      },
      {},
      'spec.networkData.links.ethernets[0].macAddress.fromAnnotation.object',
      'unknown object type "cluster": expected machine, metal3machine or baremetalhost',
    ],
    [
      'missing NIC',
      {
        links: {
          ethernets: [{ type: 'phy', id: 'e', mtu: 1500, macAddress: { fromHostInterface: 'eno1' } }],
        },
      },
      {},
      'spec.networkData.links.ethernets[0].macAddress.fromHostInterface',
      'NIC "eno1" not found on BareMetalHost node-0 (NICs: eth0, eth1, eth0)',
    ],
    [
      'macAddress given with no source',
      { links: { ethernets: [{ type: 'phy', id: 'e', mtu: 1500, macAddress: {} }] } },
      {},
      'spec.networkData.links.ethernets[0].macAddress',
      'no MAC address source: set string, fromHostInterface or fromAnnotation',
    ],
    [
      'static network pool not claimed',
      { networks: { ipv6: [{ id: 'n', link: 'e', ipAddressFromIPPool: 'pool-x' }] } },
      {},
      'spec.networkData.networks.ipv6[0].ipAddressFromIPPool',
      'no address from pool "pool-x" (pool not found in the claimed addresses)',
    ],
    [
      'static network without any pool',
      { networks: { ipv4: [{ id: 'n', link: 'e' }] } },
      {},
      'spec.networkData.networks.ipv4[0].ipAddressFromIPPool',
      'a static network needs its address pool: set ipAddressFromIPPool, fromPoolRef or fromPoolAnnotation',
    ],
    [
      'pool annotation empty',
      {
        networks: {
          ipv4: [
            { id: 'n', link: 'e', fromPoolAnnotation: { object: 'metal3machine', annotation: 'empty' } },
          ],
        },
      },
      {},
      'spec.networkData.networks.ipv4[0].fromPoolAnnotation',
      'annotation "empty" of the metal3machine is missing or empty; it must name the IP pool',
    ],
    [
      'IPv6 prefix on an ipv4 network',
      { networks: { ipv4: [{ id: 'n', link: 'e', ipAddressFromIPPool: 'pool6-1' }] } },
      {},
      'spec.networkData.networks.ipv4[0].ipAddressFromIPPool',
      'invalid prefix length 64 for IPv4 (0-32)',
    ],
    [
      'route prefix too long for IPv4',
      { networks: { ipv4DHCP: [{ id: 'n', link: 'e', routes: [{ network: '10.0.0.0', netmask: 33 }] }] } },
      {},
      'spec.networkData.networks.ipv4DHCP[0].routes[0].netmask',
      'invalid prefix length 33 for IPv4 (0-32)',
    ],
    [
      'route gateway pool not claimed',
      {
        networks: {
          ipv6DHCP: [{ id: 'n', link: 'e', routes: [{ network: '::', gateway: { fromIPPool: 'gone' } }] }],
        },
      },
      {},
      'spec.networkData.networks.ipv6DHCP[0].routes[0].gateway',
      'no address from pool "gone" (pool not found in the claimed addresses)',
    ],
    [
      'route DNS pool not claimed',
      {
        networks: {
          ipv4DHCP: [
            { id: 'n', link: 'e', routes: [{ network: '0.0.0.0', services: { dnsFromIPPool: 'gone' } }] },
          ],
        },
      },
      {},
      'spec.networkData.networks.ipv4DHCP[0].routes[0].services.dnsFromIPPool',
      'no address from pool "gone" (pool not found in the claimed addresses)',
    ],
    [
      'top-level DNS pool not claimed',
      { services: { dnsFromIPPool: 'gone' } },
      {},
      'spec.networkData.services.dnsFromIPPool',
      'no address from pool "gone" (pool not found in the claimed addresses)',
    ],
  ])('%s', (_name, networkData, overrides, field, detail) => {
    const error = renderErrorOf(() => renderNetworkData(nd(networkData), inputs(overrides)));
    expect(error).toEqual({ field, message: `${field}: ${detail}` });
  });
});
