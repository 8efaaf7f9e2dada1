/** Non-resource paths: version, health, discovery, OpenAPI, metrics. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  AGGREGATED_TYPE,
  aggregatedDiscovery,
  apiVersions,
  group,
  groupList,
  resourceList,
  VERSION_INFO,
  wantsAggregated,
} from './discovery.ts';
import { serveHealth } from './health.ts';
import { send } from './http-util.ts';
import { openapiV3Group, openapiV3Root } from './openapi.ts';
import type { ServerDeps } from './server.ts';
import { methodNotAllowed, notFoundPath } from './status.ts';

export function serveNonResource(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  deps: ServerDeps,
): void {
  const kinds = deps.rest.kinds;
  if (req.method !== 'GET' && req.method !== 'HEAD') throw methodNotAllowed();
  if (serveHealth(path, new URL(req.url ?? '/', 'http://local').searchParams, res)) return;
  switch (path) {
    case '/version': {
      send(res, 200, VERSION_INFO);
      return;
    }
    case '/api':
    case '/apis': {
      // kubectl asks for aggregated discovery first and falls back to the plain documents.
      const core = path === '/api';
      if (wantsAggregated(req.headers.accept)) {
        send(res, 200, aggregatedDiscovery(kinds, core), { 'Content-Type': AGGREGATED_TYPE, Vary: 'Accept' });
      } else {
        send(res, 200, core ? apiVersions(deps.serverAddress()) : groupList(kinds), { Vary: 'Accept' });
      }
      return;
    }
    case '/openapi/v2': {
      const doc = deps.openapiV2(req.headers.accept);
      if (!doc) throw notFoundPath();
      res.writeHead(200, { 'Content-Type': doc.type, 'Content-Length': Buffer.byteLength(doc.body) });
      res.end(doc.body);
      return;
    }
    case '/metrics': {
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
      const lines = Object.entries(deps.log.counts()).map(([k, v]) => {
        const [verb, resource] = k.split(' ');
        return `apiserver_request_total{verb="${verb}",resource="${resource}"} ${v}`;
      });
      res.end(`${lines.join('\n')}\n`);
      return;
    }
  }
  if (path === '/openapi/v3') {
    send(res, 200, openapiV3Root(kinds));
    return;
  }
  if (path.startsWith('/openapi/v3/')) {
    const m = /^\/openapi\/v3\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
    const doc = m
      ? m[1]
        ? openapiV3Group(kinds, '', m[1])
        : openapiV3Group(kinds, m[2]!, m[3]!)
      : undefined;
    if (!doc) throw notFoundPath();
    send(res, 200, doc);
    return;
  }
  const segs = path.split('/').filter(Boolean);
  if (segs[0] === 'api' && segs.length === 2) {
    const doc = resourceList(kinds, '', segs[1]!);
    if (doc) {
      send(res, 200, doc);
      return;
    }
  }
  if (segs[0] === 'apis' && segs.length === 2) {
    const doc = group(kinds, segs[1]!);
    if (doc) {
      send(res, 200, doc);
      return;
    }
  }
  if (segs[0] === 'apis' && segs.length === 3) {
    const doc = resourceList(kinds, segs[1]!, segs[2]!);
    if (doc) {
      send(res, 200, doc);
      return;
    }
  }
  throw notFoundPath();
}
