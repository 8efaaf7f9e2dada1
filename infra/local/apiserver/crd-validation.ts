/** Validation of CustomResourceDefinition objects themselves (names, versions, schema, rules). */
import { compileRule } from './cel.ts';
import { collectRules } from './schema-rules.ts';
import { fieldError, type StatusCause } from './status.ts';

export function validateCrd(crd: any, old: any | undefined): StatusCause[] {
  const out: StatusCause[] = [];
  const spec = crd.spec ?? {};
  const names = spec.names ?? {};
  if (!spec.group) out.push(fieldError('Required', 'spec.group', ''));
  if (!names.plural) out.push(fieldError('Required', 'spec.names.plural', ''));
  if (!names.kind) out.push(fieldError('Required', 'spec.names.kind', ''));
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    out.push(
      fieldError('NotSupported', 'spec.scope', 'supported values: "Cluster", "Namespaced"', spec.scope ?? ''),
    );
  }
  if (spec.group && names.plural && crd.metadata?.name !== `${names.plural}.${spec.group}`) {
    out.push(
      fieldError(
        'Invalid',
        'metadata.name',
        'must be spec.names.plural+"."+spec.group',
        crd.metadata?.name ?? '',
      ),
    );
  }
  const versions: any[] = spec.versions ?? [];
  if (versions.length === 0)
    out.push(
      fieldError('Required', 'spec.versions', 'must have exactly one version marked as storage version'),
    );
  else if (versions.filter((v) => v.storage).length !== 1) {
    out.push(
      fieldError(
        'Invalid',
        'spec.versions',
        'must have exactly one version marked as storage version',
        versions.map((v) => v.name),
      ),
    );
  }
  versions.forEach((v, i) => {
    for (const r of collectRules(v.schema?.openAPIV3Schema, `spec.validation.openAPIV3Schema`)) {
      try {
        compileRule(r.rule);
      } catch (e) {
        out.push(
          fieldError(
            'Invalid',
            `spec.versions[${i}].schema.openAPIV3Schema${r.path.slice('spec.validation.openAPIV3Schema'.length)}`,
            `compilation failed: ${(e as Error).message}`,
            r.rule,
          ),
        );
      }
    }
  });
  if (old?.spec?.scope && old.spec.scope !== spec.scope)
    out.push(fieldError('Invalid', 'spec.scope', 'field is immutable', spec.scope));
  if (old && old.spec?.group !== spec.group)
    out.push(fieldError('Invalid', 'spec.group', 'field is immutable', spec.group));
  return out;
}
