import { describe, expect, it } from 'vitest';
import { allocateAddress } from '../../../shared/ipam/allocate.ts';
import {
  formatOverlaps,
  HOST_NETWORK_ANNOTATIONS,
  hostNetworkAnnotations,
  ipClaimName,
  networkOverlaps,
  type PoolLike,
  parseNetwork,
  poolNameFor,
  poolSpecFor,
  serverList,
  type VMetalNetwork,
} from '../../../shared/vmetal/network.ts';
import { inputError } from './helpers.ts';

const CIDR = 'metal3.vcluster.com/network-cidr';
const RANGE = 'metal3.vcluster.com/network-ip-range';

describe('parseNetwork', () => {
  it.each([
    [
      'CIDR: host part is the gateway',
      { [CIDR]: '10.0.0.1/24' },
      {
        family: 4,
        subnet: '10.0.0.0/24',
        prefix: 24,
        gateway: '10.0.0.1',
        ranges: [{ start: '10.0.0.2', end: '10.0.0.254' }],
      },
    ],
    [
      'CIDR: a gateway in the middle splits the range',
      { [CIDR]: '192.168.10.100/24' },
      {
        family: 4,
        subnet: '192.168.10.0/24',
        prefix: 24,
        gateway: '192.168.10.100',
        ranges: [
          { start: '192.168.10.1', end: '192.168.10.99' },
          { start: '192.168.10.101', end: '192.168.10.254' },
        ],
      },
    ],
    [
      'CIDR: the network address means the first host is the gateway',
      { [CIDR]: '10.0.0.0/24' },
      {
        family: 4,
        subnet: '10.0.0.0/24',
        prefix: 24,
        gateway: '10.0.0.1',
        ranges: [{ start: '10.0.0.2', end: '10.0.0.254' }],
      },
    ],
    [
      'CIDR: /30 leaves one address',
      { [CIDR]: '10.0.0.1/30' },
      {
        family: 4,
        subnet: '10.0.0.0/30',
        prefix: 30,
        gateway: '10.0.0.1',
        ranges: [{ start: '10.0.0.2', end: '10.0.0.2' }],
      },
    ],
    [
      'CIDR: gateway at the top',
      { [CIDR]: '10.0.0.254/24' },
      {
        family: 4,
        subnet: '10.0.0.0/24',
        prefix: 24,
        gateway: '10.0.0.254',
        ranges: [{ start: '10.0.0.1', end: '10.0.0.253' }],
      },
    ],
    [
      'CIDR: IPv6 (no broadcast)',
      { [CIDR]: '2001:db8::1/120' },
      {
        family: 6,
        subnet: '2001:db8::/120',
        prefix: 120,
        gateway: '2001:db8::1',
        ranges: [{ start: '2001:db8::2', end: '2001:db8::ff' }],
      },
    ],
    [
      'range: prefix and gateway from the CIDR',
      { [CIDR]: '10.0.0.1/24', [RANGE]: '10.0.0.100-10.0.0.120,10.0.0.200-10.0.0.210' },
      {
        family: 4,
        subnet: '10.0.0.0/24',
        prefix: 24,
        gateway: '10.0.0.1',
        ranges: [
          { start: '10.0.0.100', end: '10.0.0.120' },
          { start: '10.0.0.200', end: '10.0.0.210' },
        ],
      },
    ],
    [
      'range: sorted, single addresses, spaces and a trailing comma',
      { [CIDR]: '10.0.0.1/24', [RANGE]: ' 10.0.0.50 , 10.0.0.10-10.0.0.12, ' },
      {
        family: 4,
        subnet: '10.0.0.0/24',
        prefix: 24,
        gateway: '10.0.0.1',
        ranges: [
          { start: '10.0.0.10', end: '10.0.0.12' },
          { start: '10.0.0.50', end: '10.0.0.50' },
        ],
      },
    ],
    [
      'range: network, gateway and broadcast are cut out',
      { [CIDR]: '10.0.0.5/24', [RANGE]: '10.0.0.0-10.0.0.7,10.0.0.250-10.0.0.255' },
      {
        family: 4,
        subnet: '10.0.0.0/24',
        prefix: 24,
        gateway: '10.0.0.5',
        ranges: [
          { start: '10.0.0.1', end: '10.0.0.4' },
          { start: '10.0.0.6', end: '10.0.0.7' },
          { start: '10.0.0.250', end: '10.0.0.254' },
        ],
      },
    ],
  ])('%s', (_n, props, expected) => {
    expect(parseNetwork(props)).toEqual(expected);
  });

  it('neither property: no static network', () => {
    expect(parseNetwork({})).toBeUndefined();
    expect(parseNetwork({ [CIDR]: '', [RANGE]: '' })).toBeUndefined();
  });

  it.each([
    [
      { [RANGE]: '10.0.0.2-10.0.0.9' },
      RANGE,
      'needs properties["metal3.vcluster.com/network-cidr"] for the prefix length and the gateway',
    ],
    [{ [CIDR]: '10.0.0.1' }, CIDR, '"10.0.0.1" is not a CIDR (e.g. 10.0.0.1/24: the gateway and the prefix)'],
    [
      { [CIDR]: '10.0.0.1/33' },
      CIDR,
      '"10.0.0.1/33" is not a CIDR (e.g. 10.0.0.1/24: the gateway and the prefix)',
    ],
    [{ [CIDR]: 'ten/8' }, CIDR, '"ten/8" is not a CIDR (e.g. 10.0.0.1/24: the gateway and the prefix)'],
    [{ [CIDR]: '10.0.0.255/24' }, CIDR, '"10.0.0.255/24" leaves no address for a gateway'],
    [{ [CIDR]: '10.0.0.1/31' }, CIDR, '"10.0.0.1/31" leaves no address for a gateway'],
    [{ [CIDR]: '10.0.0.1/32' }, CIDR, '"10.0.0.1/32" leaves no address for a gateway'],
    [
      { [CIDR]: '2001:db8::/127' },
      CIDR,
      '"2001:db8::/127" leaves no address to allocate (network, gateway and broadcast addresses are never handed out)',
    ],
    [
      { [CIDR]: '10.0.0.1/24', [RANGE]: '10.0.0.9-10.0.0.2' },
      RANGE,
      'range 10.0.0.9-10.0.0.2: the end is before the start',
    ],
    [
      { [CIDR]: '10.0.0.1/24', [RANGE]: '10.0.1.2-10.0.1.9' },
      RANGE,
      'range 10.0.1.2-10.0.1.9 is not inside 10.0.0.0/24 (properties["metal3.vcluster.com/network-cidr"])',
    ],
    [{ [CIDR]: '10.0.0.1/24', [RANGE]: '10.0.0.x-10.0.0.9' }, RANGE, '"10.0.0.x" is not an IP address'],
    [
      { [CIDR]: '10.0.0.1/24', [RANGE]: '2001:db8::2' },
      RANGE,
      '2001:db8::2 is not of the family of properties["metal3.vcluster.com/network-cidr"]',
    ],
    [
      { [CIDR]: '10.0.0.1/24', [RANGE]: '10.0.0.2-10.0.0.9,10.0.0.9-10.0.0.12' },
      RANGE,
      'range 10.0.0.9-10.0.0.12 overlaps 10.0.0.2-10.0.0.9',
    ],
    [{ [CIDR]: '10.0.0.1/24', [RANGE]: ' , ' }, RANGE, 'no range given (write a-b,c-d)'],
    [
      { [CIDR]: '10.0.0.1/24', [RANGE]: '10.0.0.1' },
      RANGE,
      '"10.0.0.1" leaves no address to allocate (network, gateway and broadcast addresses are never handed out)',
    ],
  ])('refuses %j', (props, key, detail) => {
    const e = inputError(() => parseNetwork(props));
    expect(e.field).toBe(`properties["${key}"]`);
    expect(e.detail).toBe(detail);
  });
});

