import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { NetworkData } from '../../../shared/render/index.ts';
import { serializeMetaData, serializeNetworkData } from '../../../shared/render/serialize.ts';

// Strings every YAML 1.1 or 1.2 reader (Go's yaml in baremetal-operator is 1.1) would otherwise
// turn into numbers, booleans, null, timestamps or sexagesimals.
const TRICKY: Record<string, string> = {
  index: '2',
  empty: '',
  float: '1.5',
  exp: '1e3',
  octal: '010',
  octal12: '0o17',
  hex: '0x1F',
  bin: '0b101',
  underscore: '1_000',
  sexagesimal: '1:20',
  yes: 'yes',
  No: 'No',
  on: 'on',
  OFF: 'OFF',
  y: 'y',
  n: 'n',
  true: 'true',
  False: 'False',
  null: 'null',
  tilde: '~',
  inf: '.inf',
  nan: '.NaN',
  date: '2020-04-02',
  timestamp: '2020-04-02T06:36:09Z',
  mac: '12:34:56:12:34:56',
  ipv4: '192.168.0.1',
  ipv6: '2001:db8::1',
  colon: 'a: b',
  hash: '#x',
  dash: '-',
  leading: ' x',
  multiline: 'a\nb',
  long: 'x'.repeat(300),
  '2': 'numeric key',
  trailingNewline: 'line\n',
  trailingSpace: 'x ',
  tab: '\t',
  unicode: 'nœud-été-节点',
  doubleQuotes: '"quoted"',
  singleQuotes: "'single'",
  indicators: '@at `tick %pct !bang &amp *star',
  flow: '[a, b]',
  flowMap: '{a: b}',
  fold: '>fold',
  pipe: '|pipe',
  question: '? q',
  'key: with colon': 'v',
  '': 'empty key',
  providerid: 'default/node-0/m3m-1',
};

describe('serializeMetaData', () => {
  it('writes sorted keys and exactly these quotes', () => {
    expect(serializeMetaData({ z: 'last', index: '2', empty: '', a: 'first', on: 'yes' })).toBe(
      'a: first\nempty: ""\nindex: "2"\n"on": "yes"\nz: last\n',
    );
  });

  it.each([
    ['YAML 1.1', { version: '1.1' } as const],
    ['YAML 1.2', { version: '1.2' } as const],
  ])('every value parses back as the same string (%s reader)', (_name, options) => {
    const back = parse(serializeMetaData(TRICKY), options) as Record<string, unknown>;
    expect(Object.keys(back).sort()).toEqual(Object.keys(TRICKY).sort());
    for (const [key, value] of Object.entries(TRICKY)) {
      expect(typeof back[key], key).toBe('string');
      expect(back[key], key).toBe(value);
    }
  });

  it('is stable: same data in another key order gives the same bytes', () => {
    const reversed = Object.fromEntries(Object.entries(TRICKY).reverse());
    expect(serializeMetaData(reversed)).toBe(serializeMetaData(TRICKY));
  });
});

describe('serializeNetworkData', () => {
  const dns = [{ type: 'dns' as const, address: '8.8.8.8' }];
  const doc: NetworkData = {
    links: [
      {
        type: 'bond',
        id: 'bond0',
        mtu: 9000,
        bond_mode: '802.3ad',
        bond_xmit_hash_policy: '',
        bond_links: ['a', 'b'],
        bond_miimon: 100,
      },
      {
        type: 'vlan',
        id: '10',
        mtu: 1500,
        vlan_link: 'bond0',
        vlan_id: 10,
        vlan_mac_address: '00:00:5e:00:53:01',
      },
    ],
    networks: [
      {
        type: 'ipv4',
        id: 'n',
        link: '10',
        ip_address: '192.168.0.13',
        netmask: '255.255.255.0',
        // the same array object twice: must not become a YAML alias
        routes: [
          { network: '0.0.0.0', netmask: '0.0.0.0', gateway: '', services: dns },
          { network: '10.0.0.0', netmask: '255.0.0.0', gateway: '192.168.0.1', services: dns },
        ],
      },
    ],
    services: dns,
  };

  it.each([
    ['YAML 1.1', { version: '1.1' } as const],
    ['YAML 1.2', { version: '1.2' } as const],
  ])('round-trips with the same types (%s reader)', (_name, options) => {
    const text = serializeNetworkData(doc);
    expect(text).not.toMatch(/[&*]a\d/);
    const back = parse(text, options) as NetworkData;
    expect(back).toEqual(doc);
    const vlan = back.links[1] as { vlan_id: unknown; mtu: unknown; id: unknown };
    expect(typeof vlan.vlan_id).toBe('number');
    expect(typeof vlan.mtu).toBe('number');
    expect(vlan.id).toBe('10');
  });

  it('writes integers plain, numeric-looking strings quoted, keys sorted', () => {
    const text = serializeNetworkData({
      links: [{ type: 'vlan', id: '10', mtu: 1500, vlan_link: 'eth0', vlan_id: 10 }],
      networks: [],
      services: [],
    });
    expect(text).toBe(
      'links:\n  - id: "10"\n    mtu: 1500\n    type: vlan\n    vlan_id: 10\n    vlan_link: eth0\nnetworks: []\nservices: []\n',
    );
  });
});
