import { isRecord } from '../json.ts';
import { INFRA_GROUP } from '../kinds.ts';
import { CRD_DEFINITIONS, type CrdDefinition } from './definitions.ts';
import { type SchemaNode, structuralSchemaOf } from './structural.ts';

/** Cluster API contract label: the CRD versions that implement contract v1beta1. */
export const CONTRACT_LABEL = { 'cluster.x-k8s.io/v1beta1': 'v1beta1' } as const;

/** The openAPIV3Schema of a kind: the zod object schema, with the envelope Kubernetes owns left to it. */
export function openAPISchemaOf(def: CrdDefinition): SchemaNode {
  const schema = structuralSchemaOf(def.schema, { prune: def.unknownFields === 'prune' });
  const properties: Record<string, SchemaNode> = {};
  if (isRecord(schema.properties))
    for (const [k, v] of Object.entries(schema.properties)) properties[k] = isRecord(v) ? v : {};
  properties.apiVersion = { type: 'string', description: 'APIVersion of this representation of the object.' };
  properties.kind = { type: 'string', description: 'Kind of the REST resource this object represents.' };
  properties.metadata = { type: 'object' };
  if (def.specValidations && properties.spec) {
    properties.spec = { ...properties.spec, 'x-kubernetes-validations': def.specValidations };
  }
  const required = (Array.isArray(schema.required) ? schema.required : []).filter(
    (k): k is string => typeof k === 'string' && k !== 'metadata' && k !== 'kind',
  );
  const root: SchemaNode = { type: 'object', description: def.description, properties };
  if (required.length > 0) root.required = required;
  return root;
}

export function crdOf(def: CrdDefinition): SchemaNode {
  const { resource: r } = def;
  const names: SchemaNode = {
    kind: r.kind,
    listKind: `${r.kind}List`,
    plural: r.plural,
    singular: r.kind.toLowerCase(),
  };
  if (def.shortNames.length > 0) names.shortNames = def.shortNames;
  if (def.categories.length > 0) names.categories = def.categories;
  const version: SchemaNode = {
    name: r.version,
    served: true,
    storage: true,
    schema: { openAPIV3Schema: openAPISchemaOf(def) },
  };
  if (r.statusSubresource) version.subresources = { status: {} };
  if (def.scale) version.subresources = { ...(version.subresources ?? {}), scale: def.scale };
  if (def.columns.length > 0) version.additionalPrinterColumns = def.columns;
  if (def.selectableFields?.length)
    version.selectableFields = def.selectableFields.map((jsonPath) => ({ jsonPath }));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${r.plural}.${r.group}`,
      ...(def.owner === 'ours' && r.group === INFRA_GROUP ? { labels: { ...CONTRACT_LABEL } } : {}),
    },
    spec: {
      group: r.group,
      names,
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      versions: [version],
    },
  };
}

/** Where each CRD is written, relative to the repository root. */
export function crdPathOf(def: CrdDefinition): string {
  const dir = def.owner === 'ours' ? 'infra/crds' : 'infra/local/crds';
  return `${dir}/${def.resource.plural}.${def.resource.group}.yaml`;
}

export function allCrds(): { path: string; crd: SchemaNode }[] {
  return CRD_DEFINITIONS.map((def) => ({ path: crdPathOf(def), crd: crdOf(def) }));
}

/**
 * For the kinds others own that we serve a controller for (the IPAM kinds: we allocate in place of
 * ip-address-manager), a JSON patch adding our selectableFields to the CRDs a cluster already has
 * from their project (ADR 010): `kubectl patch crd <name> --type=json --patch-file <file>`.
 */
export function selectableFieldPatches(): { path: string; crd: string; patch: object[] }[] {
  return CRD_DEFINITIONS.filter((def) => def.owner === 'local' && def.selectableFields?.length).map(
    (def) => ({
      path: `infra/ipam/${def.resource.plural}.${def.resource.group}.selectable-fields.json`,
      crd: `${def.resource.plural}.${def.resource.group}`,
      patch: [
        {
          op: 'add',
          path: '/spec/versions/0/selectableFields',
          value: def.selectableFields!.map((jsonPath) => ({ jsonPath })),
        },
      ],
    }),
  );
}
