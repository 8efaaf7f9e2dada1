/**
 * The HTTP face of the server (node:http, no framework in the hot path): URL → kind and verb,
 * authentication and authorization, fault injection, body decoding, content negotiation (the
 * object, or a meta.k8s.io Table / PartialObjectMetadata[List]: negotiate.ts), the REST call, the
 * request log. Watches stream newline-delimited JSON.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from './auth/identity.ts';
import { duplicateFields } from './decode.ts';
import type { FaultInjector } from './faults.ts';
import { fieldValidationParam } from './field-validation.ts';
import type { Controllers } from './gc.ts';
import { bodyText, boolParam, decode, mediaType, readBody, send, sendError } from './http-util.ts';
import { apiVersionOf, type ServedKind } from './kinds.ts';
import { awaitFreshness, listFreshnessTarget } from './list-rv.ts';
import type { RequestLog } from './log.ts';
import type { TextCache } from './lru.ts';
import {
  asPartialObjectMetadata,
  asPartialObjectMetadataList,
  listAskedForObject,
  negotiate,
  objectAskedForList,
  type Representation,
} from './negotiate.ts';
import { serveNonResource } from './nonresource.ts';
import type { DeleteBody, Rest } from './rest.ts';
import { getScale, writeScale } from './scale.ts';
import { serveWatch } from './serve-watch.ts';
import { deletedStatus, forbidden, methodNotAllowed, notFoundPath, type StatusBody } from './status.ts';
import { type IncludeObject, toTable } from './table.ts';
import type { WatchLimits, WatchStream } from './watch.ts';

export type { UserInfo };

export interface RequestInfo {
  verb: string;
  kind?: ServedKind;
  resource: string;
  group: string;
  subresource?: string | undefined;
  namespace?: string | undefined;
  name?: string | undefined;
  path: string;
}

export interface ServerDeps {
  rest: Rest;
  controllers: Controllers;
  faults: FaultInjector;
  log: RequestLog;
  watchLimits: WatchLimits;
  /** Serialized watch events, shared by the watchers (bounded). */
  watchLines: TextCache;
  /** Serialized stored objects for GET and LIST (bounded). */
  objectJson: TextCache;
  /** Who is asking, impersonation applied; throws the 401/403 (or the filter's 500) otherwise. */
  authenticate(req: IncomingMessage): Promise<UserInfo>;
  /** A Forbidden message, or undefined when allowed. */
  authorize(user: UserInfo, info: RequestInfo): string | undefined;
  /** Answers a create-only review kind (access, rules, self-subject and token reviews). */
  review(kind: ServedKind, namespace: string | undefined, body: any, requester: UserInfo): Promise<unknown>;
  /** A subresource other than status that the server serves for create (serviceaccounts/token). */
  subresource(
    kind: ServedKind,
    sub: string,
  ): { create(ns: string, name: string, body: unknown): Promise<unknown> } | undefined;
  /** Non-resource documents served by name (OIDC discovery), or undefined. */
  wellKnown(path: string): Promise<{ headers: Record<string, string>; body: string } | undefined>;
  serverAddress(): string;
  openapiV2(accept: string | undefined): { type: string; body: string | Buffer } | undefined;
  watches: Set<WatchStream>;
}

