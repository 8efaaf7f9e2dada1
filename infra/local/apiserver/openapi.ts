import { createHash } from 'node:crypto';
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
 * kinds' schemas (a CRD's openAPIV3Schema; built-ins have a permissive one) tagged with
 * x-kubernetes-group-version-kind, and each kind's PATCH operation declaring the fieldValidation
 * parameter. That is what `kubectl explain` reads, and what tells kubectl's validation that the
 * server checks fields itself (fieldValidation=Strict), so it skips client-side validation.
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

function hashOf(kinds: KindRegistry, group: string, version: string): string {
  const h = createHash('sha256');
  for (const k of kinds.all())
    if (k.group === group && k.version === version) h.update(JSON.stringify([k.kind, k.schema ?? null]));
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
    const base = k.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    schemas[schemaName(k)] = {
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
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${schemaName(k)}` } } },
        },
      },
    });
    paths[path] = { get: op('get'), put: op('put'), patch: op('patch'), delete: op('delete') };
    paths[`${prefix}${k.namespaced ? '/namespaces/{namespace}' : ''}/${k.plural}`] = { post: op('post') };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.0+metal3fn' },
    paths,
    components: { schemas },
  };
}
