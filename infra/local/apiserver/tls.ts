/**
 * A self-signed serving certificate for 127.0.0.1/localhost, made with the openssl CLI. Only
 * needed for TLS mode: kubectl sends credentials (tokens) only to https servers, so RBAC checks
 * of kubectl users need it; plain http is the default.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ServingCert {
  key: string;
  cert: string;
}

export function selfSignedCert(host: string): ServingCert {
  const dir = mkdtempSync(join(tmpdir(), 'm3fn-tls-'));
  try {
    const san = [
      `IP:127.0.0.1`,
      `DNS:localhost`,
      /^\d+\.\d+\.\d+\.\d+$/.test(host) ? `IP:${host}` : `DNS:${host}`,
    ];
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '365',
        '-subj',
        '/CN=metal3fn-apiserver',
        '-addext',
        `subjectAltName=${[...new Set(san)].join(',')}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'pipe' },
    );
    return {
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    };
  } catch (e) {
    throw new Error(
      `cannot create a self-signed certificate with openssl (needed for tls: true): ${(e as Error).message}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
