/**
 * Structural schemas of CustomResourceDefinitions (openAPIV3Schema) applied to custom
 * resources as the real server does: defaults, then pruning of unknown fields, then validation
 * (types, required, enum, pattern, bounds, lengths, formats, nullable, int-or-string) with
 * field errors named by path, then `x-kubernetes-validations` CEL rules (see cel.ts).
 */
import type { ServedKind } from './kinds.ts';
import { deepEqual } from './patch.ts';
import { validateRules } from './schema-rules.ts';
import { fieldError, type StatusCause } from './status.ts';

export interface Schema {
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  uniqueItems?: boolean;
  nullable?: boolean;
  default?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  not?: Schema;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: {
    rule: string;
    message?: string;
    messageExpression?: string;
    fieldPath?: string;
    reason?: string;
    optionalOldSelf?: boolean;
  }[];
}

export const isObj = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const ROOT_KEEP = new Set(['apiVersion', 'kind', 'metadata']);

/** Fills absent properties that have a `default`, recursively (the object must exist for its fields to default). */
export function applyDefaults(schema: Schema | undefined, v: unknown): void {
  if (!schema) return;
  if (isObj(v)) {
    for (const [k, ps] of Object.entries(schema.properties ?? {})) {
      if (v[k] === undefined && ps.default !== undefined) v[k] = structuredClone(ps.default);
      if (v[k] !== undefined) applyDefaults(ps, v[k]);
    }
    if (isObj(schema.additionalProperties))
      for (const k of Object.keys(v)) applyDefaults(schema.additionalProperties, v[k]);
  } else if (Array.isArray(v) && schema.items) {
    for (const it of v) applyDefaults(schema.items, it);
  }
}

/**
 * Drops fields the schema does not know, unless x-kubernetes-preserve-unknown-fields keeps them;
 * the paths of dropped fields go to `dropped` (for fieldValidation Strict/Warn).
 */
export function prune(
  schema: Schema | undefined,
  v: unknown,
  root = false,
  path = '',
  dropped?: string[],
): void {
  if (!schema) return;
  if (isObj(v)) {
    const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
    const props = schema.properties;
    const addl = schema.additionalProperties;
    for (const k of Object.keys(v)) {
      if (root && ROOT_KEEP.has(k)) continue;
      if (schema['x-kubernetes-embedded-resource'] && ROOT_KEEP.has(k)) continue;
      const ps = props?.[k] || (isObj(addl) ? addl : undefined);
      if (ps) {
        // Only objects and arrays hold anything to prune (a path is made only for them).
        const c = v[k];
        if (c !== null && typeof c === 'object') prune(ps, c, false, path ? `${path}.${k}` : k, dropped);
      } else if (addl === true || preserve) continue;
      else {
        delete v[k];
        dropped?.push(path ? `${path}.${k}` : k);
      }
    }
  } else if (Array.isArray(v) && schema.items) {
    for (let i = 0; i < v.length; i++) {
      const c = v[i];
      if (c !== null && typeof c === 'object') prune(schema.items, c, false, `${path}[${i}]`, dropped);
    }
  }
}

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

const FORMATS: Record<string, RegExp> = {
  'date-time': /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  ipv4: /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/,
  mac: /^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$/,
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  hostname: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
  byte: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/,
};

function isIPv6(s: string): boolean {
  if (!/^[0-9a-fA-F:.]+$/.test(s) || !s.includes(':')) return false;
  const dbl = s.split('::');
  if (dbl.length > 2) return false;
  const groups = s.split(':').filter((g) => g !== '');
  return groups.length <= 8 && groups.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g) || FORMATS.ipv4!.test(g));
}

const regexCache = new Map<string, RegExp | null>();
function regex(p: string): RegExp | null {
  let r = regexCache.get(p);
  if (r === undefined) {
    try {
      r = new RegExp(p, 'u');
    } catch {
      r = null;
    }
    regexCache.set(p, r);
  }
  return r;
}

