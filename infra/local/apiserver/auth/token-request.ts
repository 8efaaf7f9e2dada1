/**
 * POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token (`kubectl create token`): the
 * TokenRequest subresource as pkg/registry/core/serviceaccount/storage/token.go TokenREST.Create
 * answers it — audiences default to the API server's, expirationSeconds to 3600 (at least 10
 * minutes, at most 2^32 s), an optional boundObjectRef to a Secret or Node of record (its uid
 * checked), and a signed token whose expiry the status repeats.
 */
import { randomUUID } from 'node:crypto';
import type { Rest } from '../rest.ts';
import { badRequest, conflict, fieldError, invalid, notFound } from '../status.ts';
import type { BoundObject, ServiceAccountTokens } from './service-account-tokens.ts';

const TOKEN_REQUEST = { kind: 'TokenRequest', group: 'authentication.k8s.io' };
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** schema.FromAPIVersionAndKind(...).String(), for the "cannot bind" message. */
function gvkString(apiVersion: string, kind: string): string {
  const i = apiVersion.indexOf('/');
  const [group, version] = i < 0 ? ['', apiVersion] : [apiVersion.slice(0, i), apiVersion.slice(i + 1)];
  return `${group}/${version}, Kind=${kind}`;
}

/** The object a boundObjectRef names, as it is on record (404 when it is not). */
function boundObject(rest: Rest, ns: string, ref: any): BoundObject {
  const apiVersion = String(ref.apiVersion ?? '');
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const kind = String(ref.kind ?? '');
  const refName = String(ref.name ?? '');
  let obj: any;
  if (group === '' && kind === 'Secret') {
    obj = rest.store.get('/secrets', ns, refName);
    if (!obj) throw notFound({ plural: 'secrets', group: '' }, refName);
  } else if (group === '' && kind === 'Node') {
    obj = rest.store.get('/nodes', undefined, refName);
    if (!obj) throw notFound({ plural: 'nodes', group: '' }, refName);
  } else if (group === '' && kind === 'Pod') {
    // Pods are not served, so none exists to bind to: the real server's answer for a missing pod.
    throw notFound({ plural: 'pods', group: '' }, refName);
  } else {
    throw badRequest(`cannot bind token to object of type ${gvkString(apiVersion, kind)}`);
  }
  if (ref.uid && ref.uid !== obj.metadata.uid)
    throw conflict(
      { plural: kind, group },
      refName,
      `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  return { kind, name: refName, uid: obj.metadata.uid } as BoundObject;
}

export async function createTokenRequest(
  rest: Rest,
  tokens: ServiceAccountTokens,
  ns: string,
  name: string,
  body: any,
): Promise<unknown> {
  const req = body && typeof body === 'object' ? body : {};
  const meta = req.metadata ?? {};
  if (meta.name && meta.name !== name)
    throw invalid(TOKEN_REQUEST, name, [
      fieldError('Invalid', 'metadata.name', 'must match the service account name if specified', meta.name),
    ]);
  if (meta.namespace && meta.namespace !== ns)
    throw invalid(TOKEN_REQUEST, name, [
      fieldError(
        'Invalid',
        'metadata.namespace',
        'must match the service account namespace if specified',
        meta.namespace,
      ),
    ]);
  const sa = rest.store.get('/serviceaccounts', ns, name);
  if (!sa) throw notFound({ plural: 'serviceaccounts', group: '' }, name);
  const spec = req.spec ?? {};
  const audiences: string[] =
    Array.isArray(spec.audiences) && spec.audiences.length
      ? spec.audiences.map(String)
      : [...tokens.apiAudiences];
  const expirationSeconds = spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  if (!Number.isSafeInteger(expirationSeconds))
    throw badRequest(
      `TokenRequest in version "v1" cannot be handled as a TokenRequest: spec.expirationSeconds must be an integer`,
    );
  const nowMs = Date.parse(rest.clock.timestamp());
  const errs = [];
  if (expirationSeconds < MIN_EXPIRATION_SECONDS)
    errs.push(
      fieldError(
        'Invalid',
        'spec.expirationSeconds',
        'may not specify a duration less than 10 minutes',
        expirationSeconds,
      ),
    );
  if (expirationSeconds > 2 ** 32)
    errs.push(
      fieldError(
        'Invalid',
        'spec.expirationSeconds',
        'may not specify a duration larger than 2^32 seconds',
        expirationSeconds,
      ),
    );
  if (errs.length) throw invalid(TOKEN_REQUEST, '', errs);
  const ref = spec.boundObjectRef ?? null;
  const bound = ref ? boundObject(rest, ns, ref) : undefined;
  const token = await tokens.sign({
    namespace: ns,
    name,
    uid: sa.metadata.uid,
    audiences,
    nowMs,
    expirationSeconds,
    bound,
    jti: randomUUID(),
  });
  return {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name, namespace: ns, creationTimestamp: rfc3339(nowMs) },
    spec: { audiences, expirationSeconds, boundObjectRef: ref },
    status: { token, expirationTimestamp: rfc3339(nowMs + expirationSeconds * 1000) },
  };
}
