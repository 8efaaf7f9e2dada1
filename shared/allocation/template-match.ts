/**
 * Which Metal3Data belong to a Metal3DataTemplate (seed 001, "linked by three ways"):
 * 1. the Metal3Data's `spec.template.name` is the template's name;
 * 2. the Metal3Data and the template carry the same `templateReference`;
 * 3. the template's `templateReference` is the name in the Metal3Data's `spec.template`
 *    (backward compatibility with data created by an older template without templateReference).
 * Namespaces must agree: a Metal3Data's template namespace defaults to its own.
 */

export interface TemplateLike {
  metadata: { name?: string | undefined; namespace?: string | undefined };
  spec?: { templateReference?: string | undefined } | undefined;
}

export interface DataLike {
  metadata: { name?: string | undefined; namespace?: string | undefined };
  spec?:
    | {
        templateReference?: string | undefined;
        template?: { name?: string | undefined; namespace?: string | undefined } | undefined;
      }
    | undefined;
}

export type TemplateLink = 'template' | 'templateReference' | 'legacyTemplateReference';

/** How `data` is linked to `template`, or undefined when it is not. */
export function templateLink(template: TemplateLike, data: DataLike): TemplateLink | undefined {
  const ns = template.metadata.namespace ?? '';
  if ((data.metadata.namespace ?? '') !== ns) return undefined;
  const dataTemplate = data.spec?.template;
  const dataTemplateName = dataTemplate?.name ?? '';
  const dataTemplateNs = dataTemplate?.namespace || data.metadata.namespace || '';
  const ref = template.spec?.templateReference ?? '';
  if (dataTemplateName !== '' && dataTemplateName === template.metadata.name && dataTemplateNs === ns) {
    return 'template';
  }
  if (ref !== '' && (data.spec?.templateReference ?? '') === ref) return 'templateReference';
  if (ref !== '' && dataTemplateName === ref && dataTemplateNs === ns) return 'legacyTemplateReference';
  return undefined;
}

export function belongsToTemplate(template: TemplateLike, data: DataLike): boolean {
  return templateLink(template, data) !== undefined;
}
