/**
 * The Metal3DataTemplate example of seed 001, end to end: YAML -> schema -> referencedPools ->
 * renderData -> Secret YAML, with the expected output written by hand.
 *
 * Transcription fixes to the flattened seed text (as DESIGN §2 allows): `Name:` -> `name:`,
 * `IPAddressFromIPPool` -> `ipAddressFromIPPool`, indentation restored. The seed's MAC
 * placeholders `XX:XX:XX:XX:XX:XX` / `YY:YY:YY:YY:YY:YY` are not MAC addresses: the verbatim
 * placeholders are tested to fail with a RenderError, and the full render uses real MACs.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseMetal3DataTemplate } from '../../../shared/api/index.ts';
import { type NetworkData, RenderError, referencedPools, renderData } from '../../../shared/render/index.ts';
import { serializeMetaData, serializeNetworkData } from '../../../shared/render/serialize.ts';
import { inputs, template } from '../../helpers/render.ts';
import { SEED_TEMPLATE, SEED_TEMPLATE_REAL_MACS } from '../../helpers/seed001-template.ts';

// index 0: the seed's Metal3Data is nodepool-1-0
const seedInputs = inputs({ index: 0 });

const EXPECTED_META = {
  mac: '00:00:5e:00:53:a0',
  // the seed writes key `ip` for both the address and the prefix: the prefix, later, wins
  ip: '24',
  gateway: '192.168.0.1',
  dns: '8.8.8.8,8.8.4.4',
  index: '0',
  name_m3m: 'm3m-1',
  name_machine: 'machine-1',
  name_bmh: 'node-0',
  'label-1': 'label-value',
  'annotation-1': 'annotation-value',
  abc: 'def',
  providerid: 'default/node-0/m3m-1',
};

const EXPECTED_NETWORK: NetworkData = {
  links: [
    {
      type: 'bond',
      id: 'bond0',
      mtu: 1500,
      bond_mode: '802.3ad',
      bond_xmit_hash_policy: '',
      bond_links: ['enp1s0', 'enp2s0'],
      ethernet_mac_address: '00:00:5e:00:53:10',
    },
    { type: 'phy', id: 'enp1s0', mtu: 1500, ethernet_mac_address: '00:00:5e:00:53:01' },
    { type: 'phy', id: 'enp2s0', mtu: 1500, ethernet_mac_address: '00:00:5e:00:53:a1' },
    {
      type: 'vlan',
      id: 'vlan1',
      mtu: 1500,
      vlan_link: 'bond0',
      vlan_id: 1,
      vlan_mac_address: '00:00:5e:00:53:11',
    },
  ],
  networks: [
    {
      type: 'ipv4',
      id: 'Baremetal',
      link: 'vlan1',
      ip_address: '192.168.0.13',
      netmask: '255.255.255.0',
      routes: [
        {
          network: '0.0.0.0',
          netmask: '0.0.0.0',
          gateway: '192.168.0.1',
          services: [
            { type: 'dns', address: '8.8.4.4' },
            { type: 'dns', address: '8.8.8.8' },
            { type: 'dns', address: '8.8.4.4' },
          ],
        },
      ],
    },
    {
      type: 'ipv6',
      id: 'Baremetal6',
      link: 'vlan1',
      ip_address: '2001:db8::13',
      netmask: 'ffff:ffff:ffff:ffff::',
      routes: [
        {
          network: '0::0',
          netmask: '::',
          gateway: '2001:0db8:85a3::8a2e:0370:1',
          services: [
            { type: 'dns', address: '2001:4860:4860::8844' },
            { type: 'dns', address: '2001:db8::53' },
          ],
        },
      ],
    },
    { type: 'ipv4_dhcp', id: 'provisioning', link: 'bond0', routes: [] },
    { type: 'ipv6_dhcp', id: 'provisioning6', link: 'bond0', routes: [] },
    { type: 'ipv6_slaac', id: 'provisioning6slaac', link: 'bond0', routes: [] },
  ],
  services: [
    { type: 'dns', address: '8.8.8.8' },
    { type: 'dns', address: '2001:4860:4860::8888' },
  ],
};

const EXPECTED_META_YAML = `abc: def
annotation-1: annotation-value
dns: 8.8.8.8,8.8.4.4
gateway: 192.168.0.1
index: "0"
ip: "24"
label-1: label-value
mac: 00:00:5e:00:53:a0
name_bmh: node-0
name_m3m: m3m-1
name_machine: machine-1
providerid: default/node-0/m3m-1
`;

describe('seed 001 Metal3DataTemplate, end to end', () => {
  const parsed = parseMetal3DataTemplate(parse(SEED_TEMPLATE_REAL_MACS));

  it('references pool-1 and pool6-1 once each, metal3 IPPools, in order of first use', () => {
    expect(referencedPools(parsed.spec, seedInputs)).toEqual([
      { name: 'pool-1', apiGroup: 'ipam.metal3.io', kind: 'IPPool' },
      { name: 'pool6-1', apiGroup: 'ipam.metal3.io', kind: 'IPPool' },
    ]);
  });

  it('renders the hand-written metaData and networkData', () => {
    const rendered = renderData(parsed.spec, seedInputs);
    expect(rendered.metaData).toEqual(EXPECTED_META);
    expect(rendered.networkData).toEqual(EXPECTED_NETWORK);
  });

  it('serialises metaData as sorted YAML with string values', () => {
    const rendered = renderData(parsed.spec, seedInputs);
    expect(serializeMetaData(rendered.metaData)).toBe(EXPECTED_META_YAML);
    const yaml = serializeNetworkData(rendered.networkData!);
    expect(yaml).toContain('vlan_id: 1\n');
    expect(yaml).toContain('mtu: 1500\n');
    expect(parse(yaml)).toEqual(EXPECTED_NETWORK);
  });

  it('the verbatim seed MAC placeholder is a RenderError naming the field', () => {
    // The schema already refuses it; the renderer refuses it too when given unvalidated input.
    const raw = parse(SEED_TEMPLATE) as { spec: unknown };
    expect(() => parseMetal3DataTemplate(raw)).toThrow(/macAddress\.string/);
    let caught: unknown;
    try {
      renderData(template(raw.spec), seedInputs);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(RenderError);
    expect((caught as RenderError).field).toBe('spec.networkData.links.bonds[0].macAddress.string');
    expect((caught as RenderError).message).toBe(
      'spec.networkData.links.bonds[0].macAddress.string: bad MAC address "XX:XX:XX:XX:XX:XX" ' +
        '(expected six hex pairs separated by ":" or "-")',
    );
  });
});
