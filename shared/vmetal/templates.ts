/**
 * A claim's user-data and network-data sources turned into text (issue 19, Behaviours 4, 5, 9):
 * templates parsed before any host is taken (`checkClaimTemplates`) and rendered once there is one
 * (`renderSourceText`). The Go engine is imported on the first use, never at a process start
 * (shared/gotemplate/index.ts). A template that does not parse or execute is bad input naming
 * where the template is.
 */

import { propertyField, VMetalInputError } from './errors.ts';
import type { ClaimInputs, ResolvedSource } from './inputs.ts';
import { TEMPLATE_SECRET_KEY } from './names.ts';
import type { DataSource } from './sources.ts';
import type { TemplateValues } from './values.ts';

/** Where a source's text is, for messages: the property, or the object field that holds the template. */
export function sourceField(source: DataSource, what: 'user data' | 'network data'): string {
  switch (source.kind) {
    case 'literal':
    case 'inlineTemplate':
      return propertyField(source.property);
    case 'machineConfigTemplate':
      return `MachineConfigTemplate ${source.name} spec.${source.field}`;
    case 'secretTemplate':
      return `Secret ${source.namespace}/${source.name} data.${TEMPLATE_SECRET_KEY}`;
    default:
      return `generated ${what}`;
  }
}

const loadEngine = () => import('../gotemplate/index.ts');

/** The template name Go's messages print (`template: user-data:3: ...`). */
const templateName = (what: 'user data' | 'network data') =>
  what === 'user data' ? 'user-data' : 'network-data';

/** Parses the claim's templates (no execution); throws VMetalInputError naming the first that fails. */
export async function checkClaimTemplates(
  inputs: Pick<ClaimInputs, 'userData' | 'networkData'>,
): Promise<void> {
  const parts: [ResolvedSource, 'user data' | 'network data'][] = [
    [inputs.userData, 'user data'],
    [inputs.networkData, 'network data'],
  ];
  if (parts.every(([s]) => s.template === undefined)) return;
  const engine = await loadEngine();
  for (const [resolved, what] of parts) {
    if (resolved.template === undefined) continue;
    try {
      engine.parseGoTemplate(templateName(what), resolved.template);
    } catch (e) {
      if (e instanceof engine.TemplateError)
        throw new VMetalInputError(sourceField(resolved.source, what), e.message);
      throw e;
    }
  }
}

/**
 * The source's text: a literal as is, a template rendered with `.Values` = `values`; undefined for
 * the generated default (the caller generates it).
 */
export async function renderSourceText(
  resolved: ResolvedSource,
  what: 'user data' | 'network data',
  values: TemplateValues,
): Promise<string | undefined> {
  const { source } = resolved;
  if (source.kind === 'literal') return source.text;
  if (resolved.template === undefined) return undefined;
  const engine = await loadEngine();
  try {
    return engine.renderGoTemplate(templateName(what), resolved.template, engine.fromJSON(values));
  } catch (e) {
    if (e instanceof engine.TemplateError) throw new VMetalInputError(sourceField(source, what), e.message);
    throw e;
  }
}
