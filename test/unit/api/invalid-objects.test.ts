import { describe, expect, it } from 'vitest';
import {
  parseIPAddress,
  parseIPClaim,
  parseIPPool,
  parseMetal3Data,
  parseMetal3DataClaim,
  parseMetal3DataTemplate,
  parseMetal3Machine,
  parseMetal3MachineTemplate,
  R,
} from '../../../shared/api/index.ts';
import { InvalidObjectError } from '../../../shared/reconcile/errors.ts';
import { crdSchema, loadSeed } from '../../helpers/seed-fixtures.ts';
import { checkAgainstCrd } from './openapi-validate.ts';

/** A valid IPPool (ip-address-manager's shape; the seeds have none). */
function ipPool(): Record<string, any> {
  return {
    apiVersion: 'ipam.metal3.io/v1alpha1',
    kind: 'IPPool',
    metadata: { name: 'pool-1', namespace: 'metal3' },
    spec: {
      namePrefix: 'test1-prov',
      pools: [
        { start: '192.168.0.10', end: '192.168.0.30', prefix: 24, gateway: '192.168.0.1' },
        { subnet: '2001:db8::/64', dnsServers: ['2001:4860:4860::8888'] },
      ],
      prefix: 24,
      dnsServers: ['8.8.8.8'],
      preAllocations: { 'machine-1': '192.168.0.12' },
    },
  };
}

type Obj = Record<string, any>;
type Case = {
  name: string;
  base: () => Obj;
  parse: (o: unknown) => unknown;
  mutate: (o: Obj) => void;
  path: string;
  message: RegExp;
};

const m3m = () => loadSeed('001-metal3machine.yaml');
const m3dt = () => loadSeed('001-metal3datatemplate.yaml');
const expr = (o: Obj) => o.spec.hostSelector.matchExpressions[0];