/** Splits a resource URL into group/version/namespace/plural/name/subresource. */
function parseResourcePath(segs: string[]):
  | {
      group: string;
      version: string;
      namespace?: string;
      plural: string;
      name?: string;
      sub?: string;
      extra: boolean;
    }
  | undefined {
  let group: string;
  let version: string;
  let rest: string[];
  if (segs[0] === 'api' && segs.length >= 3) {
    group = '';
    version = segs[1]!;
    rest = segs.slice(2);
  } else if (segs[0] === 'apis' && segs.length >= 4) {
    group = segs[1]!;
    version = segs[2]!;
    rest = segs.slice(3);
  } else return undefined;
  if (
    rest[0] === 'namespaces' &&
    rest.length >= 3 &&
    !(rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize'))
  ) {
    return {
      group,
      version,
      namespace: rest[1]!,
      plural: rest[2]!,
      name: rest[3],
      sub: rest[4],
      extra: rest.length > 5,
    };
  }
  return { group, version, plural: rest[0]!, name: rest[1], sub: rest[2], extra: rest.length > 3 };
}

export function createRequestHandler(deps: ServerDeps) {
  const { rest, faults, log } = deps;

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'http://local');
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    const q = url.searchParams;
    const info: RequestInfo = { verb: req.method?.toLowerCase() ?? 'get', resource: path, group: '', path };
    let user: UserInfo = { user: 'system:anonymous', groups: [] };
    let isWatch = false;
    let requestBytes = 0;
    res.on('finish', () => {
      if (isWatch) return;
      log.record({
        verb: info.verb,
        resource: info.subresource ? `${info.resource}/${info.subresource}` : info.resource,
        namespace: info.namespace,
        name: info.name,
        method: req.method ?? 'GET',
        path: req.url ?? path,
        user: user.user,
        status: res.statusCode,
        ms: performance.now() - started,
        requestBytes,
      });
    });
    try {
      user = await deps.authenticate(req);
      const segs = path.split('/').filter(Boolean).map(decodeURIComponent);
      const parsed = parseResourcePath(segs);
      if (!parsed) {
        info.verb = req.method === 'GET' ? 'get' : (req.method?.toLowerCase() ?? 'get');
        const denied = deps.authorize(user, info);
        if (denied) throw forbidden(denied);
        const doc = req.method === 'GET' ? await deps.wellKnown(path) : undefined;
        if (doc) {
          res.writeHead(200, doc.headers);
          res.end(doc.body);
          return;
        }
        return serveNonResource(req, res, path, deps);
      }
      const kind = rest.kinds.get(parsed.group, parsed.version, parsed.plural);
      if (!kind || parsed.extra || (parsed.namespace !== undefined && !kind.namespaced)) {
        if (!parsed.name && parsed.namespace === undefined && !parsed.sub) {
          // unknown resource in a known group/version still is a 404 with the generic message
        }
        throw notFoundPath();
      }
      const custom = parsed.sub !== undefined ? deps.subresource(kind, parsed.sub) : undefined;
      if (
        parsed.sub !== undefined &&
        !custom &&
        !(parsed.sub === 'status' && kind.status) &&
        !(parsed.sub === 'scale' && kind.scale)
      )
        throw notFoundPath();
      const method = req.method ?? 'GET';
      const name = parsed.name;
      const ns = kind.namespaced ? parsed.namespace : undefined;
      let verb: string;
      if (method === 'GET') verb = name ? 'get' : boolParam(q, 'watch') ? 'watch' : 'list';
      else if (method === 'POST') verb = 'create';
      else if (method === 'PUT') verb = 'update';
      else if (method === 'PATCH') verb = 'patch';
      else if (method === 'DELETE') verb = name ? 'delete' : 'deletecollection';
      else throw methodNotAllowed();
      if (custom ? verb !== 'create' || !name : verb === 'create' && name) throw methodNotAllowed();
      if ((verb === 'update' || verb === 'patch') && !name) throw methodNotAllowed();
      if (parsed.sub && !custom && (verb === 'delete' || verb === 'create')) throw methodNotAllowed();
      Object.assign(info, {
        verb,
        kind,
        resource: kind.plural,
        group: kind.group,
        subresource: parsed.sub,
        namespace: ns,
        name,
      });
      const denied = deps.authorize(user, info);
      if (denied) throw forbidden(denied, kind, name);
      const fault = faults.decide(info);
      if (fault.latencyMs > 0) await new Promise((r) => setTimeout(r, fault.latencyMs));
      // A 410 on a watch arrives the way a real server sends it: HTTP 200, then an ERROR event.
      const watchExpiry = verb === 'watch' && fault.error?.code === 410 ? fault.error : undefined;
      if (fault.error && !watchExpiry) throw fault.error;
      if (kind.virtual && verb !== 'create') throw methodNotAllowed();
      const rep = negotiate(req.headers.accept);
      const table = rep.as === 'Table';
      const include = (q.get('includeObject') ?? 'Metadata') as IncludeObject;
      // A single object's body in the representation asked for (writes' answers too, as kube-apiserver's).
      const one = (obj: any): unknown => represent(rest, kind, obj, rep, include);
      const dryRun = q.getAll('dryRun').includes('All');
      const fieldManager = q.get('fieldManager') ?? undefined;

      if (verb === 'watch') {
        // Logged when it opens (ms = time to open), so counts show watches as soon as they exist.
        isWatch = true;
        log.record({
          verb,
          resource: kind.plural,
          namespace: ns,
          method,
          path: req.url ?? path,
          user: user.user,
          status: 200,
          ms: performance.now() - started,
        });
        if (rep.as === 'PartialObjectMetadataList') throw objectAskedForList();
        return serveWatch(
          req,
          res,
          deps,
          kind,
          ns,
          q,
          rep.as === 'Object'
            ? undefined
            : rep.as === 'Table'
              ? { table: include }
              : { metadata: rep.version },
          fault.dropWatchAfter,
          watchExpiry,
        );
      }
      if (verb === 'get' && parsed.sub === 'scale') return send(res, 200, getScale(rest, kind, ns, name!));
      if (verb === 'get') {
        await awaitFreshness(rest.store, q.get('resourceVersion'));
        const obj = rest.get(kind, ns, name!);
        if (rep.as === 'Object') return send(res, 200, getJson(deps.objectJson, rest, kind, obj));
        return send(res, 200, one(obj));
      }
      if (verb === 'list') {
        const limit = q.get('limit');
        const query = {
          labelSelector: q.get('labelSelector'),
          fieldSelector: q.get('fieldSelector'),
          limit: limit ? Number(limit) : undefined,
          continue: q.get('continue'),
          resourceVersion: q.get('resourceVersion'),
          resourceVersionMatch: q.get('resourceVersionMatch'),
          sendInitialEvents: q.get('sendInitialEvents'),
        };
        await awaitFreshness(rest.store, listFreshnessTarget(query));
        const r = rest.list(kind, ns, query);
        const meta: Record<string, unknown> = { resourceVersion: r.resourceVersion };
        if (r.continue) meta.continue = r.continue;
        if (r.remainingItemCount !== undefined) meta.remainingItemCount = r.remainingItemCount;
        if (rep.as === 'PartialObjectMetadata') throw listAskedForObject();
        if (rep.as === 'PartialObjectMetadataList')
          return send(res, 200, asPartialObjectMetadataList(r.items, rep.version, meta));
        if (table)
          return send(
            res,
            200,
            toTable(
              kind,
              r.items.map((o) => rest.view(kind, o)),
              meta,
              include,
            ),
          );
        return send(res, 200, listJson(deps.objectJson, rest, kind, r.items, meta));
      }
      const contentType = mediaType(req.headers['content-type']);
      const raw = await readBody(req);
      requestBytes = raw.length;
      const text = bodyText(raw, contentType);
      const body = decode(raw, contentType, text);
      const writes = verb === 'create' || verb === 'update' || verb === 'patch';
      const fieldValidation = writes ? fieldValidationParam(q.get('fieldValidation'), verb) : undefined;
      // The strict decoder's duplicate-field check, on JSON bodies (YAML and protobuf bodies: not checked).
      const duplicates =
        writes &&
        fieldValidation !== 'Ignore' &&
        body !== undefined &&
        text !== undefined &&
        contentType.endsWith('json')
          ? duplicateFields(text, body)
          : undefined;
      const warnings: string[] = [];
      const opts = {
        dryRun: dryRun || (Array.isArray(body?.dryRun) && body.dryRun.includes('All')),
        subresource: parsed.sub,
        fieldManager,
        userAgent: req.headers['user-agent'],
        force: boolParam(q, 'force'),
        fieldValidation,
        duplicates,
        warnings,
        // Decoded above for this request alone: written without a copy (rest.ts WriteOptions).
        ownBody: true,
      };
      // Warning headers (RFC 7234 299), as the real server sends for unknown fields under Warn.
      const warn = () => {
        if (warnings.length)
          res.setHeader(
            'Warning',
            warnings.map((w) => `299 - ${JSON.stringify(w)}`),
          );
      };
      if (kind.virtual) return send(res, 201, await deps.review(kind, ns, body, user));
      if (custom) return send(res, 201, await custom.create(ns!, name!, body));
      if (parsed.sub === 'scale') {
        const scale = writeScale(
          rest,
          kind,
          ns,
          name!,
          body,
          opts,
          verb === 'patch' ? contentType : undefined,
        );
        warn();
        return send(res, 200, scale);
      }
      if (verb === 'create') {
        const obj = rest.create(kind, ns, body, opts);
        warn();
        return send(res, 201, one(obj));
      }
      if (verb === 'update') {
        const obj = rest.update(kind, ns, name!, body, opts);
        warn();
        return send(res, 200, one(obj));
      }
      if (verb === 'patch') {
        const { obj, created } = rest.patch(kind, ns, name!, contentType, body, opts);
        warn();
        return send(res, created ? 201 : 200, one(obj));
      }
      const del: DeleteBody = body && typeof body === 'object' ? { ...body } : {};
      const pp = q.get('propagationPolicy');
      if (pp) del.propagationPolicy = pp as DeleteBody['propagationPolicy'];
      if (del.dryRun?.includes('All')) opts.dryRun = true;
      if (verb === 'delete') {
        const obj = rest.delete(kind, ns, name!, del, opts);
        // An object still being deleted (finalizers) is answered; one gone at once is a Status,
        // except for the kinds whose stores return the deleted object (ReturnDeletedObject).
        if (obj.metadata.deletionTimestamp || RETURNS_DELETED_OBJECT.has(kind.resource))
          return send(res, 200, one(obj));
        return send(res, 200, deletedStatus(kind, obj.metadata.name, obj.metadata.uid));
      }
      // deletecollection
      const r = rest.list(kind, ns, {
        labelSelector: q.get('labelSelector'),
        fieldSelector: q.get('fieldSelector'),
      });
      const deleted = r.items.map((o) =>
        rest.view(kind, rest.delete(kind, o.metadata.namespace, o.metadata.name, del, opts)),
      );
      return send(
        res,
        200,
        listJson(deps.objectJson, rest, kind, deleted, { resourceVersion: String(rest.store.rv) }),
      );
    } catch (e) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendError(res, e);
    }
  };
}

