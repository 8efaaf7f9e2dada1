import { createHash } from 'node:crypto';
import { builtinOpenApi, builtinSchemaRef } from './builtin-types.ts';
import type { KindRegistry, ServedKind } from './kinds.ts';
/**
 * /openapi/v2 as much as kubectl needs. kubectl asks for the protobuf form; an empty protobuf
 * message is a valid empty openapi_v2.Document, in which no kind is found, so kubectl skips
 * client-side schema validation (the server validates).
 */
export function openapiV2(accept: string | undefined): { type: string; body: string | Buffer } {
  if (accept?.includes('protobuf')) {
    return { type: 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf', body: Buffer.alloc(0) };
  }
  return {
    type: 'application/json',
    body: JSON.stringify({
      swagger: '2.0',
      info: { title: 'Kubernetes', version: 'v1.32.0+metal3fn' },
      paths: {},
      definitions: {},
    }),
  };
}

/**
 * /openapi/v3: a root listing every group version and, per group version, a document with the
 * kinds' schemas (a CRD's openAPIV3Schema; for built-in kinds upstream's own, from the OpenAPI
 * data of builtin-types.ts) tagged with x-kubernetes-group-version-kind, and each kind's PATCH
 * operation declaring the fieldValidation parameter and the patch types it accepts. That is what
 * `kubectl explain` reads, what tells kubectl's validation that the server checks fields itself
 * (fieldValidation=Strict), and what `kubectl apply` computes strategic merge patches from.
 */
export function openapiV3Root(kinds: KindRegistry): object {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const [group, versions] of kinds.groups()) {
    for (const v of versions) {
      const gv = group ? `apis/${group}/${v}` : `api/${v}`;
      paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${hashOf(kinds, group, v)}` };
    }
  }
  return { paths };
}

/**
 * The documents' hash, which clients cache them by (kubectl under ~/.kube/cache): it changes with
 * a CRD's schema, the built-in data's version and the layout of the documents (DOCUMENT_LAYOUT).
 */
const DOCUMENT_LAYOUT = 'upstream-builtins+patch-types';
function hashOf(kinds: KindRegistry, group: string, version: string): string {
  const h = createHash('sha256');
  h.update(DOCUMENT_LAYOUT);
  for (const k of kinds.all()) {
    if (k.group !== group || k.version !== version) continue;
    const upstream = k.builtin ? builtinSchemaRef(k.group, k.version, k.kind) : undefined;
    h.update(JSON.stringify([k.kind, upstream ? builtinOpenApi().source.ref : (k.schema ?? null)]));
  }
  return h.digest('hex').slice(0, 32).toUpperCase();
}

const schemaName = (k: ServedKind): string =>
  `${k.group ? k.group.split('.').reverse().join('.') : 'io.k8s.api.core'}.${k.version}.${k.kind}`;

export function openapiV3Group(kinds: KindRegistry, group: string, version: string): object | undefined {
  const ks = kinds.all().filter((k) => k.group === group && k.version === version);
  if (!ks.length) return undefined;
  const schemas: Record<string, unknown> = {};
  const paths: Record<string, unknown> = {};
  for (const k of ks) {
    const gvk = { group: k.group, version: k.version, kind: k.kind };
    const upstream = k.builtin ? builtinSchemaRef(k.group, k.version, k.kind) : undefined;
    const name = upstream?.schema ?? schemaName(k);
    if (upstream) Object.assign(schemas, builtinOpenApi().documents[upstream.doc]!.components.schemas);
    const base = k.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    if (!upstream)
      schemas[name] = {
        ...base,
        description: base.description ?? `${k.kind} (${k.group ? `${k.group}/` : ''}${k.version})`,
        properties: {
          apiVersion: {
            type: 'string',
            description: 'APIVersion defines the versioned schema of this representation of an object.',
          },
          kind: {
            type: 'string',
            description: 'Kind is a string value representing the REST resource this object represents.',
          },
          metadata: { type: 'object', description: "Standard object's metadata." },
          ...(base.properties ?? {}),
        },
        'x-kubernetes-group-version-kind': [gvk],
      };
    const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const path = `${prefix}${k.namespaced ? '/namespaces/{namespace}' : ''}/${k.plural}/{name}`;
    const op = (verb: string) => ({
      operationId: `${verb}${k.kind}`,
      'x-kubernetes-action': verb,
      'x-kubernetes-group-version-kind': gvk,
      parameters: [
        { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
        { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
        { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
      ],
      responses: {
        '200': {
          description: 'OK',
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } },
        },
      },
    });
    const patchTypes = [
      'application/apply-patch+yaml',
      'application/json-patch+json',
      'application/merge-patch+json',
      ...(k.strategic ? ['application/strategic-merge-patch+json'] : []),
    ];
    const patch = {
      ...op('patch'),
      requestBody: {
        content: Object.fromEntries(patchTypes.map((t) => [t, { schema: { type: 'object' } }])),
        required: true,
      },
    };
    paths[path] = { get: op('get'), put: op('put'), patch, delete: op('delete') };
    paths[`${prefix}${k.namespaced ? '/namespaces/{namespace}' : ''}/${k.plural}`] = { post: op('post') };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.0+metal3fn' },
    paths,
    components: { schemas },
  };
}
