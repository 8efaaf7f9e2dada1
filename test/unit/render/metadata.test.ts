import { describe, expect, it } from 'vitest';
import { renderMetaData } from '../../../shared/render/index.ts';
import { bmh, inputs, renderErrorOf, template } from '../../helpers/render.ts';

const PROVIDER = { providerid: 'default/node-0/m3m-1' };

describe('renderMetaData: each entry type', () => {
  it.each([
    ['no metaData template: only providerid', {}, {}, PROVIDER],
    ['empty metaData template', { metaData: {} }, {}, PROVIDER],
    [
      'strings',
      {
        metaData: {
          strings: [
            { key: 'a', value: 'b' },
            { key: 'empty', value: '' },
          ],
        },
      },
      {},
      { a: 'b', empty: '', ...PROVIDER },
    ],
    [
      'objectNames, case-insensitive',
      {
        metaData: {
          objectNames: [
            { key: 'm', object: 'machine' },
            { key: 'm3m', object: 'Metal3Machine' },
            { key: 'host', object: 'BAREMETALHOST' },
          ],
        },
      },
      {},
      { m: 'machine-1', m3m: 'm3m-1', host: 'node-0', ...PROVIDER },
    ],
    [
      'indexes: offset + index*step with prefix and suffix (index 3)',
      {
        metaData: {
          indexes: [
            { key: 'plain' },
            { key: 'full', offset: 10, step: 2, prefix: 'node-', suffix: '.lab' },
            { key: 'step0', offset: 5, step: 0 },
          ],
        },
      },
      {},
      { plain: '3', full: 'node-16.lab', step0: '8', ...PROVIDER },
    ],
    [
      'indexes at index 0',
      { metaData: { indexes: [{ key: 'i', offset: 0, step: 1 }] } },
      { index: 0 },
      { i: '0', ...PROVIDER },
    ],
    [
      'namespaces: the Metal3Data namespace',
      { metaData: { namespaces: [{ key: 'ns' }] } },
      { namespace: 'ns-a' },
      { ns: 'ns-a', ...PROVIDER },
    ],
    [
      'ipAddresses, prefixes, gateways, dnsServers from IPv4 pool',
      {
        metaData: {
          ipAddressesFromIPPool: [{ key: 'ip', name: 'pool-1' }],
          prefixesFromIPPool: [{ key: 'prefix', name: 'pool-1' }],
          gatewaysFromIPPool: [{ key: 'gw', name: 'pool-1' }],
          dnsServersFromIPPool: [{ key: 'dns', name: 'pool-1' }],
        },
      },
      {},
      { ip: '192.168.0.13', prefix: '24', gw: '192.168.0.1', dns: '8.8.8.8,8.8.4.4', ...PROVIDER },
    ],
    [
      'IPv6 pool',
      {
        metaData: {
          ipAddressesFromIPPool: [{ key: 'ip6', name: 'pool6-1' }],
          prefixesFromIPPool: [{ key: 'prefix6', name: 'pool6-1' }],
          gatewaysFromIPPool: [{ key: 'gw6', name: 'pool6-1' }],
          dnsServersFromIPPool: [{ key: 'dns6', name: 'pool6-1' }],
        },
      },
      {},
      { ip6: '2001:db8::13', prefix6: '64', gw6: '2001:db8::1', dns6: '2001:db8::53', ...PROVIDER },
    ],
    [
      'pool without gateway or DNS servers renders ""',
      {
        metaData: {
          gatewaysFromIPPool: [{ key: 'gw', name: 'pool-nogw' }],
          dnsServersFromIPPool: [{ key: 'dns', name: 'pool-nogw' }],
        },
      },
      {},
      { gw: '', dns: '', ...PROVIDER },
    ],
    [
      'fromHostInterfaces: first NIC of that name, and the boot MAC',
      {
        metaData: {
          fromHostInterfaces: [
            { key: 'mac0', interface: 'eth0' },
            { key: 'mac1', interface: 'eth1' },
            { key: 'boot', fromBootMAC: true },
          ],
        },
      },
      {},
      { mac0: '00:00:5e:00:53:a0', mac1: '00:00:5e:00:53:a1', boot: '00:00:5e:00:53:b0', ...PROVIDER },
    ],
    [
      'fromLabels and fromAnnotations: value or ""',
      {
        metaData: {
          fromLabels: [
            { key: 'l1', object: 'machine', label: 'mylabelkey' },
            { key: 'l2', object: 'metal3machine', label: 'role' },
            { key: 'l3', object: 'baremetalhost', label: 'rack' },
            { key: 'l4', object: 'machine', label: 'absent' },
          ],
          fromAnnotations: [
            { key: 'a1', object: 'machine', annotation: 'myannotationkey' },
            { key: 'a2', object: 'baremetalhost', annotation: 'host-mac' },
            { key: 'a3', object: 'metal3machine', annotation: 'absent' },
          ],
        },
      },
      {},
      {
        l1: 'label-value',
        l2: 'worker',
        l3: 'r1',
        l4: '',
        a1: 'annotation-value',
        a2: '00-00-5E-00-53-FF',
        a3: '',
        ...PROVIDER,
      },
    ],
    [
      'later kinds win: strings over everything, providerid over strings',
      {
        metaData: {
          strings: [
            { key: 'k', value: 'from-strings' },
            { key: 'providerid', value: 'user-value' },
          ],
          indexes: [{ key: 'k' }],
          ipAddressesFromIPPool: [{ key: 'k', name: 'pool-1' }],
          fromHostInterfaces: [{ key: 'k', interface: 'eth0' }],
          namespaces: [{ key: 'k' }],
          objectNames: [{ key: 'k', object: 'machine' }],
          fromLabels: [{ key: 'k', object: 'machine', label: 'mylabelkey' }],
          fromAnnotations: [{ key: 'k', object: 'machine', annotation: 'myannotationkey' }],
        },
      },
      {},
      { k: 'from-strings', ...PROVIDER },
    ],
    [
      'order: annotations over labels over objectNames over namespaces over indexes over pools over host interfaces',
      {
        metaData: {
          fromHostInterfaces: [{ key: 'a', interface: 'eth0' }],
          ipAddressesFromIPPool: [
            { key: 'a', name: 'pool-1' },
            { key: 'b', name: 'pool-1' },
          ],
          prefixesFromIPPool: [
            { key: 'b', name: 'pool-1' },
            { key: 'c', name: 'pool-1' },
          ],
          gatewaysFromIPPool: [
            { key: 'c', name: 'pool-1' },
            { key: 'd', name: 'pool-1' },
          ],
          dnsServersFromIPPool: [
            { key: 'd', name: 'pool-1' },
            { key: 'e', name: 'pool-1' },
          ],
          indexes: [{ key: 'e' }, { key: 'f' }],
          namespaces: [{ key: 'f' }, { key: 'g' }],
          objectNames: [
            { key: 'g', object: 'machine' },
            { key: 'h', object: 'machine' },
          ],
          fromLabels: [
            { key: 'h', object: 'machine', label: 'mylabelkey' },
            { key: 'i', object: 'machine', label: 'mylabelkey' },
          ],
          fromAnnotations: [{ key: 'i', object: 'machine', annotation: 'myannotationkey' }],
        },
      },
      {},
      {
        a: '192.168.0.13',
        b: '24',
        c: '192.168.0.1',
        d: '8.8.8.8,8.8.4.4',
        e: '3',
        f: 'default',
        g: 'machine-1',
        h: 'label-value',
        i: 'annotation-value',
        ...PROVIDER,
      },
    ],
    [
      'providerid uses the Metal3Machine namespace, the host name and the Metal3Machine name',
      {},
      {
        namespace: 'other',
        metal3Machine: { metadata: { name: 'm3m-x', namespace: 'ns-m3m' } },
        bmh: { ...bmh, metadata: { name: 'host-x' } },
      },
      { providerid: 'ns-m3m/host-x/m3m-x' },
    ],
    [
      'a "__proto__" key stays a plain key',
      { metaData: { strings: [{ key: '__proto__', value: 'x' }] } },
      {},
      JSON.parse('{"__proto__":"x","providerid":"default/node-0/m3m-1"}'),
    ],
  ] as const)('%s', (_name, spec, overrides, expected) => {
    const out = renderMetaData(template(spec), inputs(overrides as never));
    expect(out).toEqual(expected);
    expect(Object.keys(out).sort()).toEqual(Object.keys(expected).sort());
    for (const value of Object.values(out)) expect(typeof value).toBe('string');
  });
});

