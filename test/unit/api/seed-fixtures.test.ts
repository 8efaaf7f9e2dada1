import { describe, expect, it } from 'vitest';
import {
  HostSelectorSchema,
  parseCluster,
  parseKubeadmConfig,
  parseKubeadmConfigTemplate,
  parseKubeadmControlPlane,
  parseMachine,
  parseMachineDeployment,
  parseMetal3Cluster,
  parseMetal3Data,
  parseMetal3DataClaim,
  parseMetal3DataTemplate,
  parseMetal3Machine,
  parseMetal3MachineTemplate,
  R,
  type ResourceType,
} from '../../../shared/api/index.ts';
import { crdSchema, loadSeed, readSeedText, seedFiles } from '../../helpers/seed-fixtures.ts';
import { checkAgainstCrd, checkFragment } from './openapi-validate.ts';

const wholeObjects: [string, ResourceType, (o: unknown) => unknown][] = [
  ['001-cluster.yaml', R.Cluster, parseCluster],
  ['001-metal3cluster.yaml', R.Metal3Cluster, parseMetal3Cluster],
  ['001-kubeadmcontrolplane.yaml', R.KubeadmControlPlane, parseKubeadmControlPlane],
  ['001-kubeadmconfig.yaml', R.KubeadmConfig, parseKubeadmConfig],
  ['000-kubeadmconfig.yaml', R.KubeadmConfig, parseKubeadmConfig],
  ['001-machine.yaml', R.Machine, parseMachine],
  ['001-metal3machine.yaml', R.Metal3Machine, parseMetal3Machine],
  ['001-machinedeployment.yaml', R.MachineDeployment, parseMachineDeployment],
  ['001-kubeadmconfigtemplate.yaml', R.KubeadmConfigTemplate, parseKubeadmConfigTemplate],
  ['001-metal3machinetemplate.yaml', R.Metal3MachineTemplate, parseMetal3MachineTemplate],
  ['001-metal3datatemplate.yaml', R.Metal3DataTemplate, parseMetal3DataTemplate],
  ['001-metal3dataclaim.yaml', R.Metal3DataClaim, parseMetal3DataClaim],
  ['001-metal3data.yaml', R.Metal3Data, parseMetal3Data],
];

/** Fragments: where the selector sits in the file, checked as a Metal3Machine spec.hostSelector. */
const selectorFragments: [string, string[]][] = [
  ['001-hostselector-example-1.yaml', ['spec', 'hostSelector']],
  ['001-hostselector-example-2.yaml', ['spec', 'hostSelector']],
  ['001-hostselector-example-3.yaml', ['spec', 'hostSelector']],
  ['001-hostselector-example-4.yaml', ['spec', 'hostSelector']],
  ['003-nodetype-selector.yaml', ['bareMetalHosts', 'selector']],
];

const m3mCrd = crdSchema(R.Metal3Machine.plural, R.Metal3Machine.group);