const net = (props: Record<string, string>): VMetalNetwork => parseNetwork(props)!;

describe('pool', () => {
  const n = net({ [CIDR]: '10.0.0.1/24', [RANGE]: '10.0.0.100-10.0.0.120' });

  it('the spec is our IPAM shape', () => {
    expect(poolSpecFor(n, 'prov-abc')).toEqual({
      namePrefix: 'prov-abc',
      pools: [{ start: '10.0.0.100', end: '10.0.0.120' }],
      prefix: 24,
      gateway: '10.0.0.1',
    });
  });

  it('IPAM allocates from it, never the gateway, network or broadcast address', () => {
    const spec = poolSpecFor(net({ [CIDR]: '10.0.0.1/30' }), 'p');
    expect(allocateAddress(spec, [], { name: 'a' })).toEqual({
      address: '10.0.0.2',
      prefix: 30,
      gateway: '10.0.0.1',
      dnsServers: [],
    });
    expect(() => allocateAddress(spec, ['10.0.0.2'], { name: 'b' })).toThrow('Exhausted IP Pools');
  });

  it('the name is deterministic per provider and network', () => {
    const name = poolNameFor('prov', n);
    expect(name).toMatch(/^prov-[0-9a-f]{10}$/);
    expect(poolNameFor('prov', net({ [CIDR]: '10.0.0.1/24', [RANGE]: '10.0.0.100-10.0.0.120' }))).toBe(name);
    expect(poolNameFor('prov', net({ [CIDR]: '10.0.0.1/24', [RANGE]: '10.0.0.100-10.0.0.121' }))).not.toBe(
      name,
    );
    expect(poolNameFor('prov', net({ [CIDR]: '10.0.0.2/24', [RANGE]: '10.0.0.100-10.0.0.120' }))).not.toBe(
      name,
    );
    expect(poolNameFor('other', n)).not.toBe(name.replace('prov', 'other'));
    // The same network written differently is the same network.
    expect(poolNameFor('prov', net({ [CIDR]: '10.0.0.1/24', [RANGE]: '10.0.0.100-10.0.0.120,' }))).toBe(name);
  });

  it('a long provider name is cut to keep the name at most 63 characters', () => {
    const name = poolNameFor(`${'a'.repeat(51)}-b${'c'.repeat(30)}`, n);
    expect(name).toMatch(new RegExp(`^${'a'.repeat(51)}-[0-9a-f]{10}$`));
    expect(name.length).toBe(62);
  });
});