describe('renderMetaData: bad input gives a RenderError naming the field', () => {
  it.each([
    [
      'unknown object kind in objectNames',
      {
        metaData: {
          objectNames: [
            { key: 'k', object: 'machine' },
            { key: 'k2', object: 'cluster' },
          ],
        },
      },
      {},
      'spec.metaData.objectNames[1].object',
      'unknown object type "cluster": expected machine, metal3machine or baremetalhost',
    ],
    [
      'unknown object kind in fromLabels',
      { metaData: { fromLabels: [{ key: 'k', object: 'node', label: 'x' }] } },
      {},
      'spec.metaData.fromLabels[0].object',
      'unknown object type "node": expected machine, metal3machine or baremetalhost',
    ],
    [
      'unknown object kind in fromAnnotations',
      { metaData: { fromAnnotations: [{ key: 'k', object: '', annotation: 'x' }] } },
      {},
      'spec.metaData.fromAnnotations[0].object',
      'unknown object type "": expected machine, metal3machine or baremetalhost',
    ],
    [
      'missing pool for an address',
      { metaData: { ipAddressesFromIPPool: [{ key: 'ip', name: 'nope' }] } },
      {},
      'spec.metaData.ipAddressesFromIPPool[0].name',
      'no address from pool "nope" (pool not found in the claimed addresses)',
    ],
    [
      'missing pool for a prefix',
      { metaData: { prefixesFromIPPool: [{ key: 'p', name: 'nope' }] } },
      {},
      'spec.metaData.prefixesFromIPPool[0].name',
      'no address from pool "nope" (pool not found in the claimed addresses)',
    ],
    [
      'missing pool for a gateway',
      {
        metaData: {
          gatewaysFromIPPool: [
            { key: 'g', name: 'pool-1' },
            { key: 'g2', name: 'nope' },
          ],
        },
      },
      {},
      'spec.metaData.gatewaysFromIPPool[1].name',
      'no address from pool "nope" (pool not found in the claimed addresses)',
    ],
    [
      'missing pool for DNS servers',
      { metaData: { dnsServersFromIPPool: [{ key: 'd', name: 'nope' }] } },
      {},
      'spec.metaData.dnsServersFromIPPool[0].name',
      'no address from pool "nope" (pool not found in the claimed addresses)',
    ],
    [
      'negative offset',
      { metaData: { indexes: [{ key: 'i', offset: -1, step: 1 }] } },
      {},
      'spec.metaData.indexes[0].offset',
      'offset must be an integer >= 0, got -1',
    ],
    [
      'negative step',
      { metaData: { indexes: [{ key: 'i', step: -2 }] } },
      {},
      'spec.metaData.indexes[0].step',
      'step must be an integer >= 1 (0 means 1), got -2',
    ],
    [
      'NIC not on the host',
      { metaData: { fromHostInterfaces: [{ key: 'm', interface: 'eth9' }] } },
      {},
      'spec.metaData.fromHostInterfaces[0].interface',
      'NIC "eth9" not found on BareMetalHost node-0 (NICs: eth0, eth1, eth0)',
    ],
    [
      'host not inspected (no NICs)',
      { metaData: { fromHostInterfaces: [{ key: 'm', interface: 'eth0' }] } },
      { bmh: { metadata: { name: 'bare' }, spec: {} } },
      'spec.metaData.fromHostInterfaces[0].interface',
      'the BareMetalHost bare has no NICs in status.hardware.nics (not inspected yet?)',
    ],
    [
      'fromBootMAC without bootMACAddress',
      { metaData: { fromHostInterfaces: [{ key: 'm', fromBootMAC: true }] } },
      { bmh: { metadata: { name: 'bare' }, spec: { bootMACAddress: '' } } },
      'spec.metaData.fromHostInterfaces[0].fromBootMAC',
      'the BareMetalHost bare has no spec.bootMACAddress',
    ],
  ] as const)('%s', (_name, spec, overrides, field, detail) => {
    const error = renderErrorOf(() => renderMetaData(template(spec), inputs(overrides as never)));
    expect(error).toEqual({ field, message: `${field}: ${detail}` });
  });
});