describe('seed fixtures', () => {
  it('are all covered by a check below', () => {
    const covered = [
      ...wholeObjects.map(([f]) => f),
      ...selectorFragments.map(([f]) => f),
      '004-clusterrole-example.yaml',
    ].sort();
    expect(seedFiles()).toEqual(covered);
  });

  it.each(seedFiles())('%s names its seed in a header comment', (file) => {
    expect(readSeedText(file)).toMatch(/^# Seed 00\d /);
  });

  it.each(wholeObjects)(
    '%s is a %s that validates and the CRD accepts unchanged',
    (file, resource, parse) => {
      const obj = loadSeed(file);
      expect(obj.apiVersion).toBe(`${resource.group}/${resource.version}`);
      expect(obj.kind).toBe(resource.kind);
      expect(() => parse(obj)).not.toThrow();
      expect(checkAgainstCrd(crdSchema(resource.plural, resource.group), obj)).toEqual({
        violations: [],
        pruned: [],
      });
    },
  );

  it.each(selectorFragments)('%s holds a valid hostSelector the Metal3Machine CRD accepts', (file, path) => {
    const selector = path.reduce<any>((node, key) => node[key], loadSeed(file));
    expect(HostSelectorSchema.safeParse(selector).success).toBe(true);
    expect(checkFragment(m3mCrd, ['spec', 'hostSelector'], selector)).toEqual({ violations: [], pruned: [] });
  });

  it('004-clusterrole-example.yaml is the aggregated ClusterRole of the contract', () => {
    const role = loadSeed('004-clusterrole-example.yaml');
    expect(role.kind).toBe('ClusterRole');
    expect(role.metadata.labels).toEqual({ 'cluster.x-k8s.io/aggregate-to-manager': 'true' });
    expect(role.rules[0].resources).toEqual(['foomachines']);
  });

  it('keeps what the seeds write that the reference dropped (templateReference, error, map-shaped indexes)', () => {
    const data = parseMetal3Data(loadSeed('001-metal3data.yaml'));
    expect(data.spec.templateReference).toBe('old-template');
    expect(data.status).toEqual({ ready: true, error: false, errorMessage: '' });
    const template = parseMetal3DataTemplate(loadSeed('001-metal3datatemplate.yaml'));
    expect(template.status?.indexes).toEqual({ '0': 'machine-1' });
    expect(template.status?.dataNames).toEqual({ 'machine-1': 'nodepool-1-0' });
    expect(template.spec.networkData?.networks?.ipv4?.[0]?.routes?.[0]).toMatchObject({
      network: '0.0.0.0',
      netmask: 0,
    });
  });

  it('keeps unknown fields of kinds others own through a parse', () => {
    const kcp = parseKubeadmControlPlane(loadSeed('001-kubeadmcontrolplane.yaml'));
    expect(kcp.spec?.rolloutStrategy).toEqual({ rollingUpdate: { maxSurge: 1 }, type: 'RollingUpdate' });
    expect((kcp.spec!.kubeadmConfigSpec as any).joinConfiguration.controlPlane).toEqual({});
    const config = parseKubeadmConfig(loadSeed('001-kubeadmconfig.yaml'));
    expect((config.spec as any).files[0].path).toBe('/etc/keepalived/keepalived.conf');
  });

  it('declares defaults for the CRD and never adds them when parsing (objects round-trip as read)', () => {
    const obj = loadSeed('001-metal3datatemplate.yaml');
    delete obj.spec.networkData.links.ethernets[0].mtu;
    obj.spec.metaData.indexes = [{ key: 'index' }];
    const parsed = parseMetal3DataTemplate(obj);
    expect(parsed).toEqual(obj);
    expect(parsed.spec.networkData?.links?.ethernets?.[0]).not.toHaveProperty('mtu');
    expect(parsed.spec.metaData?.indexes?.[0]).toEqual({ key: 'index' });
    const mt = loadSeed('001-metal3machinetemplate.yaml');
    delete mt.spec.nodeReuse;
    expect(parseMetal3MachineTemplate(mt).spec).not.toHaveProperty('nodeReuse');
    // The API server fills them in from the CRD.
    const crd = JSON.stringify(crdSchema(R.Metal3DataTemplate.plural, R.Metal3DataTemplate.group));
    expect(crd).toContain('"mtu":{"default":1500');
    expect(crd).toContain('"offset":{"default":0');
    const mtCrd = JSON.stringify(crdSchema(R.Metal3MachineTemplate.plural, R.Metal3MachineTemplate.group));
    expect(mtCrd).toContain('"nodeReuse":{"default":false');
  });
});

describe('the CRD check itself', () => {
  it('reports pruned unknown fields and type violations', () => {
    const data = loadSeed('001-metal3data.yaml');
    data.spec.surprise = 1;
    data.status.error = 'no';
    const verdict = checkAgainstCrd(crdSchema(R.Metal3Data.plural, R.Metal3Data.group), data);
    expect(verdict.pruned).toEqual(['.spec.surprise']);
    expect(verdict.violations).toEqual(['.status.error: expected boolean, got string']);
  });
});
