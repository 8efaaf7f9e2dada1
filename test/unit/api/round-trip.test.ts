/**
 * Parsing never drops or adds a field: every kind's schema (and every view of the allocation and
 * release paths) gives back, for a valid object carrying unknown fields at several levels, exactly
 * that object; no default is filled in. A read-modify-write therefore writes what it read plus the
 * change (test/integration/typed/round-trip.test.ts shows it through the API server).
 */
import { describe, expect, it } from 'vitest';
import { V } from '../../../shared/allocation/views.ts';
import { R, type Resource } from '../../../shared/api/resources.ts';
import { loadSeed } from '../../helpers/seed-fixtures.ts';

const seeds: [string, Resource][] = [
  ['001-cluster.yaml', R.Cluster],
  ['001-metal3cluster.yaml', R.Metal3Cluster],
  ['001-kubeadmcontrolplane.yaml', R.KubeadmControlPlane],
  ['001-kubeadmconfig.yaml', R.KubeadmConfig],
  ['001-machine.yaml', R.Machine],
  ['001-metal3machine.yaml', R.Metal3Machine],
  ['001-machinedeployment.yaml', R.MachineDeployment],
  ['001-kubeadmconfigtemplate.yaml', R.KubeadmConfigTemplate],
  ['001-metal3machinetemplate.yaml', R.Metal3MachineTemplate],
  ['001-metal3datatemplate.yaml', R.Metal3DataTemplate],
  ['001-metal3dataclaim.yaml', R.Metal3DataClaim],
  ['001-metal3data.yaml', R.Metal3Data],
  ['001-metal3data.yaml', V.Metal3Data],
  ['001-metal3dataclaim.yaml', V.Metal3DataClaim],
  ['001-metal3datatemplate.yaml', V.Metal3DataTemplate],
];

/** The first object-valued field under `o` (depth first), to plant a field two levels down. */
function firstNestedObject(o: Record<string, any>): Record<string, any> | undefined {
  for (const v of Object.values(o)) {
    if (v && typeof v === 'object' && !Array.isArray(v)) return firstNestedObject(v) ?? v;
    if (Array.isArray(v) && v[0] && typeof v[0] === 'object') return v[0];
  }
  return undefined;
}

/** `obj` with unknown fields at the top, in metadata, spec, deep inside spec and in status. */
function withUnknownFields(obj: Record<string, any>): Record<string, any> {
  const o = structuredClone(obj);
  o.futureTopLevel = { a: [1, { b: null }] };
  o.metadata.futureMeta = 'm';
  o.spec ??= {};
  o.spec.futureSpec = { nested: [{ deep: true }] };
  const deep = firstNestedObject(o.spec);
  if (deep) deep.futureDeep = 'seven'; // a string: the first nested object may be a string map
  o.status = { ...(o.status ?? {}), futureStatus: { x: 'y' } };
  return o;
}

describe('parsing returns the object as it was read', () => {
  it.each(
    seeds.map(
      ([f, r]) =>
        [
          `${r.kind} (${f}${r === V.Metal3Data || r === V.Metal3DataClaim || r === V.Metal3DataTemplate ? ', view' : ''})`,
          f,
          r,
        ] as const,
    ),
  )('%s: unknown fields at every level survive, nothing is added', (_label, file, resource) => {
    const obj = withUnknownFields(loadSeed(file));
    const parsed = resource.schema.parse(structuredClone(obj));
    expect(parsed).toStrictEqual(obj);
  });

  it('a field the CRD defaults is not filled in by the schema', () => {
    const t = loadSeed('001-metal3datatemplate.yaml');
    delete t.spec.networkData.links.ethernets[0].mtu;
    delete t.spec.networkData.links.bonds?.[0]?.bondLinks;
    const parsed = R.Metal3DataTemplate.schema.parse(structuredClone(t));
    expect(parsed).toStrictEqual(t);
  });
});
