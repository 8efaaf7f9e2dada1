/**
 * The structure server-side apply needs from a schema, as structured-merge-diff's schema.Atom:
 * which values are leaves, which maps are granular (struct fields, or map entries owned one by
 * one) or atomic, which lists are atomic, sets, or maps keyed by some fields. Built from an
 * OpenAPI v3 / CRD structural schema by kube-openapi's rules (pkg/schemaconv/openapi.go and
 * smd.go): `x-kubernetes-list-type` (else `x-kubernetes-patch-strategy: merge` with
 * `x-kubernetes-patch-merge-key`, else atomic), `x-kubernetes-list-map-keys`,
 * `x-kubernetes-map-type`, and "deduced" types (maps granular, lists atomic) where a schema says
 * nothing: preserved unknown fields, `x-kubernetes-int-or-string`, objects without properties.
 */
import type { Schema } from '../schema.ts';

export interface ListType {
  atomic: boolean;
  /** Key fields of an associative list; empty for a set (items are their own keys). */
  keys: string[];
  /** Defaults of key fields (a key field absent from an item takes its default). */
  keyDefaults: Record<string, unknown>;
  elem(): Atom;
}

export interface MapType {
  atomic: boolean;
  /** Declared (struct) fields; a key not among them is a map entry of `elem`. */
  fields: ReadonlyMap<string, () => Atom>;
  /** Type of undeclared keys; undefined when the schema allows none (treated as deduced). */
  elem: (() => Atom) | undefined;
}

export type ScalarKind = 'numeric' | 'string' | 'boolean' | 'untyped';

/** A type: one or more of scalar, list, map; which one applies is decided by the value (deduceAtom). */
export interface Atom {
  scalar?: ScalarKind;
  list?: ListType;
  map?: MapType;
}

/** `__untyped_atomic_`: every value is a leaf. */
export const UNTYPED_ATOMIC: Atom = {
  scalar: 'untyped',
  list: { atomic: true, keys: [], keyDefaults: {}, elem: () => UNTYPED_ATOMIC },
  map: { atomic: true, fields: new Map(), elem: () => UNTYPED_ATOMIC },
};

/** `__untyped_deduced_`: maps are granular, lists atomic, scalars leaves. */
export const DEDUCED: Atom = {
  scalar: 'untyped',
  list: { atomic: true, keys: [], keyDefaults: {}, elem: () => UNTYPED_ATOMIC },
  map: { atomic: false, fields: new Map(), elem: () => DEDUCED },
};

const SCALARS: Record<ScalarKind, Atom> = {
  numeric: { scalar: 'numeric' },
  string: { scalar: 'string' },
  boolean: { scalar: 'boolean' },
  untyped: { scalar: 'untyped' },
};

/** Narrows an atom by the value's shape, as typed/helpers.go deduceAtom does. */
export function deduce(a: Atom, v: unknown): Atom {
  if (v === undefined || v === null) return a;
  if (Array.isArray(v)) return a.list ? { list: a.list } : a;
  if (typeof v === 'object') return a.map ? { map: a.map } : a;
  return a.scalar ? SCALARS[a.scalar] : a;
}

/** A `$ref` resolver for OpenAPI documents whose schemas point at shared components. */
export type RefResolver = (ref: string) => Schema | undefined;

type Ext = Schema & {
  $ref?: string;
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
};

/** Converts schemas to atoms, caching per schema node (and per inherited preserve-unknown flag). */
export class TypeBuilder {
  private readonly cache = new Map<boolean, WeakMap<object, Atom>>([
    [false, new WeakMap()],
    [true, new WeakMap()],
  ]);
  private readonly resolve: RefResolver | undefined;

  constructor(resolve?: RefResolver) {
    this.resolve = resolve;
  }

  atom(schema: Schema | undefined, preserveUnknown = false): Atom {
    if (!schema) return DEDUCED;
    const s = this.deref(schema as Ext);
    const c = this.cache.get(preserveUnknown)!;
    let a = c.get(s);
    if (!a) {
      a = this.build(s, preserveUnknown || s['x-kubernetes-preserve-unknown-fields'] === true);
      c.set(s, a);
    }
    return a;
  }

  /** `$ref`, or `allOf: [{$ref}]` as generated documents wrap references with a description. */
  private deref(s: Ext): Ext {
    const ref = s.$ref ?? (s.allOf?.length === 1 ? (s.allOf[0] as Ext).$ref : undefined);
    if (ref && this.resolve) {
      const target = this.resolve(ref) as Ext | undefined;
      if (target) {
        // A map-type written next to the reference overrides the referenced type's (makeOpenAPIRef).
        const mt = s['x-kubernetes-map-type'];
        return mt ? { ...target, 'x-kubernetes-map-type': mt } : target;
      }
    }
    return s;
  }

  private build(s: Ext, preserve: boolean): Atom {
    switch (s.type) {
      case 'object':
        return { map: this.map(s, preserve) };
      case 'array':
        return { list: this.list(s, preserve) };
      case 'integer':
      case 'number':
        return SCALARS.numeric;
      case 'boolean':
        return SCALARS.boolean;
      case 'string':
        // Formatted strings (date-time, int-or-string, ...) are untyped scalars (schemaconv convertPrimitive).
        return !s.format || s.format === 'byte' ? SCALARS.string : SCALARS.untyped;
      default:
        return { scalar: 'untyped', list: this.list(s, preserve), map: this.map(s, preserve) };
    }
  }

  private map(s: Ext, preserve: boolean): MapType {
    const fields = new Map<string, () => Atom>();
    for (const [name, sub] of Object.entries(s.properties ?? {})) {
      fields.set(name, () => this.atom(sub, preserve));
    }
    let elem: (() => Atom) | undefined;
    const ap = s.additionalProperties;
    if (ap === undefined) {
      if (preserve || fields.size === 0) elem = () => DEDUCED;
    } else if (typeof ap === 'object') elem = () => this.atom(ap, preserve);
    else if (ap === true) elem = () => DEDUCED;
    return { atomic: s['x-kubernetes-map-type'] === 'atomic', fields, elem };
  }

  private list(s: Ext, preserve: boolean): ListType {
    let atomic = true;
    let keys: string[] = [];
    const lt = s['x-kubernetes-list-type'];
    if (lt === 'set') atomic = false;
    else if (lt === 'map') {
      atomic = false;
      keys = s['x-kubernetes-list-map-keys'] ?? [];
    } else if (lt === undefined) {
      const strategy = s['x-kubernetes-patch-strategy'];
      if (strategy === 'merge' || strategy === 'merge,retainKeys') {
        atomic = false;
        const k = s['x-kubernetes-patch-merge-key'];
        keys = k ? [k] : [];
      }
    }
    const items = s.items ? this.deref(s.items as Ext) : undefined;
    const keyDefaults: Record<string, unknown> = {};
    for (const k of keys) {
      const d = items?.properties?.[k]?.default;
      if (d !== undefined) keyDefaults[k] = d;
    }
    return {
      atomic,
      keys,
      keyDefaults,
      elem: () => (items ? this.atom(items, preserve) : UNTYPED_ATOMIC),
    };
  }
}
