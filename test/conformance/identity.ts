/**
 * What the authentication cases share: raw HTTPS requests as a client sends them (any headers,
 * any or no credentials, trusting the target's CA from its kubeconfig), a kubeconfig holding
 * only a bearer token (so kubectl authenticates with that token and nothing else), tokens from
 * the TokenRequest API, and JWT decoding without verification.
 */

import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { envelopeOf, type Resource } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { tempDir } from './suite.ts';

const kind = (group: string, k: string, plural: string, namespaced: boolean): Resource =>
  envelopeOf({ group, version: 'v1', kind: k, plural, namespaced, statusSubresource: false });
const RBAC = 'rbac.authorization.k8s.io';
/** Kinds the product never touches (so they are not in shared/api/resources.ts). */
export const ServiceAccount = kind('', 'ServiceAccount', 'serviceaccounts', true);
export const Role = kind(RBAC, 'Role', 'roles', true);
export const RoleBinding = kind(RBAC, 'RoleBinding', 'rolebindings', true);
export const ClusterRole = kind(RBAC, 'ClusterRole', 'clusterroles', false);
export const ClusterRoleBinding = kind(RBAC, 'ClusterRoleBinding', 'clusterrolebindings', false);

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): any;
}

/**
 * One HTTP request to the target. `as`: the kubeconfig's credentials ('kubeconfig'), none at all
 * ('anonymous'), or a bearer token (`{ token }`).
 */
export async function raw(
  kc: KubeConfig,
  opts: {
    method?: string;
    path: string;
    as?: 'kubeconfig' | 'anonymous' | { token: string };
    headers?: Record<string, string | string[]>;
    body?: unknown;
  },
): Promise<RawResponse> {
  const server = new URL(kc.getCurrentCluster()!.server);
  const o: RequestOptions = {};
  await kc.applyToHTTPSOptions(o);
  const headers: Record<string, string | string[]> = { ...((o.headers as Record<string, string>) ?? {}) };
  const as = opts.as ?? 'kubeconfig';
  if (as !== 'kubeconfig') {
    delete headers.Authorization;
    delete headers.authorization;
    // A client certificate is a credential too: anonymous and token requests send none.
    delete o.cert;
    delete o.key;
  }
  if (typeof as === 'object') headers.Authorization = `Bearer ${as.token}`;
  Object.assign(headers, opts.headers ?? {});
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const send = server.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      {
        ...o,
        protocol: server.protocol,
        hostname: server.hostname,
        port: server.port,
        method: opts.method ?? 'GET',
        path: `${server.pathname.replace(/\/$/, '')}${opts.path}`,
        headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A kubeconfig file for the target's cluster whose only credential is `token`. */
export function tokenKubeconfig(kc: KubeConfig, token: string, namespace = 'default'): string {
  const cluster = kc.getCurrentCluster()!;
  const c: Record<string, unknown> = { server: cluster.server };
  if (cluster.caData) c['certificate-authority-data'] = cluster.caData;
  if (cluster.caFile) c['certificate-authority'] = cluster.caFile;
  if (cluster.skipTLSVerify) c['insecure-skip-tls-verify'] = true;
  const file = join(tempDir(), 'kubeconfig');
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'target', cluster: c }],
      users: [{ name: 'token', user: { token } }],
      contexts: [{ name: 'target', context: { cluster: 'target', user: 'token', namespace } }],
      'current-context': 'target',
    }),
    { mode: 0o600 },
  );
  return file;
}

/** A ServiceAccount and a token for it from the TokenRequest API (POST .../serviceaccounts/<name>/token). */
export async function serviceAccountWithToken(
  client: KubeClient,
  ns: string,
  name: string,
  spec: Record<string, unknown> = {},
): Promise<{ uid: string; token: string }> {
  const sa =
    (await client.get<any>(ServiceAccount, ns, name)) ??
    (await client.create<any>(ServiceAccount, { metadata: { name, namespace: ns } }));
  const r = await raw(client.kc, {
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec },
  });
  if (r.status !== 201) throw new Error(`TokenRequest for ${ns}/${name}: ${r.status} ${r.text}`);
  return { uid: sa.metadata.uid, token: r.json().status.token };
}

/** The header and claims of a JWT, not verified. */
export function decodeJwt(token: string): { header: any; claims: any } {
  const [h, p] = token.split('.');
  const part = (s: string | undefined) => JSON.parse(Buffer.from(s ?? '', 'base64url').toString('utf8'));
  return { header: part(h), claims: part(p) };
}

/** A random lowercase alphanumeric string (bootstrap token ids and secrets). */
export function randomToken(n: number): string {
  const chars = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < n; i++) s += chars[Math.floor(Math.random() * chars.length)];
  return s;
}