describe('networkOverlaps', () => {
  const n = net({ [CIDR]: '10.0.0.1/24', [RANGE]: '10.0.0.100-10.0.0.120' });
  const pool = (name: string, spec: PoolLike['spec']): PoolLike => ({ namespace: 'metal3', name, spec });
  it.each([
    [
      'disjoint range, same gateway',
      pool('capm3', {
        namePrefix: 'x',
        pools: [{ start: '10.0.0.10', end: '10.0.0.50' }],
        gateway: '10.0.0.1',
      }),
      [],
    ],
    [
      'overlapping start/end',
      pool('capm3', { namePrefix: 'x', pools: [{ start: '10.0.0.110', end: '10.0.0.150' }] }),
      [
        {
          pool: 'metal3/capm3',
          what: 'range',
          ours: '10.0.0.100-10.0.0.120',
          theirs: '10.0.0.110-10.0.0.150',
        },
      ],
    ],
    [
      'a subnet-only entry (from its address + 1 to the end of the subnet)',
      pool('capm3', { namePrefix: 'x', pools: [{ subnet: '10.0.0.115/24' }] }),
      [
        {
          pool: 'metal3/capm3',
          what: 'range',
          ours: '10.0.0.100-10.0.0.120',
          theirs: '10.0.0.116-10.0.0.255',
        },
      ],
    ],
    [
      'a subnet-only entry above ours',
      pool('capm3', { namePrefix: 'x', pools: [{ subnet: '10.0.0.120/24' }] }),
      [],
    ],
    [
      'our gateway in their range',
      pool('capm3', { namePrefix: 'x', pools: [{ start: '10.0.0.1', end: '10.0.0.5' }] }),
      [{ pool: 'metal3/capm3', what: 'gateway', ours: '10.0.0.1', theirs: '10.0.0.1-10.0.0.5' }],
    ],
    [
      'another family',
      pool('v6', { namePrefix: 'x', pools: [{ start: '2001:db8::1', end: '2001:db8::ff' }] }),
      [],
    ],
    [
      'an unusable pool hands out nothing',
      pool('bad', { namePrefix: 'x', pools: [{ start: '10.0.0.1', end: '2001:db8::1' }] }),
      [],
    ],
  ])('%s', (_n, other, expected) => {
    expect(networkOverlaps(n, [other])).toEqual(expected);
  });

  it('skips the pool serving the network itself', () => {
    const self = { namespace: 'metal3', name: 'prov-1' };
    expect(networkOverlaps(n, [{ ...self, spec: poolSpecFor(n, 'prov-1') }], self)).toEqual([]);
    expect(networkOverlaps(n, [{ ...self, spec: poolSpecFor(n, 'prov-1') }]).length).toBe(1);
  });

  it('formats', () => {
    expect(
      formatOverlaps([
        { pool: 'metal3/a', what: 'range', ours: '10.0.0.100-10.0.0.120', theirs: '10.0.0.110-10.0.0.150' },
        { pool: 'metal3/b', what: 'gateway', ours: '10.0.0.1', theirs: '10.0.0.1-10.0.0.5' },
      ]),
    ).toBe(
      'range 10.0.0.100-10.0.0.120 overlaps IPPool metal3/a (10.0.0.110-10.0.0.150); gateway 10.0.0.1 is inside IPPool metal3/b (10.0.0.1-10.0.0.5)',
    );
  });
});

