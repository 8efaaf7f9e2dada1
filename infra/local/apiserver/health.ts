/**
 * /healthz, /livez and /readyz in the real server's text format (k8s.io/apiserver
 * pkg/server/healthz/healthz.go handleRootHealth): `ok`, or with `?verbose` one `[+]<check> ok`
 * line per check and `<name> check passed`; `?exclude=<check>` marks a check excluded (and warns
 * about names that match none); `/<endpoint>/<check>` answers one check. The checks named are
 * the real server's that have a counterpart here (its storage, the CRD registry); all pass
 * while the server answers.
 */
import type { ServerResponse } from 'node:http';
import { notFoundPath } from './status.ts';

const COMMON = [
  'ping',
  'log',
  'etcd',
  'poststarthook/start-apiextensions-informers',
  'poststarthook/start-apiextensions-controllers',
  'poststarthook/crd-informer-synced',
];
const CHECKS: Record<string, string[]> = {
  healthz: COMMON,
  livez: COMMON,
  readyz: [...COMMON.slice(0, 3), 'etcd-readiness', 'informer-sync', ...COMMON.slice(3), 'shutdown'],
};

/** Answers a health path, or returns false when `path` is none. */
export function serveHealth(path: string, q: URLSearchParams, res: ServerResponse): boolean {
  const [endpoint, ...rest] = path.slice(1).split('/');
  const checks = CHECKS[endpoint ?? ''];
  if (!checks) return false;
  const text = (code: number, body: string) => {
    res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
    res.end(body);
  };
  if (rest.length) {
    if (!checks.includes(rest.join('/'))) throw notFoundPath();
    text(200, 'ok');
    return true;
  }
  if (!q.has('verbose')) {
    text(200, 'ok');
    return true;
  }
  const excluded = new Set(q.getAll('exclude'));
  const lines = checks.map((c) => (excluded.delete(c) ? `[+]${c} excluded: ok` : `[+]${c} ok`));
  if (excluded.size)
    lines.push(
      `warn: some health checks cannot be excluded: no matches for ${[...excluded]
        .sort()
        .map((c) => JSON.stringify(c))
        .join(',')}`,
    );
  text(200, `${lines.join('\n')}\n${endpoint} check passed\n`);
  return true;
}