const cases: Case[] = [
  {
    name: 'unknown hostSelector operator',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => (expr(o).operator = 'like'),
    path: 'spec.hostSelector.matchExpressions[0].operator',
    message: /unknown operator "like"/,
  },
  {
    name: 'gt with a non-integer value',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => Object.assign(expr(o), { operator: 'gt', values: ['4.5'] }),
    path: 'spec.hostSelector.matchExpressions[0].values[0]',
    message: /needs an integer value, got "4.5"/,
  },
  {
    name: 'lt with two values',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => Object.assign(expr(o), { operator: 'LT', values: ['1', '2'] }),
    path: 'spec.hostSelector.matchExpressions[0].values',
    message: /exactly one integer value, got 2/,
  },
  {
    name: '= with two values',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => Object.assign(expr(o), { operator: '=', values: ['a', 'b'] }),
    path: 'spec.hostSelector.matchExpressions[0].values',
    message: /exactly one value, got 2/,
  },
  {
    name: '!= without a value',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => Object.assign(expr(o), { operator: '!=', values: undefined }),
    path: 'spec.hostSelector.matchExpressions[0].values',
    message: /exactly one value, got 0/,
  },
  {
    name: 'in with no values',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => (expr(o).values = []),
    path: 'spec.hostSelector.matchExpressions[0].values',
    message: /at least one value/,
  },
  {
    name: 'exists with a value',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => Object.assign(expr(o), { operator: 'Exists', values: ['x'] }),
    path: 'spec.hostSelector.matchExpressions[0].values',
    message: /takes no values/,
  },
  {
    name: 'bad checksumType',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => (o.spec.image.checksumType = 'sha1'),
    path: 'spec.image.checksumType',
    message: /md5|sha256|sha512/,
  },
  {
    name: 'bad image format',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => (o.spec.image.format = 'iso'),
    path: 'spec.image.format',
    message: /live-iso/,
  },
  {
    name: 'image without checksum',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => delete o.spec.image.checksum,
    path: 'spec.image.checksum',
    message: /checksum is required unless format is live-iso or customDeploy/,
  },
  {
    name: 'image without url',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => delete o.spec.image.url,
    path: 'spec.image.url',
    message: /url is required unless customDeploy/,
  },
  {
    name: 'neither image nor customDeploy',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => delete o.spec.image,
    path: 'spec.image',
    message: /required unless customDeploy/,
  },
  {
    name: 'bad automatedCleaningMode',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => (o.spec.automatedCleaningMode = 'always'),
    path: 'spec.automatedCleaningMode',
    message: /metadata|disabled/,
  },
  {
    name: 'dataTemplate in another namespace',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => (o.spec.dataTemplate.namespace = 'other'),
    path: 'spec.dataTemplate.namespace',
    message: /must be empty or the object's own namespace "metal3", got "other"/,
  },
  {
    name: 'metaData secret in another namespace',
    base: m3m,
    parse: parseMetal3Machine,
    mutate: (o) => (o.spec.metaData.namespace = 'other'),
    path: 'spec.metaData.namespace',
    message: /own namespace "metal3"/,
  },
  {
    name: 'claim for a template in another namespace',
    base: () => loadSeed('001-metal3dataclaim.yaml'),
    parse: parseMetal3DataClaim,
    mutate: (o) => (o.spec.template.namespace = 'metal3'),
    path: 'spec.template.namespace',
    message: /own namespace "default", got "metal3"/,
  },
  {
    name: 'template image without checksum (nested machine spec)',
    base: () => loadSeed('001-metal3machinetemplate.yaml'),
    parse: parseMetal3MachineTemplate,
    mutate: (o) => delete o.spec.template.spec.image.checksum,
    path: 'spec.template.spec.image.checksum',
    message: /checksum is required/,
  },
  {
    name: 'negative index offset',
    base: m3dt,
    parse: parseMetal3DataTemplate,
    mutate: (o) => (o.spec.metaData.indexes[0].offset = -1),
    path: 'spec.metaData.indexes[0].offset',
    message: /offset must be >= 0/,
  },
  {
    name: 'negative index step',
    base: m3dt,
    parse: parseMetal3DataTemplate,
    mutate: (o) => (o.spec.metaData.indexes[0].step = -2),
    path: 'spec.metaData.indexes[0].step',
    message: /step must be >= 0/,
  },
  {
    name: 'bad MAC in a bond',
    base: m3dt,
    parse: parseMetal3DataTemplate,
    mutate: (o) => (o.spec.networkData.links.bonds[0].macAddress.string = 'XX:XX:XX:XX:XX:XX'),
    path: 'spec.networkData.links.bonds[0].macAddress.string',
    message: /must be a MAC address/,
  },
  {
    name: 'short MAC in a vlan',
    base: m3dt,
    parse: parseMetal3DataTemplate,
    mutate: (o) => (o.spec.networkData.links.vlans[0].macAddress.string = '00:11:22:33:44'),
    path: 'spec.networkData.links.vlans[0].macAddress.string',
    message: /must be a MAC address/,
  },
  {
    name: 'vlanID above 4094',
    base: m3dt,
    parse: parseMetal3DataTemplate,
    mutate: (o) => (o.spec.networkData.links.vlans[0].vlanID = 4095),
    path: 'spec.networkData.links.vlans[0].vlanID',
    message: /between 0 and 4094/,
  },
  {
    name: 'negative vlanID',
    base: m3dt,
    parse: parseMetal3DataTemplate,
    mutate: (o) => (o.spec.networkData.links.vlans[0].vlanID = -1),
    path: 'spec.networkData.links.vlans[0].vlanID',
    message: /between 0 and 4094/,
  },
  {
    name: 'unknown bond mode',
    base: m3dt,
    parse: parseMetal3DataTemplate,
    mutate: (o) => (o.spec.networkData.links.bonds[0].bondMode = 'lacp'),
    path: 'spec.networkData.links.bonds[0].bondMode',
    message: /802\.3ad/,
  },
  {
    name: 'unknown ethernet type',
    base: m3dt,
    parse: parseMetal3DataTemplate,
    mutate: (o) => (o.spec.networkData.links.ethernets[1].type = 'wifi'),
    path: 'spec.networkData.links.ethernets[1].type',
    message: /phy/,
  },
  {
    name: 'unknown object kind in objectNames',
    base: m3dt,
    parse: parseMetal3DataTemplate,
    mutate: (o) => (o.spec.metaData.objectNames[0].object = 'node'),
    path: 'spec.metaData.objectNames[0].object',
    message: /metal3machine/,
  },
  {
    name: 'static network without a pool',
    base: m3dt,
    parse: parseMetal3DataTemplate,
    mutate: (o) => delete o.spec.networkData.networks.ipv4[0].ipAddressFromIPPool,
    path: 'spec.networkData.networks.ipv4[0].ipAddressFromIPPool',
    message: /needs its address pool/,
  },
  {
    name: 'bad route gateway',
    base: m3dt,
    parse: parseMetal3DataTemplate,
    mutate: (o) => (o.spec.networkData.networks.ipv6[0].routes[0].gateway.string = '2001:db8::zz'),
    path: 'spec.networkData.networks.ipv6[0].routes[0].gateway.string',
    message: /IPv4 or IPv6 address/,
  },
  {
    name: 'bad DNS server',
    base: m3dt,
    parse: parseMetal3DataTemplate,
    mutate: (o) => (o.spec.networkData.services.dns[1] = 'dns.example.com'),
    path: 'spec.networkData.services.dns[1]',
    message: /IPv4 or IPv6 address/,
  },
  {
    name: 'fromHostInterfaces entry with neither interface nor fromBootMAC',
    base: m3dt,
    parse: parseMetal3DataTemplate,
    mutate: (o) => delete o.spec.metaData.fromHostInterfaces[0].interface,
    path: 'spec.metaData.fromHostInterfaces[0].interface',
    message: /fromBootMAC/,
  },
  {
    name: 'negative Metal3Data index',
    base: () => loadSeed('001-metal3data.yaml'),
    parse: parseMetal3Data,
    mutate: (o) => (o.spec.index = -1),
    path: 'spec.index',
    message: /index must be >= 0/,
  },
  {
    name: 'IPPool range start not an IP',
    base: ipPool,
    parse: parseIPPool,
    mutate: (o) => (o.spec.pools[0].start = '192.168.0.300'),
    path: 'spec.pools[0].start',
    message: /IPv4 or IPv6 address/,
  },
  {
    name: 'IPPool gateway not an IP',
    base: ipPool,
    parse: parseIPPool,
    mutate: (o) => (o.spec.pools[0].gateway = 'gw'),
    path: 'spec.pools[0].gateway',
    message: /IPv4 or IPv6 address/,
  },
  {
    name: 'IPPool subnet prefix too long',
    base: ipPool,
    parse: parseIPPool,
    mutate: (o) => (o.spec.pools[0] = { subnet: '10.0.0.0/33' }),
    path: 'spec.pools[0].subnet',
    message: /must be a CIDR/,
  },
  {
    name: 'IPPool subnet without prefix',
    base: ipPool,
    parse: parseIPPool,
    mutate: (o) => (o.spec.pools[1].subnet = '2001:db8::'),
    path: 'spec.pools[1].subnet',
    message: /must be a CIDR/,
  },
  {
    name: 'IPPool DNS server not an IP',
    base: ipPool,
    parse: parseIPPool,
    mutate: (o) => (o.spec.dnsServers = ['8.8.8.8', '8.8.8']),
    path: 'spec.dnsServers[1]',
    message: /IPv4 or IPv6 address/,
  },
  {
    name: 'IPPool preAllocation not an IP',
    base: ipPool,
    parse: parseIPPool,
    mutate: (o) => (o.spec.preAllocations['machine-1'] = 'twelve'),
    path: 'spec.preAllocations["machine-1"]',
    message: /IPv4 or IPv6 address/,
  },
  {
    name: 'IPPool range end before start',
    base: ipPool,
    parse: parseIPPool,
    mutate: (o) => (o.spec.pools[0].end = '192.168.0.9'),
    path: 'spec.pools[0].end',
    message: /end 192\.168\.0\.9 must be >= start 192\.168\.0\.10/,
  },
  {
    name: 'IPPool range mixing families',
    base: ipPool,
    parse: parseIPPool,
    mutate: (o) => (o.spec.pools[0].end = '2001:db8::1'),
    path: 'spec.pools[0].end',
    message: /same IP family/,
  },
  {
    name: 'IPPool address pre-allocated twice',
    base: ipPool,
    parse: parseIPPool,
    mutate: (o) => (o.spec.preAllocations['machine-2'] = '192.168.0.12'),
    path: 'spec.preAllocations["machine-2"]',
    message: /already pre-allocated to machine-1/,
  },
  {
    name: 'IPPool without namePrefix',
    base: ipPool,
    parse: parseIPPool,
    mutate: (o) => (o.spec.namePrefix = ''),
    path: 'spec.namePrefix',
    message: /namePrefix must not be empty/,
  },
  {
    name: 'IPClaim without pool name',
    base: () => ({
      kind: 'IPClaim',
      metadata: { name: 'c', namespace: 'metal3' },
      spec: { pool: { name: 'p' } },
    }),
    parse: parseIPClaim,
    mutate: (o) => (o.spec.pool.name = ''),
    path: 'spec.pool.name',
    message: /name must not be empty/,
  },
  {
    name: 'IPAddress prefix above 128',
    base: () => ({
      kind: 'IPAddress',
      metadata: { name: 'test1-prov-192-168-0-13', namespace: 'metal3' },
      spec: { address: '192.168.0.13', prefix: 24, pool: { name: 'pool-1' }, claim: { name: 'c' } },
    }),
    parse: parseIPAddress,
    mutate: (o) => (o.spec.prefix = 129),
    path: 'spec.prefix',
    message: /128/,
  },
];

