/**
 * `x-kubernetes-validations` of a structural schema: every rule of the tree evaluated with `self`
 * and (for transition rules, on update) `oldSelf`, old values correlated by property, map key or
 * list-map key, failures reported at the rule's path (or fieldPath) with its message.
 */
import { compileRule, evaluateRule } from './cel.ts';
import { deepEqual } from './patch.ts';
import { isObj, type Schema, typeName } from './schema.ts';
import { causeText, fieldError, type StatusCause } from './status.ts';

/**
 * Ratcheting of rules on update (apiextensions-apiserver pkg/apiserver/schema/cel/validation.go,
 * shouldRatchetError): a failing rule that does not use oldSelf is only a warning when its node,
 * or else its nearest correlatable ancestor, is unchanged.
 */
export interface RuleRatchet {
  warnings?: string[] | undefined;
  /** Whether the nearest correlatable ancestor is unchanged. */
  parentEqual: () => boolean;
}

/** Runs the CEL rules of the schema tree, correlating old values by property, map key or list-map key. */
export function validateRules(
  schema: Schema,
  v: unknown,
  old: unknown,
  path: string,
  out: StatusCause[],
  ratchet?: RuleRatchet,
): void {
  if (v === undefined || v === null || !hasRules(schema)) return;
  // Computed only for a failing rule (rare), so creates and valid updates pay nothing for it.
  const unchanged = (): boolean =>
    old !== undefined ? deepEqual(v, old) : (ratchet?.parentEqual() ?? false);
  const report = (c: StatusCause, usesOldSelf: boolean): void => {
    if (ratchet && !usesOldSelf && unchanged()) ratchet.warnings?.push(causeText(c));
    else out.push(c);
  };
  for (const rule of schema['x-kubernetes-validations'] ?? []) {
    const compiled = compileRule(rule.rule);
    const usesOld = compiled.usesOldSelf;
    if (usesOld && old === undefined && !rule.optionalOldSelf) continue;
    let ok: boolean;
    try {
      ok = evaluateRule(compiled, v, old);
    } catch (e) {
      out.push(
        fieldError(
          'Invalid',
          path || '<nil>',
          `${rule.message ?? `failed rule: ${rule.rule}`}: ${(e as Error).message}`,
          typeName(v),
        ),
      );
      continue;
    }
    if (!ok) {
      const f = rule.fieldPath ? `${path}${rule.fieldPath}` : path || '<nil>';
      let msg = rule.message ?? `failed rule: ${rule.rule}`;
      if (rule.messageExpression) {
        try {
          const m = compileRule(rule.messageExpression).eval(v, old);
          if (typeof m === 'string' && m) msg = m;
        } catch {
          // the real server falls back to message (or the rule) when messageExpression fails
        }
      }
      const reason = rule.reason;
      if (reason === 'FieldValueRequired') report(fieldError('Required', f, msg), usesOld);
      else if (reason === 'FieldValueForbidden') report(fieldError('Forbidden', f, msg), usesOld);
      else report(fieldError('Invalid', f, msg, typeName(v)), usesOld);
    }
  }
  const child: RuleRatchet | undefined = ratchet && {
    warnings: ratchet.warnings,
    parentEqual: old !== undefined ? unchanged : ratchet.parentEqual,
  };
  if (isObj(v)) {
    const o = isObj(old) ? old : undefined;
    for (const [k, val] of Object.entries(v)) {
      const ps =
        schema.properties?.[k] ??
        (isObj(schema.additionalProperties) ? schema.additionalProperties : undefined);
      if (ps) validateRules(ps, val, o?.[k], path ? `${path}.${k}` : k, out, child);
    }
  } else if (Array.isArray(v) && schema.items) {
    const keys =
      schema['x-kubernetes-list-type'] === 'map' ? schema['x-kubernetes-list-map-keys'] : undefined;
    const oldArr = Array.isArray(old) ? old : [];
    v.forEach((it, i) => {
      let prev: unknown;
      if (keys && isObj(it)) prev = oldArr.find((o) => isObj(o) && keys.every((k) => deepEqual(o[k], it[k])));
      validateRules(schema.items!, it, prev, `${path}[${i}]`, out, child);
    });
  }
}

/**
 * Whether a rule sits anywhere in the part of the tree validateRules walks (properties,
 * additionalProperties, items). A schema without one is not walked: a status map with an entry
 * per machine cost ~12 MB of paths, entries and ratchet closures per write at 10,000 machines, for
 * no rule at all (docs/benchmarks.md, "Map writes"). Served schemas are not changed in place (a
 * CRD update serves new ones), so the answer is kept per schema object.
 */
function hasRules(schema: Schema): boolean {
  let r = ruleful.get(schema);
  if (r === undefined) {
    r =
      (schema['x-kubernetes-validations']?.length ?? 0) > 0 ||
      Object.values(schema.properties ?? {}).some(hasRules) ||
      (isObj(schema.additionalProperties) && hasRules(schema.additionalProperties)) ||
      (schema.items !== undefined && hasRules(schema.items));
    ruleful.set(schema, r);
  }
  return r;
}
const ruleful = new WeakMap<Schema, boolean>();

/** Every rule of a schema tree (for CRD validation: rules that do not compile reject the CRD). */
export function collectRules(
  schema: Schema | undefined,
  path: string,
  out: { path: string; rule: string }[] = [],
): typeof out {
  if (!schema) return out;
  for (const [i, r] of (schema['x-kubernetes-validations'] ?? []).entries()) {
    out.push({ path: `${path}.x-kubernetes-validations[${i}].rule`, rule: r.rule });
    if (r.messageExpression) {
      out.push({
        path: `${path}.x-kubernetes-validations[${i}].messageExpression`,
        rule: r.messageExpression,
      });
    }
  }
  for (const [k, s] of Object.entries(schema.properties ?? {}))
    collectRules(s, `${path}.properties[${k}]`, out);
  if (isObj(schema.additionalProperties))
    collectRules(schema.additionalProperties as Schema, `${path}.additionalProperties`, out);
  if (schema.items) collectRules(schema.items, `${path}.items`, out);
  return out;
}