/**
 * The previous value of the node being validated, when it can be correlated to it (same property
 * or map key, or same keys of an `x-kubernetes-list-type: map` item): Kubernetes' CRD validation
 * ratcheting (apiextensions-apiserver pkg/apiserver/validation/ratcheting.go, on by default since
 * 1.30) drops the errors of a correlated node whose value did not change.
 */
export type Correlated = { value: unknown } | undefined;

/**
 * Whether `v` is valid for a schema that only asks for a scalar type (no enum, format, pattern,
 * bounds, lengths or combinators): then validateNode would report nothing, and its path and old
 * value need not be made. Most values are such (a status map's entries: ~40,000 of them a write,
 * each a path string and a correlation object otherwise).
 */
function validScalar(schema: Schema, v: unknown): boolean {
  let plain = plainScalar.get(schema);
  if (plain === undefined) {
    plain =
      (schema.type === 'string' ||
        schema.type === 'integer' ||
        schema.type === 'number' ||
        schema.type === 'boolean') &&
      PLAIN_SCALAR_EXCLUDES.every((k) => schema[k] === undefined);
    plainScalar.set(schema, plain);
  }
  if (!plain || v === null) return false;
  const t = typeof v;
  if (t === 'string' || t === 'boolean') return schema.type === t;
  if (t === 'number') return schema.type === 'number' || (schema.type === 'integer' && Number.isInteger(v));
  return false;
}
/** The keywords validateNode checks on a scalar besides its type. */
const PLAIN_SCALAR_EXCLUDES: (keyof Schema)[] = [
  'enum',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'x-kubernetes-int-or-string',
];
const plainScalar = new WeakMap<Schema, boolean>();

/** The old value of property/map key `k`, when the old object has it. */
const keyOf = (old: Correlated, k: string): Correlated =>
  old && isObj(old.value) && Object.hasOwn(old.value, k) ? { value: old.value[k] } : undefined;

/** The old item with the same list-map keys as `it` (other lists cannot be correlated by item). */
function itemOf(schema: Schema, old: Correlated, it: unknown): Correlated {
  const keys = schema['x-kubernetes-list-type'] === 'map' ? schema['x-kubernetes-list-map-keys'] : undefined;
  if (!old || !keys || !Array.isArray(old.value) || !isObj(it)) return undefined;
  const prev = old.value.find((o) => isObj(o) && keys.every((k) => deepEqual(o[k], it[k])));
  return prev === undefined ? undefined : { value: prev };
}

export function validateValue(
  schema: Schema,
  v: unknown,
  path: string,
  out: StatusCause[],
  old?: Correlated,
): void {
  const mark = out.length;
  validateNode(schema, v, path, out, old);
  // Ratcheting: errors under an unchanged, correlated value are dropped (checked only when there are errors).
  if (old && out.length > mark && deepEqual(v, old.value)) out.length = mark;
}