/**
 * Stores with `ReturnDeletedObject: true` among the kinds served (kubernetes pkg/registry:
 * core/namespace/storage, core/serviceaccount/storage); secrets, configmaps, nodes, events,
 * leases, RBAC objects, CRDs and custom resources answer a Status.
 */
const RETURNS_DELETED_OBJECT = new Set(['/namespaces', '/serviceaccounts']);

/** One object in the representation negotiated (a Status is never transformed, and is not passed here). */
function represent(
  rest: Rest,
  kind: ServedKind,
  obj: any,
  rep: Representation,
  include: IncludeObject,
): unknown {
  const view = rest.view(kind, obj);
  if (rep.as === 'Object') return view;
  if (rep.as === 'Table')
    return toTable(kind, [view], { resourceVersion: obj.metadata.resourceVersion }, include);
  if (rep.as === 'PartialObjectMetadataList') throw objectAskedForList();
  return asPartialObjectMetadata(view, rep.version);
}

/** JSON of a stored object, cached: objects are immutable once stored, so the text is too. */
function getJson(cache: TextCache, rest: Rest, kind: ServedKind, obj: any): string {
  if (obj.apiVersion !== apiVersionOf(kind)) return JSON.stringify(rest.view(kind, obj));
  let s = cache.get(obj);
  if (s === undefined) {
    s = JSON.stringify(obj);
    cache.set(obj, s);
  }
  return s;
}

function listJson(
  cache: TextCache,
  rest: Rest,
  kind: ServedKind,
  items: any[],
  meta: Record<string, unknown>,
): string {
  const head = JSON.stringify({ kind: kind.listKind, apiVersion: apiVersionOf(kind), metadata: meta });
  const parts = items.map((o) => getJson(cache, rest, kind, o));
  return `${head.slice(0, -1)},"items":[${parts.join(',')}]}`;
}

export type { StatusBody };
