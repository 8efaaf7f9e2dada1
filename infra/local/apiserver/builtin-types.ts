/**
 * The built-in kinds' types, compiled once per kind from upstream's OpenAPI v3 documents
 * (infra/local/openapi/kubernetes.json, made by scripts/gen-openapi-builtins.ts). A real server
 * decodes a built-in object into its Go struct; these trees stand for those structs: which
 * fields exist (unknown ones are dropped or refused), their JSON types and Go type names (for
 * the decoder's messages), and each field's strategic-merge-patch strategy and merge key.
 */
import { readFileSync } from 'node:fs';
import { assetPath } from '../assets.ts';

export type GoType = StructType | MapType | SliceType | ScalarType;

export interface FieldInfo {
  type: GoType;
  /** x-kubernetes-patch-strategy, split on commas ("merge", "retainKeys", "replace"). */
  strategy: readonly string[];
  /** x-kubernetes-patch-merge-key. */
  mergeKey?: string;
}

export interface StructType {
  t: 'struct';
  /** Go type name as the decoder prints it (`v1.NodeSpec`), and the bare struct name (`NodeSpec`). */
  go: string;
  name: string;
  fields: Map<string, FieldInfo>;
}
export interface MapType {
  t: 'map';
  go: string;
  elem: GoType;
}
export interface SliceType {
  t: 'slice';
  go: string;
  elem: GoType;
}
export interface ScalarType {
  /** `raw`: any JSON (apiextensions JSON, FieldsV1). `bytes`: base64 string ([]byte). */
  t:
    | 'string'
    | 'bytes'
    | 'int32'
    | 'int64'
    | 'float64'
    | 'bool'
    | 'time'
    | 'intOrString'
    | 'quantity'
    | 'raw';
  go: string;
}

interface OpenApiDoc {
  openapi: string;
  info: unknown;
  components: { schemas: Record<string, any> };
}

export interface BuiltinOpenApi {
  source: { repository: string; path: string; ref: string };
  documents: Record<string, OpenApiDoc>;
}

const DATA_FILE = 'infra/local/openapi/kubernetes.json';
let data: BuiltinOpenApi | undefined;

/** The trimmed upstream documents (read once, on first use). */
export function builtinOpenApi(): BuiltinOpenApi {
  data ??= JSON.parse(readFileSync(assetPath(DATA_FILE), 'utf8')) as BuiltinOpenApi;
  return data;
}

const REF = '#/components/schemas/';
/** Schemas whose Go types decode any JSON value (custom UnmarshalJSON keeping the raw bytes). */
const RAW_JSON = new Set(['io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1']);
const SPECIAL: Record<string, ScalarType> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': { t: 'time', go: 'v1.Time' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': { t: 'time', go: 'v1.MicroTime' },
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { t: 'intOrString', go: 'intstr.IntOrString' },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { t: 'quantity', go: 'resource.Quantity' },
};

/** `io.k8s.api.core.v1.NodeSpec` → `v1.NodeSpec` (package and type, as Go prints a type). */
const goName = (schemaName: string): string => schemaName.split('.').slice(-2).join('.');

/** Compiles the schemas of one document into Go-type trees, each named schema once (cycles allowed). */
class Compiler {
  private readonly named = new Map<string, GoType>();
  private readonly schemas: Record<string, any>;
  constructor(schemas: Record<string, any>) {
    this.schemas = schemas;
  }

