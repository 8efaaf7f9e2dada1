import { z } from 'zod';
import { isRecord } from '../json.ts';

/** A JSON Schema / OpenAPI v3 node, loosely typed (it is data we rewrite). */
export type SchemaNode = { [key: string]: unknown };

const PRESERVE = 'x-kubernetes-preserve-unknown-fields';
const INT_OR_STRING = 'x-kubernetes-int-or-string';
const DROPPED_KEYS = ['$schema', '$id', 'propertyNames', 'id'];

function isEmptySchema(node: unknown): boolean {
  return node === true || (typeof node === 'object' && node !== null && Object.keys(node).length === 0);
}

/** The elements of a JSON array (none when `v` is not one). */
const items = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** `anyOf` of literals/enums of one type (e.g. `md5|sha256|sha512|'auto'`) becomes one enum. */
function mergeEnumUnion(options: SchemaNode[]): SchemaNode | undefined {
  const type = options[0]?.type;
  if (!options.every((o) => o.type === type && (Array.isArray(o.enum) || 'const' in o))) return undefined;
  return { type, enum: options.flatMap((o) => (Array.isArray(o.enum) ? items(o.enum) : [o.const])) };
}

/**
 * Rewrites a JSON Schema from `z.toJSONSchema` into a Kubernetes *structural* schema: a `type`
 * on every node, no anyOf/oneOf/$ref, `properties` and `additionalProperties` never together,
 * unknown-field maps marked `x-kubernetes-preserve-unknown-fields`, int-or-string marked as such.
 * Throws on shapes Kubernetes cannot express, so a schema change cannot silently produce a bad CRD.
 */
export function toStructural(input: unknown, path = '<root>', prune = false): SchemaNode {
  if (isEmptySchema(input)) return { [PRESERVE]: true };
  const node: SchemaNode = { ...(isRecord(input) ? input : {}) };
  for (const key of DROPPED_KEYS) delete node[key];
  if (node.$ref || node.$defs || node.definitions || node.allOf || node.not)
    throw new Error(`${path}: $ref/$defs/allOf/not cannot be expressed in a structural CRD schema`);

  const unionNode = node.anyOf ?? node.oneOf;
  if (unionNode !== undefined) {
    const union = items(unionNode).filter(isRecord);
    delete node.anyOf;
    delete node.oneOf;
    if (node[INT_OR_STRING]) return stripUnsafeBounds(node);
    const nonNull = union.filter((o) => o.type !== 'null');
    if (nonNull.length < union.length) node.nullable = true;
    const merged = nonNull.length === 1 ? nonNull[0]! : mergeEnumUnion(nonNull);
    if (!merged)
      throw new Error(`${path}: a union of different shapes cannot be expressed in a structural CRD schema`);
    return toStructural({ ...merged, ...node }, path, prune);
  }

  if (Array.isArray(node.type)) {
    const all = items(node.type);
    const types = all.filter((t) => t !== 'null');
    if (types.length < all.length) node.nullable = true;
    if (types.length !== 1)
      throw new Error(`${path}: a node must have exactly one type, got ${types.join('|')}`);
    node.type = types[0];
  }
  if ('const' in node) {
    node.enum = [node.const];
    node.type ??= typeof node.const === 'number' ? 'number' : typeof node.const;
    delete node.const;
  }
  stripUnsafeBounds(node);

  if (node.type === 'array') {
    node.items = toStructural(node.items ?? {}, `${path}[]`, prune);
  } else if (node.type === 'object') {
    const props = isRecord(node.properties) ? node.properties : undefined;
    const additional = node.additionalProperties;
    if (props) {
      node.properties = Object.fromEntries(
        Object.entries(props).map(([k, v]) => [k, toStructural(v, `${path}.${k}`, prune)]),
      );
      delete node.additionalProperties;
      // A passthrough object: known fields typed, the rest kept verbatim (or, for a CRD that
      // prunes, dropped by the API server: the schema's object is loose only for round trips).
      if (!prune && additional !== undefined && additional !== false) node[PRESERVE] = true;
    } else if (additional !== undefined && additional !== false) {
      if (isEmptySchema(additional)) {
        delete node.additionalProperties;
        node[PRESERVE] = true;
      } else {
        node.additionalProperties = toStructural(additional, `${path}.*`, prune);
      }
    } else {
      delete node.additionalProperties;
    }
    if (Array.isArray(node.required) && node.required.length === 0) delete node.required;
  } else if (!node.type && !node[PRESERVE]) {
    throw new Error(`${path}: no type (structural schemas need one on every node)`);
  }
  return node;
}

/** zod writes ±2^53-1 as the bounds of every int; they say nothing and clutter the CRD. */
function stripUnsafeBounds(node: SchemaNode): SchemaNode {
  if (node.minimum === Number.MIN_SAFE_INTEGER) delete node.minimum;
  if (node.maximum === Number.MAX_SAFE_INTEGER) delete node.maximum;
  return node;
}

/**
 * The structural OpenAPI v3 schema of a zod schema, as the object's author writes it (defaults
 * optional). `prune`: objects with known fields get no preserve-unknown-fields (maps stay open).
 */
export function structuralSchemaOf(schema: z.ZodType, opts: { prune?: boolean } = {}): SchemaNode {
  return toStructural(
    z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw' }),
    '<root>',
    opts.prune ?? false,
  );
}
