import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderCrdFiles, renderPatchFiles } from '../../scripts/gen-crds.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const generated = renderCrdFiles();

type Node = Record<string, any>;

/** Kubernetes' structural-schema rules (apiextensions), checked independently of the generator. */
function structuralViolations(node: Node, path: string, out: string[] = []): string[] {
  for (const bad of ['$ref', 'anyOf', 'oneOf', 'allOf', 'not', '$defs', 'const', 'propertyNames'])
    if (bad in node) out.push(`${path}: has ${bad}`);
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  if (!node.type && !preserve && !intOrString) out.push(`${path}: no type`);
  if (node.properties && node.additionalProperties) out.push(`${path}: properties and additionalProperties`);
  if (
    node.type === 'object' &&
    !node.properties &&
    !node.additionalProperties &&
    !preserve &&
    path !== '.metadata'
  )
    out.push(`${path}: object without properties would prune everything`);
  for (const [k, v] of Object.entries(node.properties ?? {}))
    structuralViolations(v as Node, `${path}.${k}`, out);
  if (node.items) structuralViolations(node.items, `${path}[]`, out);
  if (typeof node.additionalProperties === 'object')
    structuralViolations(node.additionalProperties, `${path}.*`, out);
  return out;
}

const crds = [...generated].map(([path, text]) => ({ path, crd: parse(text) as Node }));
const byKind = (kind: string) => crds.find((c) => c.crd.spec.names.kind === kind)!.crd;
const schemaOf = (kind: string) => byKind(kind).spec.versions[0].schema.openAPIV3Schema as Node;