describe('invalid objects are rejected naming the object and the field', () => {
  it.each(cases)('$name', ({ base, parse, mutate, path, message }) => {
    const valid = base();
    expect(() => parse(valid)).not.toThrow();
    const obj = base();
    mutate(obj);
    let error: unknown;
    try {
      parse(obj);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidObjectError);
    const invalid = error as InvalidObjectError;
    expect(invalid.objectRef).toBe(`${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name}`);
    const issue = invalid.issues.find((i) => i.path === path);
    expect(issue, `issues: ${JSON.stringify(invalid.issues)}`).toBeDefined();
    expect(issue!.message).toMatch(message);
    expect(invalid.message).toContain(`${path}: `);
    expect(invalid.reason).toBe('InvalidConfiguration');
  });

  it('reports every bad field at once and names the object in the message', () => {
    const obj = m3m();
    expr(obj).operator = 'like';
    obj.spec.image.checksumType = 'crc';
    expect(() => parseMetal3Machine(obj)).toThrow(/^Metal3Machine metal3\/controlplane-0 is invalid: /);
    expect(() => parseMetal3Machine(obj)).toThrow(
      /spec\.hostSelector\.matchExpressions\[0\]\.operator: unknown operator/,
    );
    expect(() => parseMetal3Machine(obj)).toThrow(/spec\.image\.checksumType: /);
  });

  it('names an object without metadata', () => {
    expect(() => parseMetal3Machine({ spec: {} })).toThrow(/^Metal3Machine <unnamed> is invalid: metadata: /);
    expect(() => parseIPPool(null)).toThrow(/^IPPool <unnamed> is invalid: <root>: /);
  });
});

