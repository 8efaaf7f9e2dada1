import { describe, expect, it } from 'vitest';
import {
  canonicalOperator,
  formatPath,
  isCIDR,
  isIPAddress,
  objectRefOf,
} from '../../../shared/api/index.ts';

describe('formatPath', () => {
  it.each([
    [
      ['spec', 'hostSelector', 'matchExpressions', 0, 'operator'],
      'spec.hostSelector.matchExpressions[0].operator',
    ],
    [['status', 'indexes', '0'], 'status.indexes["0"]'],
    [['spec', 'preAllocations', 'machine-1'], 'spec.preAllocations["machine-1"]'],
    [[0, 'a'], '[0].a'],
    [[], '<root>'],
  ])('%j -> %s', (path, expected) => {
    expect(formatPath(path)).toBe(expected);
  });
});

describe('objectRefOf', () => {
  it.each([
    [{ metadata: { name: 'm', namespace: 'ns' } }, 'Metal3Machine ns/m'],
    [{ metadata: { name: 'm' } }, 'Metal3Machine m'],
    [{ metadata: { name: 7 } }, 'Metal3Machine <unnamed>'],
    [undefined, 'Metal3Machine <unnamed>'],
  ])('%j -> %s', (obj, expected) => {
    expect(objectRefOf('Metal3Machine', obj)).toBe(expected);
  });
});

describe('IP and CIDR checks', () => {
  it.each(['192.168.0.1', '0.0.0.0', '::', '0::0', '2001:0db8:85a3::8a2e:0370:1', 'fe80::1'])(
    '%s is an IP',
    (ip) => {
      expect(isIPAddress(ip)).toBe(true);
    },
  );
  it.each([
    '',
    '192.168.0.256',
    '192.168.0',
    '2001:db8:::1',
    'localhost',
    '192.168.0.1/24',
    '010.0.0.1',
    'fe80::1%eth0',
  ])('%s is not an IP', (ip) => {
    expect(isIPAddress(ip)).toBe(false);
  });
  it.each(['10.0.0.0/8', '192.168.1.10/24', '0.0.0.0/0', '2001:db8::/64', '::/128'])('%s is a CIDR', (c) => {
    expect(isCIDR(c)).toBe(true);
  });
  it.each(['10.0.0.0', '10.0.0.0/33', '2001:db8::/129', '10.0.0.0/', '10.0.0.0/x', 'a/8', '10.0.0.0/-1'])(
    '%s is not a CIDR',
    (c) => {
      expect(isCIDR(c)).toBe(false);
    },
  );
});

describe('canonicalOperator', () => {
  it.each([
    ['!', 'doesnotexist'],
    ['DoesNotExist', 'doesnotexist'],
    ['==', '='],
    ['=', '='],
    ['In', 'in'],
    ['NOTIN', 'notin'],
    ['Exists', 'exists'],
    ['!=', '!='],
    ['GT', 'gt'],
    ['lt', 'lt'],
  ])('%s -> %s', (op, expected) => {
    expect(canonicalOperator(op)).toBe(expected);
  });
  it.each(['', 'like', 'not in', 'constructor', '<'])('%j is not an operator', (op) => {
    expect(canonicalOperator(op)).toBeUndefined();
  });
});
