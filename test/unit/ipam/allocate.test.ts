import { describe, expect, it } from 'vitest';
import {
  type AllocatedAddress,
  type AllocateOptions,
  allocateAddress,
  type IPPoolSpec,
  ipAddressName,
  UsedAddresses,
} from '../../../shared/ipam/allocate.ts';
import { IpamError } from '../../../shared/ipam/errors.ts';

const pool = (spec: Partial<IPPoolSpec>): IPPoolSpec => ({ namePrefix: 'p', ...spec }) as IPPoolSpec;

interface Vector {
  name: string;
  spec: IPPoolSpec;
  used: string[];
  claim: { name: string; requestedIp?: string };
  options?: AllocateOptions;
  expected: AllocatedAddress | { error: string; code: string };
}

const range10 = pool({ pools: [{ start: '10.0.0.10', end: '10.0.0.20' }], prefix: 24, gateway: '10.0.0.1' });
const slash30 = pool({ pools: [{ subnet: '192.168.0.0/30' }], prefix: 30 });

// spec/ipam-spec.md §4, expected values written from the table.
const vectors: Vector[] = [
  {
    name: '1 start/end range, lowest free',
    spec: pool({
      pools: [{ start: '192.168.0.11', end: '192.168.0.20' }],
      prefix: 24,
      gateway: '192.168.0.1',
    }),
    used: ['192.168.0.11', '192.168.0.12'],
    claim: { name: 'c' },
    expected: { address: '192.168.0.13', prefix: 24, gateway: '192.168.0.1', dnsServers: [] },
  },
  {
    name: '2 subnet only: the gateway is allocatable',
    spec: pool({ pools: [{ subnet: '192.168.0.0/24' }], prefix: 24, gateway: '192.168.0.1' }),
    used: [],
    claim: { name: 'c' },
    expected: { address: '192.168.0.1', prefix: 24, gateway: '192.168.0.1', dnsServers: [] },
  },
  {
    name: '3 subnet only: starts at the literal + 1, host bits not masked',
    spec: pool({ pools: [{ subnet: '192.168.1.10/24' }], prefix: 24, gateway: '192.168.1.1' }),
    used: ['192.168.1.11'],
    claim: { name: 'c' },
    expected: { address: '192.168.1.12', prefix: 24, gateway: '192.168.1.1', dnsServers: [] },
  },
  {
    name: '4 /30: broadcast is allocatable',
    spec: slash30,
    used: ['192.168.0.1', '192.168.0.2'],
    claim: { name: 'c' },
    expected: { address: '192.168.0.3', prefix: 30, dnsServers: [] },
  },
  {
    name: '5 /30 exhausted',
    spec: slash30,
    used: ['192.168.0.1', '192.168.0.2', '192.168.0.3'],
    claim: { name: 'c' },
    expected: { error: 'Exhausted IP Pools', code: 'Exhausted' },
  },
  {
    name: '6 second entry overrides prefix, gateway and dns',
    spec: pool({
      pools: [
        { start: '10.0.0.10', end: '10.0.0.10', prefix: 24, gateway: '10.0.0.1' },
        { subnet: '10.0.1.0/24', prefix: 25, gateway: '10.0.1.1', dnsServers: ['8.8.8.8'] },
      ],
      prefix: 16,
      gateway: '10.0.255.254',
      dnsServers: ['1.1.1.1'],
    }),
    used: ['10.0.0.10'],
    claim: { name: 'c' },
    expected: { address: '10.0.1.1', prefix: 25, gateway: '10.0.1.1', dnsServers: ['8.8.8.8'] },
  },
  {
    name: "7 another claim's pre-allocation is skipped",
    spec: pool({
      pools: [{ start: '10.0.0.10', end: '10.0.0.12' }],
      prefix: 24,
      gateway: '10.0.0.1',
      preAllocations: { other: '10.0.0.10' },
    }),
    // used is empty, as in the table: pre-allocated IPs are reserved by the allocator itself
    used: [],
    claim: { name: 'c' },
    expected: { address: '10.0.0.11', prefix: 24, gateway: '10.0.0.1', dnsServers: [] },
  },
  {
    name: "7b another claim's pre-allocation also listed in used (as upstream's UpdateAddresses does)",
    spec: pool({
      pools: [{ start: '10.0.0.10', end: '10.0.0.12' }],
      prefix: 24,
      gateway: '10.0.0.1',
      preAllocations: { other: '10.0.0.10' },
    }),
    used: ['10.0.0.10', '10.0.0.11'],
    claim: { name: 'c' },
    expected: { address: '10.0.0.12', prefix: 24, gateway: '10.0.0.1', dnsServers: [] },
  },
  {
    name: "requesting another claim's pre-allocated IP",
    spec: pool({ pools: [{ start: '10.0.0.10', end: '10.0.0.12' }], preAllocations: { other: '10.0.0.11' } }),
    used: [],
    claim: { name: 'c', requestedIp: '10.0.0.11' },
    expected: { error: 'Requested IP not available', code: 'RequestedAddressNotAvailable' },
  },
  {
    name: 'IPv6 pre-allocations of other claims are reserved by value',
    spec: pool({
      pools: [{ start: '2001:db8::1', end: '2001:db8::3' }],
      prefix: 64,
      preAllocations: { a: '2001:db8::0:1', b: '2001:0db8::2' },
    }),
    used: [],
    claim: { name: 'c' },
    expected: { address: '2001:db8::3', prefix: 64, dnsServers: [] },
  },
  {
    name: 'everything pre-allocated to others: exhausted',
    spec: pool({
      pools: [{ start: '10.0.0.10', end: '10.0.0.11' }],
      preAllocations: { a: '10.0.0.10', b: '10.0.0.11' },
    }),
    used: [],
    claim: { name: 'c' },
    expected: { error: 'Exhausted IP Pools', code: 'Exhausted' },
  },
  {
    name: '8 pre-allocated claim gets its IP with the pool defaults (entry 2 has no overrides)',
    spec: pool({
      pools: [
        { start: '10.0.0.10', end: '10.0.0.20', prefix: 26, gateway: '10.0.0.1' },
        { start: '10.0.1.10', end: '10.0.1.20' },
      ],
      prefix: 24,
      gateway: '10.0.1.1',
      preAllocations: { 'm3d-0-pool': '10.0.1.15' },
    }),
    used: ['10.0.1.15'],
    claim: { name: 'm3d-0-pool' },
    expected: { address: '10.0.1.15', prefix: 24, gateway: '10.0.1.1', dnsServers: [] },
  },
  {
    name: '9 pre-allocation outside every entry',
    spec: pool({ pools: [{ start: '10.0.0.10', end: '10.0.0.20' }], preAllocations: { c: '10.0.0.30' } }),
    used: [],
    claim: { name: 'c' },
    expected: { error: 'Pre-allocated IP out of bounds', code: 'PreAllocationOutOfBounds' },
  },
  {
    name: '10 requested IP free',
    spec: range10,
    used: ['10.0.0.10'],
    claim: { name: 'c', requestedIp: '10.0.0.15' },
    expected: { address: '10.0.0.15', prefix: 24, gateway: '10.0.0.1', dnsServers: [] },
  },
  {
    name: '11 requested IP used',
    spec: range10,
    used: ['10.0.0.15'],
    claim: { name: 'c', requestedIp: '10.0.0.15' },
    expected: { error: 'Requested IP not available', code: 'RequestedAddressNotAvailable' },
  },
  {
    name: '12 requested IP outside every entry',
    spec: range10,
    used: [],
    claim: { name: 'c', requestedIp: '10.0.0.99' },
    expected: { error: 'Exhausted IP Pools', code: 'Exhausted' },
  },
  {
    name: '13 IPv6 range',
    spec: pool({
      pools: [{ start: '2001:db8::1', end: '2001:db8::a' }],
      prefix: 64,
      gateway: '2001:db8::ffff',
    }),
    used: ['2001:db8::1'],
    claim: { name: 'c' },
    expected: { address: '2001:db8::2', prefix: 64, gateway: '2001:db8::ffff', dnsServers: [] },
  },
  {
    name: '14 start inside a subnet runs to the broadcast',
    spec: pool({ pools: [{ start: '192.168.0.250', subnet: '192.168.0.0/24' }], prefix: 24 }),
    used: ['192.168.0.250', '192.168.0.251', '192.168.0.252', '192.168.0.253', '192.168.0.254'],
    claim: { name: 'c' },
    expected: { address: '192.168.0.255', prefix: 24, dnsServers: [] },
  },
  {
    name: '15 claim already allocated keeps its IP (its own IPAddress is in used)',
    spec: range10,
    used: ['10.0.0.10', '10.0.0.11', '10.0.0.12'],
    claim: { name: 'c' },
    options: { allocations: { c: '10.0.0.11' } },
    expected: { address: '10.0.0.11', prefix: 24, gateway: '10.0.0.1', dnsServers: [] },
  },
  // beyond the table
  {
    name: 'IPv6 subnet only starts at the literal + 1',
    spec: pool({ pools: [{ subnet: '2001:db8::/126' }], prefix: 126 }),
    used: ['2001:db8::1'],
    claim: { name: 'c' },
    expected: { address: '2001:db8::2', prefix: 126, dnsServers: [] },
  },
  {
    name: 'IPv6 subnet only, exhausted after ::3',
    spec: pool({ pools: [{ subnet: '2001:db8::/126' }], prefix: 126 }),
    used: ['2001:db8::1', '2001:db8::2', '2001:db8::3'],
    claim: { name: 'c' },
    expected: { error: 'Exhausted IP Pools', code: 'Exhausted' },
  },
  {
    name: 'used compares canonical IPv6: 2001:db8::0:2 is 2001:db8::2',
    spec: pool({ pools: [{ start: '2001:db8::1', end: '2001:db8::a' }], prefix: 64 }),
    used: ['2001:db8::1', '2001:db8::0:2', '2001:0db8:0:0:0:0:0:3'],
    claim: { name: 'c' },
    expected: { address: '2001:db8::4', prefix: 64, dnsServers: [] },
  },
  {
    name: 'requested IP compared canonically',
    spec: pool({ pools: [{ start: '2001:db8::1', end: '2001:db8::a' }], prefix: 64 }),
    used: ['2001:db8::5'],
    claim: { name: 'c', requestedIp: '2001:db8:0::0:5' },
    expected: { error: 'Requested IP not available', code: 'RequestedAddressNotAvailable' },
  },
  {
    name: 'pre-allocated and identical requested IP',
    spec: pool({
      pools: [{ start: '10.0.0.10', end: '10.0.0.20' }],
      prefix: 24,
      preAllocations: { c: '10.0.0.12' },
    }),
    used: ['10.0.0.12'],
    claim: { name: 'c', requestedIp: '10.0.0.12' },
    expected: { address: '10.0.0.12', prefix: 24, dnsServers: [] },
  },
  {
    name: 'pre-allocated and a different requested IP conflict',
    spec: pool({ pools: [{ start: '10.0.0.10', end: '10.0.0.20' }], preAllocations: { c: '10.0.0.12' } }),
    used: [],
    claim: { name: 'c', requestedIp: '10.0.0.13' },
    expected: {
      error: 'PreAllocation and requested ip address are conflicting',
      code: 'PreAllocationConflict',
    },
  },
  {
    name: 'pre-allocation takes the containing entry overrides',
    spec: pool({
      pools: [
        { start: '10.0.0.10', end: '10.0.0.20', prefix: 26, gateway: '10.0.0.1', dnsServers: ['9.9.9.9'] },
      ],
      prefix: 24,
      preAllocations: { c: '10.0.0.20' },
    }),
    used: [],
    claim: { name: 'c' },
    expected: { address: '10.0.0.20', prefix: 26, gateway: '10.0.0.1', dnsServers: ['9.9.9.9'] },
  },
  {
    name: 'invalid requested IP',
    spec: range10,
    used: [],
    claim: { name: 'c', requestedIp: '10.0.0.300' },
    expected: { error: 'Invalid requested IP address: "10.0.0.300"', code: 'InvalidRequestedAddress' },
  },
  {
    name: 'end-only entry yields nothing',
    spec: pool({ pools: [{ end: '10.0.0.20' }] }),
    used: [],
    claim: { name: 'c' },
    expected: { error: 'Exhausted IP Pools', code: 'Exhausted' },
  },
  {
    name: 'start outside its subnet yields nothing; next entry used',
    spec: pool({
      pools: [
        { start: '10.0.1.5', subnet: '10.0.0.0/24' },
        { start: '10.0.2.5', end: '10.0.2.5' },
      ],
    }),
    used: [],
    claim: { name: 'c' },
    expected: { address: '10.0.2.5', prefix: 0, dnsServers: [] },
  },
  {
    name: 'no pools at all',
    spec: pool({}),
    used: [],
    claim: { name: 'c' },
    expected: { error: 'Exhausted IP Pools', code: 'Exhausted' },
  },
  {
    name: 'start-only entry is unbounded',
    spec: pool({ pools: [{ start: '10.0.0.254' }] }),
    used: ['10.0.0.254', '10.0.0.255'],
    claim: { name: 'c' },
    expected: { address: '10.0.1.0', prefix: 0, dnsServers: [] },
  },
  {
    name: 'start-only entry stops at IPv4 overflow',
    spec: pool({ pools: [{ start: '255.255.255.255' }] }),
    used: ['255.255.255.255'],
    claim: { name: 'c' },
    expected: { error: 'Exhausted IP Pools', code: 'Exhausted' },
  },
  {
    name: 'unparseable used entries never match',
    spec: range10,
    used: ['garbage', '10.0.0.010'],
    claim: { name: 'c' },
    expected: { address: '10.0.0.10', prefix: 24, gateway: '10.0.0.1', dnsServers: [] },
  },
  {
    name: 'bad start',
    spec: pool({ pools: [{ start: '10.0.0', end: '10.0.0.20' }] }),
    used: [],
    claim: { name: 'c' },
    expected: { error: 'pools[0]: start "10.0.0" is not an IP address', code: 'InvalidPool' },
  },
  {
    name: 'bad subnet',
    spec: pool({ pools: [{ subnet: '10.0.0.0/40' }] }),
    used: [],
    claim: { name: 'c' },
    expected: { error: 'pools[0]: subnet "10.0.0.0/40" is not a CIDR', code: 'InvalidPool' },
  },
  {
    name: 'mixed families',
    spec: pool({ pools: [{ start: '10.0.0.1', end: '2001:db8::1' }] }),
    used: [],
    claim: { name: 'c' },
    expected: { error: 'pools[0]: start and end are of different IP families', code: 'InvalidPool' },
  },
];

