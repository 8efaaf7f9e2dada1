/**
 * A small validator of objects against a CRD's structural openAPIV3Schema, with the API server's
 * view of what happens: violations (type, enum, pattern, bounds, required) and fields that would be
 * pruned (unknown and not preserved). Enough to show that the generated CRDs accept the seed
 * fixtures unchanged; not a full OpenAPI implementation (no CEL, no formats beyond date-time).
 */
type Schema = Record<string, any>;

export interface CrdVerdict {
  violations: string[];
  pruned: string[];
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function walk(schema: Schema, value: unknown, path: string, out: CrdVerdict): void {
  if (value === null && schema.nullable) return;
  if (schema['x-kubernetes-int-or-string']) {
    if (!['integer', 'string'].includes(typeOf(value)))
      out.violations.push(`${path}: must be an int or a string`);
    return;
  }
  const actual = typeOf(value);
  if (schema.type) {
    const ok = schema.type === actual || (schema.type === 'number' && actual === 'integer');
    if (!ok) {
      out.violations.push(`${path}: expected ${schema.type}, got ${actual}`);
      return;
    }
  }
  if (schema.enum && !schema.enum.includes(value))
    out.violations.push(`${path}: ${JSON.stringify(value)} not in enum`);
  if (typeof value === 'string') {
    if (schema.pattern && !new RegExp(schema.pattern).test(value))
      out.violations.push(`${path}: does not match pattern`);
    if (schema.minLength !== undefined && value.length < schema.minLength)
      out.violations.push(`${path}: too short`);
    if (schema.format === 'date-time' && Number.isNaN(Date.parse(value)))
      out.violations.push(`${path}: not a date-time`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) out.violations.push(`${path}: below minimum`);
    if (schema.maximum !== undefined && value > schema.maximum) out.violations.push(`${path}: above maximum`);
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) walk(schema.items ?? {}, item, `${path}[${i}]`, out);
    return;
  }
  if (actual !== 'object') return;
  const obj = value as Record<string, unknown>;
  for (const key of schema.required ?? []) if (!(key in obj)) out.violations.push(`${path}.${key}: required`);
  for (const [key, child] of Object.entries(obj)) {
    const childPath = `${path}.${key}`;
    if (schema.properties?.[key]) walk(schema.properties[key], child, childPath, out);
    else if (typeof schema.additionalProperties === 'object')
      walk(schema.additionalProperties, child, childPath, out);
    else if (!schema['x-kubernetes-preserve-unknown-fields']) out.pruned.push(childPath);
  }
}

/** Validates a whole object; metadata is the API server's business and is skipped. */
export function checkAgainstCrd(openAPIV3Schema: Schema, obj: Record<string, unknown>): CrdVerdict {
  const out: CrdVerdict = { violations: [], pruned: [] };
  const { metadata: _metadata, ...rest } = obj;
  walk(
    {
      ...openAPIV3Schema,
      required: (openAPIV3Schema.required ?? []).filter((k: string) => k !== 'metadata'),
    },
    rest,
    '',
    out,
  );
  return out;
}

/** Validates a fragment against the schema node at `path` (e.g. ['spec', 'hostSelector']). */
export function checkFragment(openAPIV3Schema: Schema, path: string[], value: unknown): CrdVerdict {
  let node = openAPIV3Schema;
  for (const key of path) node = node.properties[key];
  const out: CrdVerdict = { violations: [], pruned: [] };
  walk(node, value, `.${path.join('.')}`, out);
  return out;
}
