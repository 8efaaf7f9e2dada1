import { describe, expect, it } from 'vitest';
import { IpamError } from '../../../shared/ipam/errors.ts';
import {
  addIp,
  canonicalIp,
  cidrContains,
  compareIp,
  formatIp,
  ipFamily,
  parseCidr,
  parseIp,
  prefixToNetmask,
  tryParseIp,
} from '../../../shared/ipam/ip.ts';

describe('parseIp / canonicalIp', () => {
  it.each([
    ['192.168.0.1', 4, 0xc0a80001n, '192.168.0.1'],
    ['0.0.0.0', 4, 0n, '0.0.0.0'],
    ['255.255.255.255', 4, 0xffffffffn, '255.255.255.255'],
    ['2001:db8::2', 6, 0x20010db8000000000000000000000002n, '2001:db8::2'],
    ['2001:db8::0:2', 6, 0x20010db8000000000000000000000002n, '2001:db8::2'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0002', 6, 0x20010db8000000000000000000000002n, '2001:db8::2'],
    ['::', 6, 0n, '::'],
    ['0::0', 6, 0n, '::'],
    ['::1', 6, 1n, '::1'],
    ['1::', 6, 0x00010000000000000000000000000000n, '1::'],
    ['1:2:3:4:5:6:7::', 6, 0x00010002000300040005000600070000n, '1:2:3:4:5:6:7:0'],
    // a single zero group is not compressed; the first of two equal runs is
    ['2001:db8:0:1:1:1:1:1', 6, 0x20010db8000000010001000100010001n, '2001:db8:0:1:1:1:1:1'],
    ['2001:0:0:1:0:0:0:1', 6, 0x20010000000000010000000000000001n, '2001:0:0:1::1'],
    ['2001:db8:0:0:1:0:0:1', 6, 0x20010db8000000000001000000000001n, '2001:db8::1:0:0:1'],
    ['2001:0db8:85a3::8a2e:0370:1', 6, 0x20010db885a3000000008a2e03700001n, '2001:db8:85a3::8a2e:370:1'],
    ['::ffff:192.0.2.1', 6, 0xffffc0000201n, '::ffff:192.0.2.1'],
    ['64:ff9b::192.0.2.33', 6, 0x0064ff9b0000000000000000c0000221n, '64:ff9b::c000:221'],
    ['::1.2.3.4', 6, 0x01020304n, '::102:304'],
    ['1:2:3:4:5:6:1.2.3.4', 6, 0x00010002000300040005000601020304n, '1:2:3:4:5:6:102:304'],
    [
      'FFFF:ffff:FFFF:ffff:FFFF:ffff:FFFF:ffff',
      6,
      (1n << 128n) - 1n,
      'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    ],
  ] as const)('%s -> IPv%d %s', (text, family, value, canonical) => {
    expect(parseIp(text)).toEqual({ family, value });
    expect(canonicalIp(text)).toBe(canonical);
    expect(ipFamily(text)).toBe(family);
  });

  it.each([
    '',
    '1.2.3',
    '1.2.3.4.5',
    '256.0.0.1',
    '01.2.3.4',
    '1.2.3.-1',
    ' 1.2.3.4',
    '1.2.3.4/24',
    'fe80::1%eth0',
    '[::1]',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7:8::',
    '1::2::3',
    '12345::',
    'g::1',
    ':1:2:3:4:5:6:7',
    '::ffff:1.2.3',
    'XX:XX:XX:XX:XX:XX',
    ':',
    ':::',
    '1:',
    '1::2:',
    '::1:',
    '1:::2',
    '1:2:3:4:5:6:7:1.2.3.4',
    '::a1.2.3.4',
    '1.2.3.4.',
    '.1.2.3',
    '1..2.3',
    '0000.0.0.0',
    '1.2.3.4 ',
  ])('rejects %j', (text) => {
    expect(tryParseIp(text)).toBeUndefined();
    expect(() => parseIp(text)).toThrow(IpamError);
    try {
      canonicalIp(text);
    } catch (e) {
      expect((e as IpamError).code).toBe('InvalidAddress');
    }
  });
});

describe('compareIp / addIp', () => {
  it.each([
    ['10.0.0.2', '10.0.0.10', -1],
    ['10.0.0.10', '10.0.0.10', 0],
    ['2001:db8::0:2', '2001:db8::2', 0],
    ['2001:db8::10', '2001:db8::9', 1],
    ['255.255.255.255', '::', -1],
  ])('%s vs %s = %d', (a, b, sign) => {
    expect(Math.sign(compareIp(parseIp(a), parseIp(b)))).toBe(sign);
  });

  it.each([
    ['192.168.0.255', 1, '192.168.1.0'],
    ['10.0.0.10', -10, '10.0.0.0'],
    ['2001:db8::ffff', 1, '2001:db8::1:0'],
  ])('%s + %d = %s', (a, n, expected) => {
    expect(formatIp(addIp(parseIp(a), n)!)).toBe(expected);
  });

  it.each([
    ['255.255.255.255', 1],
    ['0.0.0.0', -1],
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 1],
  ])('%s + %d overflows', (a, n) => {
    expect(addIp(parseIp(a), n)).toBeUndefined();
  });
});

describe('parseCidr / cidrContains', () => {
  it.each([
    ['192.168.1.10/24', '192.168.1.10', 24, '192.168.1.0', '192.168.1.255'],
    ['192.168.0.0/30', '192.168.0.0', 30, '192.168.0.0', '192.168.0.3'],
    ['10.0.0.1/32', '10.0.0.1', 32, '10.0.0.1', '10.0.0.1'],
    ['0.0.0.0/0', '0.0.0.0', 0, '0.0.0.0', '255.255.255.255'],
    ['2001:db8::5/64', '2001:db8::5', 64, '2001:db8::', '2001:db8::ffff:ffff:ffff:ffff'],
  ])('%s', (text, literal, prefix, first, last) => {
    const cidr = parseCidr(text);
    expect(formatIp(cidr.address)).toBe(literal);
    expect(cidr.prefix).toBe(prefix);
    expect(formatIp({ family: cidr.address.family, value: cidr.first })).toBe(first);
    expect(formatIp({ family: cidr.address.family, value: cidr.last })).toBe(last);
  });

  it.each(['192.168.0.0', '192.168.0.0/33', '192.168.0.0/', '/24', '2001:db8::/129', 'x/8', '10.0.0.0/024'])(
    'rejects %j',
    (text) => {
      expect(() => parseCidr(text)).toThrow(expect.objectContaining({ code: 'InvalidCidr' }));
    },
  );

  it.each([
    ['192.168.0.0/30', '192.168.0.3', true],
    ['192.168.0.0/30', '192.168.0.4', false],
    ['192.168.0.0/30', '::3', false],
    ['2001:db8::/64', '2001:db8::0:2', true],
    ['2001:db8::/64', '2001:db8:0:1::', false],
  ])('%s contains %s: %s', (cidr, ip, expected) => {
    expect(cidrContains(parseCidr(cidr), parseIp(ip))).toBe(expected);
  });
});

describe('prefixToNetmask', () => {
  it.each([
    [24, 4, '255.255.255.0'],
    [0, 4, '0.0.0.0'],
    [32, 4, '255.255.255.255'],
    [25, 4, '255.255.255.128'],
    [1, 4, '128.0.0.0'],
    [64, 6, 'ffff:ffff:ffff:ffff::'],
    [0, 6, '::'],
    [112, 6, 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:0'],
    [128, 6, 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
    [48, 6, 'ffff:ffff:ffff::'],
    [127, 6, 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe'],
    [96, 6, 'ffff:ffff:ffff:ffff:ffff:ffff::'],
  ] as const)('/%d IPv%d -> %s', (prefix, family, mask) => {
    expect(prefixToNetmask(prefix, family)).toBe(mask);
  });

  it.each([
    [33, 4],
    [-1, 4],
    [129, 6],
    [1.5, 6],
  ] as const)('rejects /%d for IPv%d', (prefix, family) => {
    expect(() => prefixToNetmask(prefix, family)).toThrow(expect.objectContaining({ code: 'InvalidPrefix' }));
  });
});
