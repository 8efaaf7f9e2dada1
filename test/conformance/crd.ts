/** A one-version CustomResourceDefinition of a case's own group (named after its namespace). */
import { envelopeOf, type Resource } from '../../shared/api/resources.ts';

export function caseCrd(group: string, kind: string, plural: string, version: Record<string, unknown>) {
  const resource: Resource = envelopeOf({
    group,
    version: 'v1',
    kind,
    plural,
    namespaced: true,
    statusSubresource: Boolean((version.subresources as { status?: object } | undefined)?.status),
  });
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition' as const,
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, ...version }],
    },
  };
  return { crd, resource };
}
