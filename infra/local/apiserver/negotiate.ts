/**
 * Content negotiation of a response's representation, as kube-apiserver's (k8s.io/apiserver
 * endpoints/handlers/negotiation and handlers/response.go): the Accept header's clauses, by
 * quality then in order; the first a server can produce wins. A clause with `as=<Kind>;g=meta.k8s.io;v=<v1|v1beta1>`
 * asks for a transformation (Table, PartialObjectMetadata, PartialObjectMetadataList); one with an
 * `as` the server does not offer is passed over, so a client's plain `application/json` fallback
 * still applies. Nothing acceptable at all is 406, never a silently different body.
 *
 * Bodies are always JSON here (YAML and protobuf Accept clauses get JSON, as before).
 */
import { ApiError } from './status.ts';

export type Transform = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

export type Representation = { as: 'Object' } | { as: Transform; version: 'v1' | 'v1beta1' };

const OBJECT: Representation = { as: 'Object' };
const MEDIA_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
const RANGES = new Set([...MEDIA_TYPES, '*/*', 'application/*']);
const TRANSFORMS: readonly Transform[] = ['Table', 'PartialObjectMetadata', 'PartialObjectMetadataList'];
const isTransform = (as: string): as is Transform => (TRANSFORMS as readonly string[]).includes(as);

interface Clause {
  type: string;
  params: Map<string, string>;
  q: number;
  at: number;
}

function clauses(accept: string): Clause[] {
  const out: Clause[] = [];
  accept.split(',').forEach((part, at) => {
    const [type, ...rest] = part.split(';').map((s) => s.trim());
    if (!type) return;
    const params = new Map<string, string>();
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq > 0) params.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim());
    }
    const q = params.has('q') ? Number(params.get('q')) : 1;
    out.push({ type: type.toLowerCase(), params, q: Number.isFinite(q) ? q : 0, at });
  });
  return out.sort((a, b) => b.q - a.q || a.at - b.at);
}

export const notAcceptable = (message: string): ApiError => new ApiError(406, 'NotAcceptable', message);

/** What the Accept header asks for; throws 406 when the server can produce none of it. */
export function negotiate(accept: string | undefined): Representation {
  // What client-node and the Python client send on every request: no parse on the hot path.
  if (accept === undefined || accept === 'application/json' || !accept.trim()) return OBJECT;
  for (const c of clauses(accept)) {
    if (c.q <= 0 || !RANGES.has(c.type)) continue;
    const as = c.params.get('as');
    if (as === undefined) return OBJECT;
    const v = c.params.get('v');
    if (isTransform(as) && c.params.get('g') === 'meta.k8s.io' && (v === 'v1' || v === 'v1beta1'))
      return { as, version: v };
  }
  throw notAcceptable(`only the following media types are accepted: ${MEDIA_TYPES.join(', ')}`);
}

/** A single object as PartialObjectMetadata: its metadata whole, managedFields included. */
export function asPartialObjectMetadata(obj: any, version: string): Record<string, unknown> {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata };
}

export function asPartialObjectMetadataList(
  items: readonly any[],
  version: string,
  meta: Record<string, unknown>,
): Record<string, unknown> {
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: `meta.k8s.io/${version}`,
    metadata: meta,
    items: items.map((o) => asPartialObjectMetadata(o, version)),
  };
}

export const listAskedForObject = (): ApiError =>
  notAcceptable('you requested PartialObjectMetadata, but the requested object is a list');

export const objectAskedForList = (): ApiError =>
  notAcceptable('you requested PartialObjectMetadataList, but the requested object is not a list');
