/** Where a claim's data source is named in messages, and templates parsed (not run) before the claim. */
import { describe, expect, it } from 'vitest';
import { VMetalInputError } from '../../../shared/vmetal/errors.ts';
import type { DataSource } from '../../../shared/vmetal/sources.ts';
import { checkClaimTemplates, renderSourceText, sourceField } from '../../../shared/vmetal/templates.ts';
import { templateValues } from '../../../shared/vmetal/values.ts';

const GENERATED: DataSource = { kind: 'generated' };

describe('sourceField', () => {
  it.each<[DataSource, string]>([
    [
      { kind: 'literal', property: 'vcluster.com/user-data', text: 'x' },
      'properties["vcluster.com/user-data"]',
    ],
    [
      { kind: 'inlineTemplate', property: 'vcluster.com/user-data-template', template: 'x' },
      'properties["vcluster.com/user-data-template"]',
    ],
    [
      { kind: 'machineConfigTemplate', property: 'p', name: 'mct', field: 'cloudInitTemplate' },
      'MachineConfigTemplate mct spec.cloudInitTemplate',
    ],
    [
      { kind: 'secretTemplate', property: 'p', namespace: 'ns', name: 's', templateType: 'cloud-config' },
      'Secret ns/s data.template',
    ],
    [GENERATED, 'generated user data'],
  ])('%j → %s', (source, field) => {
    expect(sourceField(source, 'user data')).toBe(field);
  });
});

describe('checkClaimTemplates', () => {
  const inline = (template: string) => ({
    source: { kind: 'inlineTemplate' as const, property: 'vcluster.com/network-data-template', template },
    template,
  });

  it('passes templates that parse, whatever they would do when run', async () => {
    await expect(
      checkClaimTemplates({ userData: { source: GENERATED }, networkData: inline('{{ .Values.Nope }}') }),
    ).resolves.toBeUndefined();
  });

  it('refuses one that does not parse, naming where it is and quoting Go', async () => {
    const err = await checkClaimTemplates({
      userData: { source: GENERATED },
      networkData: inline('{{ if }}'),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VMetalInputError);
    expect((err as VMetalInputError).field).toBe('properties["vcluster.com/network-data-template"]');
    expect((err as VMetalInputError).detail).toMatch(/^template: network-data:1: /);
  });
});

describe('renderSourceText', () => {
  const values = templateValues({
    claim: { metadata: { name: 'c', namespace: 'p-team' }, spec: {} },
    properties: {},
    sshKeys: [],
  });

  it('renders a template, keeps a literal, leaves the generated default to the caller', async () => {
    const tpl = '{{ .Values.NodeClaim.Name }}/{{ .Values.Project.Name }}';
    expect(
      await renderSourceText(
        { source: { kind: 'inlineTemplate', property: 'p', template: tpl }, template: tpl },
        'user data',
        values,
      ),
    ).toBe('c/team');
    expect(
      await renderSourceText(
        { source: { kind: 'literal', property: 'p', text: '{{ x }}' } },
        'user data',
        values,
      ),
    ).toBe('{{ x }}');
    expect(await renderSourceText({ source: GENERATED }, 'user data', values)).toBeUndefined();
  });

  it('reports an execution error as bad input naming the source', async () => {
    const tpl = '{{ .Values.Nope }}';
    const err = await renderSourceText(
      {
        source: { kind: 'inlineTemplate', property: 'vcluster.com/user-data-template', template: tpl },
        template: tpl,
      },
      'user data',
      values,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VMetalInputError);
    expect((err as VMetalInputError).message).toContain('properties["vcluster.com/user-data-template"]');
    expect((err as VMetalInputError).message).toContain('Nope');
  });
});