function validateNode(schema: Schema, v: unknown, path: string, out: StatusCause[], old: Correlated): void {
  if (v === null) {
    if (schema.nullable) return;
    if (schema['x-kubernetes-preserve-unknown-fields'] && !schema.type) return;
    out.push(
      fieldError(
        'TypeInvalid',
        path,
        `${path} in body must be of type ${schema.type ?? 'object'}: "null"`,
        'null',
      ),
    );
    return;
  }
  const t = typeName(v);
  if (schema['x-kubernetes-int-or-string']) {
    if (t !== 'integer' && t !== 'string') {
      out.push(fieldError('TypeInvalid', path, `${path} in body must be of type integer,string: "${t}"`, t));
      return;
    }
  } else if (schema.type) {
    const ok = schema.type === t || (schema.type === 'number' && t === 'integer');
    if (!ok) {
      out.push(fieldError('TypeInvalid', path, `${path} in body must be of type ${schema.type}: "${t}"`, t));
      return;
    }
  }
  if (schema.enum && !schema.enum.some((e) => deepEqual(e, v))) {
    out.push(
      fieldError(
        'NotSupported',
        path,
        `supported values: ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`,
        v,
      ),
    );
  }
  if (typeof v === 'string') {
    if (schema.maxLength !== undefined && [...v].length > schema.maxLength) {
      out.push(fieldError('TooLong', path, `may not be more than ${schema.maxLength} bytes`, v));
    }
    if (schema.minLength !== undefined && [...v].length < schema.minLength) {
      out.push(
        fieldError('Invalid', path, `${path} in body should be at least ${schema.minLength} chars long`, v),
      );
    }
    if (schema.pattern) {
      const r = regex(schema.pattern);
      if (r && !r.test(v))
        out.push(fieldError('Invalid', path, `${path} in body should match '${schema.pattern}'`, v));
    }
    if (schema.format) {
      const f = schema.format;
      const ok =
        f === 'ipv6'
          ? isIPv6(v)
          : f === 'ip'
            ? FORMATS.ipv4!.test(v) || isIPv6(v)
            : FORMATS[f]
              ? FORMATS[f]!.test(v)
              : true;
      if (!ok)
        out.push(
          fieldError('TypeInvalid', path, `${path} in body must be of type ${f}: ${JSON.stringify(v)}`, v),
        );
    }
  }
  if (typeof v === 'number') {
    if (schema.minimum !== undefined) {
      if (schema.exclusiveMinimum ? v <= schema.minimum : v < schema.minimum) {
        out.push(
          fieldError(
            'Invalid',
            path,
            `${path} in body should be greater than ${schema.exclusiveMinimum ? '' : 'or equal to '}${schema.minimum}`,
            v,
          ),
        );
      }
    }
    if (schema.maximum !== undefined) {
      if (schema.exclusiveMaximum ? v >= schema.maximum : v > schema.maximum) {
        out.push(
          fieldError(
            'Invalid',
            path,
            `${path} in body should be less than ${schema.exclusiveMaximum ? '' : 'or equal to '}${schema.maximum}`,
            v,
          ),
        );
      }
    }
    if (schema.multipleOf && v % schema.multipleOf !== 0) {
      out.push(
        fieldError('Invalid', path, `${path} in body should be a multiple of ${schema.multipleOf}`, v),
      );
    }
  }
  if (Array.isArray(v)) {
    if (schema.minItems !== undefined && v.length < schema.minItems) {
      out.push(
        fieldError(
          'Invalid',
          path,
          `${path} in body should have at least ${schema.minItems} items`,
          v.length,
        ),
      );
    }
    if (schema.maxItems !== undefined && v.length > schema.maxItems) {
      out.push(fieldError('TooMany', path, `must have at most ${schema.maxItems} items`, v.length));
    }
    const lt = schema['x-kubernetes-list-type'];
    if (schema.uniqueItems || lt === 'set') {
      for (let i = 0; i < v.length; i++) {
        for (let j = 0; j < i; j++) {
          if (deepEqual(v[i], v[j])) {
            out.push(fieldError('Duplicate', `${path}[${i}]`, '', v[i]));
            break;
          }
        }
      }
    }
    if (lt === 'map' && schema['x-kubernetes-list-map-keys']) {
      const keys = schema['x-kubernetes-list-map-keys'];
      const seen = new Set<string>();
      v.forEach((it, i) => {
        const k = JSON.stringify(keys.map((key) => (isObj(it) ? it[key] : undefined)));
        if (seen.has(k))
          out.push(
            fieldError(
              'Duplicate',
              `${path}[${i}]`,
              '',
              isObj(it) ? Object.fromEntries(keys.map((key) => [key, it[key]])) : it,
            ),
          );
        seen.add(k);
      });
    }
    if (schema.items)
      for (let i = 0; i < v.length; i++)
        if (!validScalar(schema.items, v[i]))
          validateValue(schema.items, v[i], `${path}[${i}]`, out, itemOf(schema, old, v[i]));
  }
  if (isObj(v)) {
    for (const r of schema.required ?? []) {
      if (v[r] === undefined) out.push(fieldError('Required', path ? `${path}.${r}` : r, ''));
    }
    const keys = Object.keys(v);
    const n = keys.length;
    if (schema.minProperties !== undefined && n < schema.minProperties) {
      out.push(
        fieldError(
          'Invalid',
          path,
          `${path} in body should have at least ${schema.minProperties} properties`,
          n,
        ),
      );
    }
    if (schema.maxProperties !== undefined && n > schema.maxProperties) {
      out.push(fieldError('TooMany', path, `must have at most ${schema.maxProperties} items`, n));
    }
    for (const k of keys) {
      const val = v[k];
      const ps =
        schema.properties?.[k] ??
        (isObj(schema.additionalProperties) ? schema.additionalProperties : undefined);
      if (ps && val !== undefined && !validScalar(ps, val))
        validateValue(ps, val, path ? `${path}.${k}` : k, out, keyOf(old, k));
    }
  }
  for (const sub of schema.allOf ?? []) validateValue({ ...sub, type: sub.type }, v, path, out);
  if (schema.anyOf?.length) {
    const ok = schema.anyOf.some((s) => {
      const tmp: StatusCause[] = [];
      validateValue(s, v, path, tmp);
      return tmp.length === 0;
    });
    if (!ok)
      out.push(
        fieldError('Invalid', path, `${path} in body must validate at least one schema (anyOf)`, typeName(v)),
      );
  }
  if (schema.oneOf?.length) {
    const n = schema.oneOf.filter((s) => {
      const tmp: StatusCause[] = [];
      validateValue(s, v, path, tmp);
      return tmp.length === 0;
    }).length;
    if (n !== 1)
      out.push(
        fieldError(
          'Invalid',
          path,
          `${path} in body must validate one and only one schema (oneOf)`,
          typeName(v),
        ),
      );
  }
  if (schema.not) {
    const tmp: StatusCause[] = [];
    validateValue(schema.not, v, path, tmp);
    if (tmp.length === 0)
      out.push(
        fieldError('Invalid', path, `${path} in body should not validate the schema (not)`, typeName(v)),
      );
  }
}

