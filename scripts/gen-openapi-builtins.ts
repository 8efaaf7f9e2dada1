/**
 * Regenerates infra/local/openapi/kubernetes.json: the OpenAPI v3 schemas of the built-in kinds
 * the embedded API server serves, trimmed from upstream's `api/openapi-spec/v3` documents
 * (kubernetes/kubernetes, one file per group version) to those kinds and what they reference.
 * The server reads them for field validation (unknown fields, types), strategic merge patch
 * (patch strategies, merge keys) and `kubectl explain`; nothing in them is written by hand.
 *
 *   node scripts/gen-openapi-builtins.ts --from <folder or URL of api/openapi-spec/v3> --ref <tag>
 *   node scripts/gen-openapi-builtins.ts --check   (exit 1 when the committed file is not what
 *                                                    the committed source documents give)
 *
 * Default source: https://raw.githubusercontent.com/kubernetes/kubernetes/v1.32.0/api/openapi-spec/v3
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DEFAULT_REF = 'v1.32.0';
const DEFAULT_FROM = `https://raw.githubusercontent.com/kubernetes/kubernetes/${DEFAULT_REF}/api/openapi-spec/v3`;
export const OUTPUT = 'infra/local/openapi/kubernetes.json';

/**
 * Upstream document (named by its URL group version, `api/v1` or `apis/<group>/<version>`) → the
 * kinds kept, as `Kind` (of the document's group version) or `group/version/Kind` (a subresource's
 * kind documented there). The kinds the server serves, plus the few it answers with (Scale) or
 * that the other parts of issue 18 add (TokenRequest, SelfSubjectReview, SelfSubjectRulesReview).
 */
export const KINDS: Record<string, string[]> = {
  'api/v1': [
    'ConfigMap',
    'Event',
    'Namespace',
    'Node',
    'Secret',
    'ServiceAccount',
    'authentication.k8s.io/v1/TokenRequest',
    'autoscaling/v1/Scale',
  ],
  'apis/apiextensions.k8s.io/v1': ['CustomResourceDefinition'],
  'apis/authentication.k8s.io/v1': ['SelfSubjectReview', 'TokenReview'],
  'apis/authorization.k8s.io/v1': [
    'LocalSubjectAccessReview',
    'SelfSubjectAccessReview',
    'SelfSubjectRulesReview',
    'SubjectAccessReview',
  ],
  'apis/coordination.k8s.io/v1': ['Lease'],
  'apis/rbac.authorization.k8s.io/v1': ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'],
};

/** `apis/rbac.authorization.k8s.io/v1` → upstream's file name `apis__rbac.authorization.k8s.io__v1_openapi.json`. */
export const upstreamFile = (gv: string): string => `${gv.split('/').join('__')}_openapi.json`;

type Doc = { openapi: string; info: unknown; components: { schemas: Record<string, any> } };

/** The names of the schemas `roots` reference, transitively (roots included). */
function reachable(schemas: Record<string, any>, roots: string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    if (!schemas[name]) throw new Error(`dangling $ref: ${name}`);
    seen.add(name);
    walk(schemas[name]);
  };
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === '$ref' && typeof x === 'string') visit(x.replace('#/components/schemas/', ''));
        else walk(x);
      }
    }
  };
  for (const r of roots) visit(r);
  return seen;
}

/** Keys sorted at every level, as upstream writes its documents (stable diffs on regeneration). */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** One upstream document trimmed to `kinds` of group version `gv`. */
export function trim(doc: Doc, gv: string, kinds: string[]): Doc {
  const schemas = doc.components.schemas;
  const [docGroup, docVersion] = gv.startsWith('api/') ? ['', gv.slice(4)] : gv.slice(5).split('/');
  const roots = kinds.map((k) => {
    const parts = k.split('/');
    const kind = parts.pop()!;
    const [group, version] = parts.length === 2 ? parts : [docGroup, docVersion];
    const name = Object.keys(schemas).find((n) =>
      (schemas[n]['x-kubernetes-group-version-kind'] ?? []).some(
        (g: any) => g.group === group && g.version === version && g.kind === kind,
      ),
    );
    if (!name) throw new Error(`${gv}: no schema for kind ${k}`);
    return name;
  });
  const keep = [...reachable(schemas, roots)].sort();
  return {
    openapi: doc.openapi,
    info: doc.info,
    components: { schemas: Object.fromEntries(keep.map((n) => [n, sorted(schemas[n])])) },
  };
}

async function readDoc(from: string, gv: string): Promise<Doc> {
  const where = `${from.replace(/\/+$/, '')}/${upstreamFile(gv)}`;
  if (/^https?:\/\//.test(from)) {
    const res = await fetch(where);
    if (!res.ok) throw new Error(`GET ${where}: ${res.status}`);
    return (await res.json()) as Doc;
  }
  return JSON.parse(readFileSync(where, 'utf8')) as Doc;
}

export async function generate(from: string, ref: string): Promise<string> {
  const documents: Record<string, Doc> = {};
  for (const gv of Object.keys(KINDS).sort()) documents[gv] = trim(await readDoc(from, gv), gv, KINDS[gv]!);
  const out = {
    source: {
      repository: 'kubernetes/kubernetes',
      path: 'api/openapi-spec/v3',
      ref,
      generator: 'scripts/gen-openapi-builtins.ts (trimmed to the kinds the embedded API server serves)',
    },
    documents,
  };
  return `${JSON.stringify(out, null, 1)}\n`;
}

function arg(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

async function main(argv: string[]): Promise<number> {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const from = arg(argv, '--from') ?? DEFAULT_FROM;
  const ref = arg(argv, '--ref') ?? DEFAULT_REF;
  const text = await generate(from, ref);
  const target = join(root, OUTPUT);
  if (argv.includes('--check')) {
    if (readFileSync(target, 'utf8') === text) return 0;
    console.error(`${OUTPUT} differs from what ${from} gives: run node scripts/gen-openapi-builtins.ts`);
    return 1;
  }
  writeFileSync(target, text);
  console.log(`wrote ${OUTPUT} (${(text.length / 1024).toFixed(0)} KiB) from ${from} at ${ref}`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
