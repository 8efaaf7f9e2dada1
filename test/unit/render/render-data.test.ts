import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseMetal3DataTemplate } from '../../../shared/api/index.ts';
import { renderData } from '../../../shared/render/index.ts';
import { inputs, template } from '../../helpers/render.ts';
import { SEED_TEMPLATE_REAL_MACS } from '../../helpers/seed001-template.ts';

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

describe('renderData', () => {
  it.each([
    [
      'no parts: metaData still carries providerid, no networkData',
      {},
      { providerid: 'default/node-0/m3m-1' },
      undefined,
    ],
    [
      'metaData only',
      { metaData: { strings: [{ key: 'a', value: '1' }] } },
      { a: '1', providerid: 'default/node-0/m3m-1' },
      undefined,
    ],
    [
      'networkData only',
      { networkData: { services: { dns: ['9.9.9.9'] } } },
      { providerid: 'default/node-0/m3m-1' },
      { links: [], networks: [], services: [{ type: 'dns', address: '9.9.9.9' }] },
    ],
  ])('%s', (_name, spec, metaData, networkData) => {
    expect(renderData(template(spec), inputs())).toEqual({ metaData, networkData });
  });

  it('is pure: renders from deeply frozen template and inputs, twice the same', () => {
    const spec = deepFreeze(parseMetal3DataTemplate(parse(SEED_TEMPLATE_REAL_MACS)).spec);
    const frozenInputs = deepFreeze(inputs({ index: 7 }));
    const first = renderData(spec, frozenInputs);
    expect(renderData(spec, frozenInputs)).toEqual(first);
    expect(first.metaData.index).toBe('7');
  });

  it('output does not share arrays with the template or the addresses', () => {
    const spec = template({
      networkData: {
        links: { bonds: [{ id: 'b', mtu: 1500, bondMode: '802.3ad', bondLinks: ['x'] }] },
        services: { dnsFromIPPool: 'pool-1' },
      },
      metaData: { dnsServersFromIPPool: [{ key: 'dns', name: 'pool-1' }] },
    });
    const i = inputs();
    const out = renderData(spec, i);
    (out.networkData!.links[0] as { bond_links: string[] }).bond_links.push('mutated');
    out.networkData!.services.push({ type: 'dns', address: 'mutated' });
    expect(spec.networkData!.links!.bonds![0]!.bondLinks).toEqual(['x']);
    expect(i.addresses['pool-1']!.dnsServers).toEqual(['8.8.8.8', '8.8.4.4']);
  });
});