/** Defaults, prunes and validates a custom resource in place; returns the field errors. */
export function admitCustomResource(
  kind: ServedKind,
  obj: any,
  old: any | undefined,
  dropped?: string[],
  warnings?: string[],
): StatusCause[] {
  const schema = kind.schema;
  if (!schema) return [];
  applyDefaults(schema, obj);
  prune(schema, obj, true, '', dropped);
  const out: StatusCause[] = [];
  const { metadata: _m, apiVersion: _a, kind: _k, ...body } = obj;
  const { metadata: _mo, apiVersion: _ao, kind: _ko, ...oldBody } = old ?? {};
  const rootSchema: Schema = { ...schema, properties: { ...(schema.properties ?? {}) } };
  delete rootSchema.properties!.metadata;
  delete rootSchema.properties!.apiVersion;
  delete rootSchema.properties!.kind;
  rootSchema.required = (schema.required ?? []).filter((r) => !ROOT_KEEP.has(r));
  // The root's own errors ratchet only when the whole object is unchanged; its fields correlate by name.
  validateNode(
    { ...rootSchema, 'x-kubernetes-validations': undefined },
    body,
    '',
    out,
    old ? { value: oldBody } : undefined,
  );
  if (old && out.length && deepEqual(obj, old)) out.length = 0;
  if (out.length === 0)
    validateRules(
      rootSchema,
      { ...body, metadata: obj.metadata, apiVersion: obj.apiVersion, kind: obj.kind },
      old ? { ...oldBody, metadata: old.metadata } : undefined,
      '',
      out,
      old ? { warnings, parentEqual: () => false } : undefined,
    );
  return out;
}