describe('allocateAddress (ipam-spec §4 and more)', () => {
  it.each(vectors)('$name', ({ spec, used, claim, options, expected }) => {
    if ('error' in expected) {
      let caught: unknown;
      try {
        allocateAddress(spec, used, claim, options);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(IpamError);
      expect((caught as IpamError).message).toBe(expected.error);
      expect((caught as IpamError).code).toBe(expected.code);
    } else {
      expect(allocateAddress(spec, used, claim, options)).toEqual(expected);
    }
  });

  it('accepts a prepared UsedAddresses set', () => {
    const used = new UsedAddresses(['10.0.0.10']);
    expect(allocateAddress(range10, used, { name: 'c' }).address).toBe('10.0.0.11');
    used.add('10.0.0.11');
    expect(allocateAddress(range10, used, { name: 'c' }).address).toBe('10.0.0.12');
  });

  it('finds the lowest free address among 10,000 used without materialising the range', () => {
    const used: string[] = [];
    // 10.0.0.0 .. 10.0.39.15 taken (10,000 addresses), in scrambled order
    for (let i = 9999; i >= 0; i--) used.push(`10.0.${Math.floor(i / 256)}.${i % 256}`);
    const spec = pool({ pools: [{ subnet: '10.0.0.0/8' }], prefix: 8 });
    // subnet-only starts at 10.0.0.1; 10,000 used from 10.0.0.0 => first free is 10.0.39.16
    expect(allocateAddress(spec, used, { name: 'c' }).address).toBe('10.0.39.16');
    const v6 = pool({ pools: [{ start: '2001:db8::', end: '2001:db8::ffff:ffff:ffff:ffff' }], prefix: 64 });
    const used6 = Array.from({ length: 10_000 }, (_, i) => `2001:db8::${i.toString(16)}`);
    // 0x0..0x270f taken => 0x2710
    expect(allocateAddress(v6, used6, { name: 'c' }).address).toBe('2001:db8::2710');
  });
});

describe('allocationStrategy: random', () => {
  const spec = pool({
    pools: [
      { start: '10.0.0.10', end: '10.0.0.19' },
      { start: '10.0.1.10', end: '10.0.1.11' },
    ],
    prefix: 24,
    allocationStrategy: 'random',
  });
  it.each([
    ['offset 0 -> start', 0n, [], '10.0.0.10'],
    ['offset 5 -> start + 5', 5n, [], '10.0.0.15'],
    ['offset 5, taken, scans forward', 5n, ['10.0.0.15', '10.0.0.16'], '10.0.0.17'],
    ['offset 8, tail taken, wraps to the start', 8n, ['10.0.0.18', '10.0.0.19'], '10.0.0.10'],
    [
      'first entry full, second entry used',
      1n,
      Array.from({ length: 10 }, (_, i) => `10.0.0.${10 + i}`),
      '10.0.1.11',
    ],
  ] as const)('%s', (_name, offset, used, expected) => {
    const sizes: bigint[] = [];
    const random = (size: bigint) => {
      sizes.push(size);
      return offset;
    };
    expect(allocateAddress(spec, used, { name: 'c' }, { random }).address).toBe(expected);
    expect(sizes[0]).toBe(10n);
  });

  it('exhausts like sequential', () => {
    const used = [...Array.from({ length: 10 }, (_, i) => `10.0.0.${10 + i}`), '10.0.1.10', '10.0.1.11'];
    expect(() => allocateAddress(spec, used, { name: 'c' }, { random: () => 3n })).toThrow(
      'Exhausted IP Pools',
    );
  });

  it('default random source stays inside the entry', () => {
    for (let i = 0; i < 50; i++) {
      const { address } = allocateAddress(spec, [], { name: 'c' });
      expect(address).toMatch(/^10\.0\.0\.1[0-9]$/);
    }
  });
});

describe('ipAddressName', () => {
  it.each([
    ['test1-prov', '192.168.0.13', 'test1-prov-192-168-0-13'],
    ['p', '2001:db8::2', 'p-2001-db8--2'],
    ['p', '2001:db8::0:2', 'p-2001-db8--2'],
    ['p', '2001:db8::', 'p-2001-db8'],
    ['p', '::1', 'p---1'],
  ])('%s + %s = %s', (prefix, ip, name) => {
    expect(ipAddressName(prefix, ip)).toBe(name);
  });
});