describe('accepted spellings and exceptions', () => {
  it.each(['In', 'IN', 'in'])('operator %s is accepted', (op) => {
    const obj = m3m();
    expr(obj).operator = op;
    expect(parseMetal3Machine(obj).spec.hostSelector?.matchExpressions?.[0]?.operator).toBe(op);
  });

  it.each([
    ['DoesNotExist', []],
    ['!', undefined],
    ['exists', undefined],
    ['==', ['x']],
    ['notin', ['a', 'b']],
    ['Gt', ['-3']],
  ])('operator %s with values %j is accepted', (op, values) => {
    const obj = m3m();
    Object.assign(expr(obj), { operator: op, values });
    expect(() => parseMetal3Machine(obj)).not.toThrow();
  });

  it('accepts a live-iso image without checksum and customDeploy without image', () => {
    const live = m3m();
    live.spec.image = { url: 'http://x/live.iso', format: 'live-iso' };
    expect(() => parseMetal3Machine(live)).not.toThrow();
    const custom = m3m();
    delete custom.spec.image;
    custom.spec.customDeploy = { method: 'install_coreos' };
    expect(() => parseMetal3Machine(custom)).not.toThrow();
  });

  it('accepts route prefix as well as netmask, and a MAC written with dashes', () => {
    const obj = m3dt();
    const route = obj.spec.networkData.networks.ipv4[0].routes[0];
    delete route.netmask;
    route.prefix = 24;
    obj.spec.networkData.links.bonds[0].macAddress.string = '00-1A-2b-3C-4d-5E';
    expect(parseMetal3DataTemplate(obj).spec.networkData?.networks?.ipv4?.[0]?.routes?.[0]?.prefix).toBe(24);
  });
});