describe('generated CRDs', () => {
  it('match the committed files (run npm run gen:crds when this fails)', () => {
    for (const [path, text] of generated) {
      expect(readFileSync(join(ROOT, path), 'utf8'), path).toBe(text);
    }
  });

  it('the IPAM selectable-fields patches match the committed files and are the only ones', () => {
    const patches = renderPatchFiles();
    expect([...patches.keys()].sort()).toEqual(
      readdirSync(join(ROOT, 'infra/ipam'))
        .filter((f) => f.endsWith('.json'))
        .map((f) => `infra/ipam/${f}`)
        .sort(),
    );
    for (const [path, text] of patches) expect(readFileSync(join(ROOT, path), 'utf8'), path).toBe(text);
  });

  it('are the only files in infra/crds and infra/local/crds', () => {
    const onDisk = [
      ...readdirSync(join(ROOT, 'infra/crds')).map((f) => `infra/crds/${f}`),
      ...readdirSync(join(ROOT, 'infra/local/crds')).map((f) => `infra/local/crds/${f}`),
    ].filter((f) => f.endsWith('.yaml'));
    expect(onDisk.sort()).toEqual([...generated.keys()].sort());
  });

  it('cover our kinds in infra/crds and the others in infra/local/crds', () => {
    const kindsIn = (dir: string) =>
      crds
        .filter((c) => c.path.startsWith(`${dir}/`))
        .map((c) => c.crd.spec.names.kind as string)
        .sort();
    expect(kindsIn('infra/crds')).toEqual([
      'MachineConfigTemplate',
      'Metal3Cluster',
      'Metal3Data',
      'Metal3DataClaim',
      'Metal3DataTemplate',
      'Metal3Machine',
      'Metal3MachineTemplate',
      'NodeClaim',
      'NodeEnvironment',
      'NodeProvider',
      'NodeType',
      'OSImage',
      'SSHKey',
    ]);
    expect(kindsIn('infra/local/crds')).toEqual([
      'BareMetalHost',
      'Cluster',
      'IPAddress',
      'IPClaim',
      'IPPool',
      'KubeadmConfig',
      'KubeadmConfigTemplate',
      'KubeadmControlPlane',
      'Machine',
      'MachineDeployment',
      'MachineSet',
    ]);
  });

  // vMetal (ADR 018): providers, types and the catalogue are cluster-scoped; the catalogue has no status.
  const CLUSTER_SCOPED = ['NodeProvider', 'NodeType', 'OSImage', 'SSHKey', 'MachineConfigTemplate'];
  const NO_STATUS = ['OSImage', 'SSHKey', 'MachineConfigTemplate'];

  it.each(crds)(
    '$path is a structural apiextensions.k8s.io/v1 CRD with a status subresource',
    ({ path, crd }) => {
      const kind = crd.spec.names.kind as string;
      expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
      expect(crd.kind).toBe('CustomResourceDefinition');
      expect(path.endsWith(`/${crd.metadata.name}.yaml`)).toBe(true);
      expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.${crd.spec.group}`);
      expect(crd.spec.scope).toBe(CLUSTER_SCOPED.includes(kind) ? 'Cluster' : 'Namespaced');
      expect(crd.spec.versions).toHaveLength(1);
      const [v] = crd.spec.versions;
      expect(v.served && v.storage).toBe(true);
      expect(v.subresources?.status).toEqual(NO_STATUS.includes(kind) ? undefined : {});
      expect(structuralViolations(v.schema.openAPIV3Schema, '')).toEqual([]);
    },
  );

  it('MachineSet and MachineDeployment declare the scale subresource as Cluster API does (the others none)', () => {
    // cluster-api api/v1beta1 machineset_types.go, machinedeployment_types.go:
    // +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
    const scaled = crds.filter(({ crd }) => crd.spec.versions[0].subresources?.scale);
    expect(scaled.map(({ crd }) => crd.spec.names.kind).sort()).toEqual(['MachineDeployment', 'MachineSet']);
    for (const { crd } of scaled) {
      const v = crd.spec.versions[0];
      expect(v.subresources.scale).toEqual({
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.status.selector',
      });
      expect(v.schema.openAPIV3Schema.properties.status.properties.selector).toEqual({ type: 'string' });
    }
  });

  it('carry the Cluster API contract label and category on our Cluster API kinds only', () => {
    for (const { path, crd } of crds) {
      const capi = path.startsWith('infra/crds/') && crd.spec.group === 'infrastructure.cluster.x-k8s.io';
      expect(crd.metadata.labels?.['cluster.x-k8s.io/v1beta1'], path).toBe(capi ? 'v1beta1' : undefined);
      if (capi) expect(crd.spec.names.categories).toEqual(['cluster-api']);
      if (crd.spec.group === 'vmetal.metal3fn.io') expect(crd.spec.names.categories).toEqual(['vmetal']);
    }
  });

  it.each([
    ['Metal3Machine', 'm3m'],
    ['Metal3MachineTemplate', 'm3mt'],
    ['Metal3Cluster', 'm3c'],
    ['Metal3DataTemplate', 'm3dt'],
    ['Metal3Data', 'm3d'],
    ['Metal3DataClaim', 'm3dc'],
    ['BareMetalHost', 'bmh'],
    ['IPPool', 'ipp'],
    ['IPClaim', 'ipc'],
    ['IPAddress', 'ipa'],
  ])('%s has short name %s', (kind, short) => {
    expect(byKind(kind).spec.names.shortNames).toContain(short);
  });

  it.each([
    ['Metal3Machine', ['Age', 'ProviderID', 'Ready', 'Cluster', 'Phase']],
    ['BareMetalHost', ['State', 'Consumer', 'Online', 'Error']],
    ['Metal3Data', ['Index', 'Ready', 'Error']],
    ['IPAddress', ['Address', 'Pool', 'Claim']],
    ['NodeClaim', ['Phase', 'Type', 'Host', 'IP', 'Age']],
  ])('%s prints columns %j', (kind, names) => {
    const columns = byKind(kind).spec.versions[0].additionalPrinterColumns.map((c: Node) => c.name);
    expect(columns).toEqual(expect.arrayContaining(names));
  });

  it('makes the Metal3DataTemplate spec immutable', () => {
    expect(schemaOf('Metal3DataTemplate').properties.spec['x-kubernetes-validations']).toEqual([
      { rule: 'self == oldSelf', message: 'spec is immutable' },
    ]);
  });

  it('validates enums in the CRD schema', () => {
    const m3m = schemaOf('Metal3Machine').properties.spec.properties;
    expect(m3m.automatedCleaningMode.enum).toEqual(['metadata', 'disabled']);
    expect(m3m.image.properties.checksumType.enum).toEqual(['md5', 'sha256', 'sha512']);
    expect(m3m.image.properties.format.enum).toEqual(['raw', 'qcow2', 'vdi', 'vmdk', 'live-iso']);
    const operator = m3m.hostSelector.properties.matchExpressions.items.properties.operator;
    const re = new RegExp(operator.pattern);
    for (const ok of [
      '!',
      '=',
      '==',
      'in',
      'In',
      'IN',
      '!=',
      'notin',
      'NotIn',
      'exists',
      'Exists',
      'gt',
      'lt',
      'DoesNotExist',
    ])
      expect(re.test(ok), ok).toBe(true);
    for (const bad of ['', 'inn', 'greater', '<', '!==', 'not in']) expect(re.test(bad), bad).toBe(false);
    const links =
      schemaOf('Metal3DataTemplate').properties.spec.properties.networkData.properties.links.properties;
    expect(links.bonds.items.properties.bondMode.enum).toContain('802.3ad');
    expect(links.ethernets.items.properties.type.enum).toEqual([
      'bridge',
      'dvs',
      'hw_veb',
      'hyperv',
      'ovs',
      'tap',
      'vhostuser',
      'vif',
      'phy',
    ]);
    expect(links.ethernets.items.properties.mtu.default).toBe(1500);
    expect(links.vlans.items.properties.vlanID).toMatchObject({ type: 'integer', minimum: 0, maximum: 4094 });
  });

  it('keeps unknown fields where others own the kind, and opaque bond parameters', () => {
    const bmh = schemaOf('BareMetalHost').properties;
    expect(bmh.spec['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(bmh.status['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(schemaOf('KubeadmConfig').properties.spec['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(schemaOf('Metal3Machine').properties.spec['x-kubernetes-preserve-unknown-fields']).toBeUndefined();
    const bond =
      schemaOf('Metal3DataTemplate').properties.spec.properties.networkData.properties.links.properties.bonds;
    expect(bond.items.properties.parameters).toEqual({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
    const md =
      schemaOf('MachineDeployment').properties.spec.properties.strategy.properties.rollingUpdate.properties;
    expect(md.maxSurge).toEqual({ 'x-kubernetes-int-or-string': true });
  });
});