describe('serverList', () => {
  const DNS = 'metal3.vcluster.com/dns-servers';
  const NTP = 'metal3.vcluster.com/ntp-servers';
  it.each([
    [DNS, '8.8.8.8, 1.1.1.1', ['8.8.8.8', '1.1.1.1']],
    [DNS, '2001:DB8::0:53', ['2001:db8::53']],
    [DNS, '', []],
    [NTP, '10.0.0.1,pool.ntp.org, time-1.example.com', ['10.0.0.1', 'pool.ntp.org', 'time-1.example.com']],
  ] as const)('%s=%j', (key, value, expected) => {
    expect(serverList({ [key]: value }, key)).toEqual(expected);
  });
  it.each([
    [DNS, 'dns.google', '"dns.google" is not an IP address'],
    [DNS, '8.8.8', '"8.8.8" is not an IP address'],
    [NTP, 'bad host!', '"bad host!" is not an IP address or a host name'],
    [NTP, '300.1.1.1', '"300.1.1.1" is not an IP address or a host name'],
  ] as const)('refuses %s=%j', (key, value, detail) => {
    const e = inputError(() => serverList({ [key]: value }, key));
    expect(e.field).toBe(`properties["${key}"]`);
    expect(e.detail).toBe(detail);
  });
});

describe('host annotations', () => {
  it('CIDR form, gateway, comma lists', () => {
    expect(
      hostNetworkAnnotations({
        address: '10.0.0.7',
        prefix: 24,
        gateway: '10.0.0.1',
        dnsServers: ['8.8.8.8', '1.1.1.1'],
        ntpServers: ['pool.ntp.org'],
      }),
    ).toEqual({
      'metal3.vcluster.com/ip-address': '10.0.0.7/24',
      'metal3.vcluster.com/gateway': '10.0.0.1',
      'metal3.vcluster.com/dns-servers': '8.8.8.8,1.1.1.1',
      'metal3.vcluster.com/ntp-servers': 'pool.ntp.org',
    });
  });
  it('empty lists and no gateway stay absent', () => {
    expect(
      hostNetworkAnnotations({ address: '10.0.0.7', prefix: 24, dnsServers: [], ntpServers: [] }),
    ).toEqual({
      'metal3.vcluster.com/ip-address': '10.0.0.7/24',
    });
  });
  it('lists every key it may write', () => {
    expect([...HOST_NETWORK_ANNOTATIONS].sort()).toEqual([
      'metal3.vcluster.com/dns-servers',
      'metal3.vcluster.com/gateway',
      'metal3.vcluster.com/ip-address',
      'metal3.vcluster.com/ntp-servers',
    ]);
  });
});

describe('ipClaimName', () => {
  it('is deterministic and keeps namespaces apart', () => {
    const a = ipClaimName({ namespace: 'p-a', name: 'c1' });
    expect(a).toMatch(/^c1-[0-9a-f]{8}$/);
    expect(ipClaimName({ namespace: 'p-a', name: 'c1' })).toBe(a);
    expect(ipClaimName({ namespace: 'p-b', name: 'c1' })).not.toBe(a);
    expect(ipClaimName({ namespace: 'p', name: `${'x'.repeat(39)}-yyyy` })).toMatch(
      new RegExp(`^${'x'.repeat(39)}-[0-9a-f]{8}$`),
    );
  });
});
