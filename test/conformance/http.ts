/**
 * Requests as a client sends them, for cases about what typed clients hide (Warning headers,
 * duplicate JSON keys, Status bodies, query parameters KubeClient does not send):
 * - `rawRequest`: raw HTTP to the target (any method, body text, content type, query), with the
 *   kubeconfig's server, TLS and credentials, answering status, headers and body;
 * - `send`: through client-node's request machinery (KubeClient's own transport), failing with the
 *   typed KubeApiError KubeClient raises;
 * - `failure`: the error a request fails with.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { HttpMethod, KubeConfig } from '@kubernetes/client-node';
import type { KubeClient } from '../../shared/kube/client.ts';
import { type KubeApiError, kubeErrorFrom } from '../../shared/kube/errors.ts';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  body: any;
  /** The Warning headers' texts (RFC 7234 `299 - "<text>"`). */
  warnings: string[];
}

export interface RawOptions {
  /** A string is sent as is (for bodies JSON.stringify cannot make, like duplicate keys). */
  body?: unknown;
  contentType?: string;
  query?: Record<string, string | string[]>;
  /** The Accept header (default application/json). */
  accept?: string;
}

export async function rawRequest(
  kc: KubeConfig,
  method: string,
  path: string,
  opts: RawOptions = {},
): Promise<RawResponse> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('kubeconfig names no current cluster');
  const url = new URL(path, server);
  for (const [k, v] of Object.entries(opts.query ?? {}))
    for (const x of Array.isArray(v) ? v : [v]) url.searchParams.append(k, x);
  const data =
    opts.body === undefined
      ? undefined
      : typeof opts.body === 'string'
        ? opts.body
        : JSON.stringify(opts.body);
  const ro: RequestOptions = { method, headers: { Accept: opts.accept ?? 'application/json' } };
  await kc.applyToHTTPSOptions(ro);
  if (data !== undefined) {
    ro.headers = {
      ...ro.headers,
      'Content-Type': opts.contentType ?? 'application/json',
      'Content-Length': Buffer.byteLength(data),
    };
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, ro, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: any;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          body,
          warnings: warningsOf(res.headers),
        });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}

function warningsOf(headers: IncomingHttpHeaders): string[] {
  const raw = headers.warning;
  const all = Array.isArray(raw) ? raw.join(', ') : (raw ?? '');
  return [...all.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
}

export async function send(
  client: KubeClient,
  method: HttpMethod,
  path: string,
  query: Record<string, string>,
  body?: unknown,
  contentType?: string,
): Promise<any> {
  try {
    // The raw API answers { status, body } (the status feeds the request metrics).
    return (await (client as any).api.send(method, path, query, body, contentType)).body;
  } catch (e) {
    // client-node's ApiException carries the Status body as text.
    const err = e as { code?: number; body?: unknown };
    if (typeof err.code === 'number' && !(err as { status?: unknown }).status)
      throw kubeErrorFrom(err.code, err.body);
    throw e;
  }
}

/** The error a request fails with; throws when it succeeds. */
export async function failure(p: Promise<unknown>): Promise<KubeApiError> {
  try {
    await p;
  } catch (e) {
    return e as KubeApiError;
  }
  throw new Error('expected the request to fail');
}
