import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../shared/kube/types.ts';
import {
  type DataSource,
  resolveNetworkDataSource,
  resolveUserDataSource,
  templateOfMachineConfigTemplate,
  templateOfSecret,
} from '../../../shared/vmetal/sources.ts';
import { inputError, waitError } from './helpers.ts';

const UD = 'vcluster.com/user-data';
const UDC = 'vcluster.com/user-data-template-config';
const UDT = 'vcluster.com/user-data-template';
const UDS = 'vcluster.com/user-data-template-secret';

describe('resolveUserDataSource: the resolution order', () => {
  const all = {
    [UD]: '#cloud-config\n',
    [UDC]: 'mct1',
    [UDT]: '#cloud-config\n{{ .Values.NodeClaim.Name }}',
    [UDS]: 'tpl',
  };
  it.each([
    ['user-data beats everything', all, { kind: 'literal', property: UD, text: '#cloud-config\n' }],
    [
      'template-config next',
      { ...all, [UD]: '' },
      { kind: 'machineConfigTemplate', property: UDC, name: 'mct1', field: 'cloudInitTemplate' },
    ],
    [
      'inline template next',
      { [UDT]: '#cloud-config\n{{ .Values.NodeClaim.Name }}', [UDS]: 'tpl' },
      { kind: 'inlineTemplate', property: UDT, template: '#cloud-config\n{{ .Values.NodeClaim.Name }}' },
    ],
    [
      'template Secret in the claim namespace',
      { [UDS]: 'tpl' },
      {
        kind: 'secretTemplate',
        property: UDS,
        namespace: 'p-team',
        name: 'tpl',
        templateType: 'cloud-config',
      },
    ],
    [
      'template Secret in another namespace',
      { [UDS]: 'platform/tpl' },
      {
        kind: 'secretTemplate',
        property: UDS,
        namespace: 'platform',
        name: 'tpl',
        templateType: 'cloud-config',
      },
    ],
    ['nothing: generated', {}, { kind: 'generated' }],
    ['empty values count as unset', { [UD]: '', [UDC]: '', [UDT]: '', [UDS]: '' }, { kind: 'generated' }],
  ] as [string, Record<string, string>, DataSource][])('%s', (_n, props, expected) => {
    expect(resolveUserDataSource(props, 'p-team')).toEqual(expected);
  });

  it.each([
    [{ [UDC]: 'Not_A_Name' }, UDC],
    [{ [UDS]: 'a/b/c' }, UDS],
    [{ [UDS]: 'Bad/tpl' }, UDS],
  ])('refuses %j', (props, key) => {
    const e = inputError(() => resolveUserDataSource(props, 'p-team'));
    expect(e.field).toBe(`properties["${key}"]`);
  });
});

describe('resolveNetworkDataSource', () => {
  it.each([
    [
      { 'metal3.vcluster.com/network-data': '{}', 'vcluster.com/network-data-template-config': 'm' },
      { kind: 'literal', property: 'metal3.vcluster.com/network-data', text: '{}' },
    ],
    [
      { 'vcluster.com/network-data-template-config': 'm', 'vcluster.com/network-data-template': 'x' },
      {
        kind: 'machineConfigTemplate',
        property: 'vcluster.com/network-data-template-config',
        name: 'm',
        field: 'networkDataTemplate',
      },
    ],
    [
      { 'vcluster.com/network-data-template': 'x', 'vcluster.com/network-data-template-secret': 's' },
      { kind: 'inlineTemplate', property: 'vcluster.com/network-data-template', template: 'x' },
    ],
    [
      { 'vcluster.com/network-data-template-secret': 's' },
      {
        kind: 'secretTemplate',
        property: 'vcluster.com/network-data-template-secret',
        namespace: 'p-team',
        name: 's',
        templateType: 'network-data',
      },
    ],
    [{ 'vcluster.com/user-data': 'x' }, { kind: 'generated' }],
  ] as [Record<string, string>, DataSource][])('%j', (props, expected) => {
    expect(resolveNetworkDataSource(props, 'p-team')).toEqual(expected);
  });
});

describe('templateOfMachineConfigTemplate', () => {
  const source = {
    kind: 'machineConfigTemplate',
    property: UDC,
    name: 'mct1',
    field: 'cloudInitTemplate',
  } as const;
  it('returns the field', () => {
    expect(
      templateOfMachineConfigTemplate(source, {
        metadata: { name: 'mct1' },
        spec: { cloudInitTemplate: '#cloud-config\n' },
      }),
    ).toBe('#cloud-config\n');
  });
  it('missing: a wait naming it', () => {
    const e = waitError(() => templateOfMachineConfigTemplate(source, undefined));
    expect(e.reason).toBe('TemplateNotFound');
    expect(e.object).toEqual({ kind: 'MachineConfigTemplate', name: 'mct1' });
    expect(e.message).toBe('MachineConfigTemplate mct1 not found (vcluster.com/user-data-template-config)');
  });
  it.each([[{}], [{ cloudInitTemplate: '' }], [{ networkDataTemplate: 'x' }]])(
    'empty field %j: bad input',
    (spec) => {
      const e = inputError(() =>
        templateOfMachineConfigTemplate(source, { metadata: { name: 'mct1' }, spec }),
      );
      expect(e.field).toBe('MachineConfigTemplate mct1 spec.cloudInitTemplate');
    },
  );
});

describe('templateOfSecret', () => {
  const source = {
    kind: 'secretTemplate',
    property: UDS,
    namespace: 'p-team',
    name: 'tpl',
    templateType: 'cloud-config',
  } as const;
  const secret = (labels: Record<string, string> | undefined, body: Record<string, unknown>): KubeObject => ({
    metadata: { name: 'tpl', namespace: 'p-team', labels },
    ...body,
  });
  const LABEL = { 'vcluster.com/user-data-template-type': 'cloud-config' };
  it.each([
    [
      'data (base64)',
      secret(LABEL, { data: { template: Buffer.from('#cloud-config\nä\n').toString('base64') } }),
      '#cloud-config\nä\n',
    ],
    [
      'stringData (a manifest)',
      secret(LABEL, { stringData: { template: '#cloud-config\n' } }),
      '#cloud-config\n',
    ],
  ])('%s', (_n, s, expected) => {
    expect(templateOfSecret(source, s)).toBe(expected);
  });
  it.each([
    ['missing', undefined, 'Secret p-team/tpl not found (vcluster.com/user-data-template-secret)'],
    [
      'unlabelled',
      secret(undefined, { data: { template: 'eA==' } }),
      'Secret p-team/tpl (vcluster.com/user-data-template-secret) is not labelled vcluster.com/user-data-template-type=cloud-config',
    ],
    [
      'labelled for network data',
      secret({ 'vcluster.com/user-data-template-type': 'network-data' }, { data: { template: 'eA==' } }),
      'Secret p-team/tpl (vcluster.com/user-data-template-secret) is not labelled vcluster.com/user-data-template-type=cloud-config',
    ],
  ])('%s: a wait naming the Secret', (_n, s, message) => {
    const e = waitError(() => templateOfSecret(source, s));
    expect(e.reason).toBe('TemplateSecretNotFound');
    expect(e.object).toEqual({ kind: 'Secret', namespace: 'p-team', name: 'tpl' });
    expect(e.message).toBe(message);
  });
  it.each([[{ data: {} }], [{ data: { template: '' } }], [{ data: { other: 'eA==' } }]])(
    'no template key %j: bad input',
    (body) => {
      const e = inputError(() => templateOfSecret(source, secret(LABEL, body)));
      expect(e.field).toBe('Secret p-team/tpl data.template');
    },
  );
});