  ref(name: string): GoType {
    const done = this.named.get(name);
    if (done) return done;
    const special = SPECIAL[name];
    if (special) return special;
    const s = this.schemas[name];
    if (!s) throw new Error(`OpenAPI data: no schema ${name}`);
    if (RAW_JSON.has(name) || (!s.type && !s.properties && !s.$ref && !s.allOf)) {
      const raw: ScalarType = { t: 'raw', go: goName(name) };
      this.named.set(name, raw);
      return raw;
    }
    if (s.type === 'object' && !s.additionalProperties) {
      // Registered before its fields are compiled, so self-references (JSONSchemaProps) resolve.
      const st: StructType = {
        t: 'struct',
        go: goName(name),
        name: name.split('.').at(-1)!,
        fields: new Map(),
      };
      this.named.set(name, st);
      for (const [k, p] of Object.entries((s.properties ?? {}) as Record<string, any>)) {
        st.fields.set(k, this.field(p));
      }
      return st;
    }
    const t = this.node(s);
    this.named.set(name, t);
    return t;
  }

  private field(p: any): FieldInfo {
    const f: FieldInfo = {
      type: this.node(p),
      strategy: p['x-kubernetes-patch-strategy'] ? String(p['x-kubernetes-patch-strategy']).split(',') : [],
    };
    if (p['x-kubernetes-patch-merge-key']) f.mergeKey = p['x-kubernetes-patch-merge-key'];
    return f;
  }

  node(s: any): GoType {
    if (s.$ref) return this.ref(String(s.$ref).slice(REF.length));
    if (s.allOf?.length === 1 && s.allOf[0].$ref) return this.node(s.allOf[0]);
    switch (s.type) {
      case 'string':
        return s.format === 'byte' ? { t: 'bytes', go: '[]uint8' } : { t: 'string', go: 'string' };
      case 'integer':
        return s.format === 'int32' ? { t: 'int32', go: 'int32' } : { t: 'int64', go: 'int64' };
      case 'number':
        return { t: 'float64', go: 'float64' };
      case 'boolean':
        return { t: 'bool', go: 'bool' };
      case 'array': {
        const elem = this.node(s.items ?? {});
        return { t: 'slice', go: `[]${elem.go}`, elem };
      }
      case 'object': {
        if (s.additionalProperties && typeof s.additionalProperties === 'object') {
          const elem = this.node(s.additionalProperties);
          return { t: 'map', go: `map[string]${elem.go}`, elem };
        }
        return { t: 'raw', go: 'map[string]interface {}' };
      }
      default:
        return { t: 'raw', go: 'interface {}' };
    }
  }
}

interface KindEntry {
  doc: string;
  schema: string;
}

let byGvk: Map<string, KindEntry> | undefined;
const compilers = new Map<string, Compiler>();
const compiled = new Map<string, StructType | null>();

const gvkKey = (group: string, version: string, kind: string): string => `${group}/${version}/${kind}`;

function index(): Map<string, KindEntry> {
  if (byGvk) return byGvk;
  byGvk = new Map();
  for (const [doc, d] of Object.entries(builtinOpenApi().documents)) {
    for (const [schema, s] of Object.entries(d.components.schemas)) {
      for (const g of s['x-kubernetes-group-version-kind'] ?? [])
        if (!byGvk.has(gvkKey(g.group, g.version, g.kind)))
          byGvk.set(gvkKey(g.group, g.version, g.kind), { doc, schema });
    }
  }
  return byGvk;
}

/** The upstream schema name and document of a built-in kind, if the data has it. */
export function builtinSchemaRef(group: string, version: string, kind: string): KindEntry | undefined {
  return index().get(gvkKey(group, version, kind));
}

/** The Go-type tree of a built-in kind (compiled on first use, then cached), or undefined when the data lacks it. */
export function builtinType(group: string, version: string, kind: string): StructType | undefined {
  const key = gvkKey(group, version, kind);
  const hit = compiled.get(key);
  if (hit !== undefined) return hit ?? undefined;
  const entry = index().get(key);
  let t: StructType | null = null;
  if (entry) {
    let c = compilers.get(entry.doc);
    if (!c) {
      c = new Compiler(builtinOpenApi().documents[entry.doc]!.components.schemas);
      compilers.set(entry.doc, c);
    }
    const r = c.ref(entry.schema);
    if (r.t === 'struct') t = r;
  }
  compiled.set(key, t);
  return t ?? undefined;
}