describe('the CRDs reject the enum and pattern violations too', () => {
  const m3mCrd = crdSchema(R.Metal3Machine.plural, R.Metal3Machine.group);
  const m3dtCrd = crdSchema(R.Metal3DataTemplate.plural, R.Metal3DataTemplate.group);
  const crdCases: [string, Obj, () => Obj, (o: Obj) => void, string][] = [
    [
      'operator',
      m3mCrd,
      m3m,
      (o: Obj) => {
        expr(o).operator = 'like';
      },
      '.spec.hostSelector.matchExpressions[0].operator',
    ],
    [
      'checksumType',
      m3mCrd,
      m3m,
      (o: Obj) => {
        o.spec.image.checksumType = 'sha1';
      },
      '.spec.image.checksumType',
    ],
    [
      'format',
      m3mCrd,
      m3m,
      (o: Obj) => {
        o.spec.image.format = 'iso';
      },
      '.spec.image.format',
    ],
    [
      'cleaning mode',
      m3mCrd,
      m3m,
      (o: Obj) => {
        o.spec.automatedCleaningMode = 'x';
      },
      '.spec.automatedCleaningMode',
    ],
    [
      'bond mode',
      m3dtCrd,
      m3dt,
      (o: Obj) => {
        o.spec.networkData.links.bonds[0].bondMode = 'lacp';
      },
      '.spec.networkData.links.bonds[0].bondMode',
    ],
    [
      'ethernet type',
      m3dtCrd,
      m3dt,
      (o: Obj) => {
        o.spec.networkData.links.ethernets[0].type = 'wifi';
      },
      '.spec.networkData.links.ethernets[0].type',
    ],
    [
      'MAC',
      m3dtCrd,
      m3dt,
      (o: Obj) => {
        o.spec.networkData.links.vlans[0].macAddress.string = 'YY:YY:YY:YY:YY:YY';
      },
      '.spec.networkData.links.vlans[0].macAddress.string',
    ],
    [
      'vlanID',
      m3dtCrd,
      m3dt,
      (o: Obj) => {
        o.spec.networkData.links.vlans[0].vlanID = 5000;
      },
      '.spec.networkData.links.vlans[0].vlanID',
    ],
    [
      'index offset',
      m3dtCrd,
      m3dt,
      (o: Obj) => {
        o.spec.metaData.indexes[0].offset = -1;
      },
      '.spec.metaData.indexes[0].offset',
    ],
  ];
  it.each(crdCases)('%s', (_name, crd, base, mutate, path) => {
    const obj = base();
    mutate(obj);
    const verdict = checkAgainstCrd(crd, obj);
    expect(
      verdict.violations.some((v) => v.startsWith(`${path}: `)),
      verdict.violations.join('; '),
    ).toBe(true);
  });
});
