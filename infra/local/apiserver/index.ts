/**
 * The embedded Kubernetes API server: start it, get a URL and a kubeconfig that kubectl and
 * @kubernetes/client-node accept, and handles on its fault injector and request log.
 */
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type RequestListener } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { admit } from './admission.ts';
import { Auth, type AuthHandle } from './auth/index.ts';
import { localCa } from './ca.ts';
import { type Clock, systemClock } from './clock.ts';
import { FaultInjector } from './faults.ts';
import { Controllers } from './gc.ts';
import { KindRegistry } from './kinds.ts';
import { RequestLog } from './log.ts';
import { TextCache } from './lru.ts';
import { openapiV2 } from './openapi.ts';
import { Rbac, type RbacOptions } from './rbac.ts';
import { Rest } from './rest.ts';
import { createRequestHandler, type UserInfo } from './server.ts';
import { Store } from './store.ts';
import { selfSignedCert } from './tls.ts';
import type { WatchStream } from './watch.ts';

export type { AuthHandle } from './auth/index.ts';
export { caCertHash } from './auth/index.ts';
export { advanceableClock, deterministicClock } from './clock.ts';
export type { FaultRule } from './faults.ts';
export type { RequestLogEntry } from './log.ts';
export type { RbacOptions } from './rbac.ts';
export { FaultInjector, RequestLog };

export interface ApiServerOptions {
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** SQLite file for durable state; in-memory when absent. */
  dataFile?: string;
  /**
   * Enforce RBAC, with these static bearer tokens besides the admin one. Without it authorization
   * is AlwaysAllow; authentication runs either way (the admin token, service-account and bootstrap
   * tokens; no token → system:anonymous; an unknown token → 401).
   */
  rbac?: RbacOptions;
  /**
   * Serve https with a self-signed certificate (made with openssl); the kubeconfig then carries
   * its CA. kubectl sends tokens only over https, so use this to check RBAC with kubectl.
   */
  tls?: boolean;
  /** Enable fault injection from the start (rules added later enable it too). */
  faults?: boolean;
  /** Seed of the fault injector's PRNG. */
  seed?: number;
  /** Deterministic time/uid/name source for tests. */
  clock?: Clock;
  /** Most events the history keeps (older resumes, continue tokens and exact lists get 410). Default 100,000. */
  historySize?: number;
  /**
   * Most estimated bytes the history's events hold (what each version does not share with the one
   * before it); the oldest are dropped beyond it, as beyond `historySize`. Default 256 MiB.
   */
  historyBytes?: number;
  /**
   * How often the history is compacted, as etcd's compactor (the window spans one to two
   * intervals); by the server clock, so a test advancing its clock sees compaction. Default 5 min.
   */
  compactionIntervalMs?: number;
  /** Bookmark period for watches with allowWatchBookmarks=true. Default 5 s. */
  bookmarkIntervalMs?: number;
  /**
   * Events a watch consumer may leave untaken (written only as its connection takes them); one
   * more ends its stream cleanly and it resumes from its last resourceVersion. Default 1,000 (the
   * cacher's largest per-watcher channel).
   */
  maxWatchPendingEvents?: number;
}

export interface ApiServerHandle {
  url: string;
  port: number;
  /** YAML kubectl and client-node accept (http with insecure-skip-tls-verify, or https with the CA). */
  kubeconfig(opts?: { token?: string; namespace?: string }): string;
  writeKubeconfig(path: string, opts?: { token?: string; namespace?: string }): Promise<void>;
  faults: FaultInjector;
  log: RequestLog;
  /** The admin bearer token (group system:masters). */
  adminToken: string;
  /** Service-account token issuer, OIDC discovery, CA pin for kubeadm-style joins (auth/). */
  auth: AuthHandle;
  /** Current global resourceVersion. */
  resourceVersion(): number;
  /** Sends a BOOKMARK now on every watch that asked for bookmarks. */
  bookmarkNow(): void;
  /** Number of open watch streams. */
  watchCount(): number;
  /** Runs pending garbage collection / namespace / CRD controller work synchronously. */
  settle(): void;
  stop(): Promise<void>;
}

const BOOT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
export const ADMIN_TOKEN = 'metal3fn-admin';

export async function startApiServer(opts: ApiServerOptions = {}): Promise<ApiServerHandle> {
  const host = opts.host ?? '127.0.0.1';
  const clock = opts.clock ?? systemClock;
  // node:sqlite is loaded only when asked for (it prints an experimental warning on load).
  const persistence = opts.dataFile
    ? (await import('./persist.ts')).sqlitePersistence(opts.dataFile)
    : undefined;
  const store = new Store({
    historySize: opts.historySize,
    historyBytes: opts.historyBytes,
    compactionIntervalMs: opts.compactionIntervalMs,
    now: () => clock.now(),
    persistence,
  });
  const kinds = new KindRegistry();
  const rest = new Rest(store, kinds, clock, admit);
  const cert = opts.tls ? selfSignedCert(host) : undefined;
  // The CA every namespace's kube-root-ca.crt publishes: the serving certificate's, or a local one.
  const controllers = new Controllers(rest, () => cert?.cert ?? localCa().cert);
  controllers.loadCrds();
  store.onCommit = controllers.onCommit;
  const nsKind = kinds.get('', 'v1', 'namespaces')!;
  for (const ns of BOOT_NAMESPACES) {
    if (!store.get('/namespaces', undefined, ns))
      rest.create(nsKind, undefined, { metadata: { name: ns } }, { fieldManager: 'kube-apiserver' });
  }
  controllers.ensureNamespaceDefaults();
  const faults = new FaultInjector(() => store.compact(), opts.faults ?? false, opts.seed ?? 1);
  const log = new RequestLog();
  const rbac = opts.rbac ? new Rbac(rest) : undefined;
  const adminToken = opts.rbac?.adminToken ?? ADMIN_TOKEN;
  const staticTokens = new Map<string, UserInfo>([
    ...Object.entries(opts.rbac?.tokens ?? {}).map(
      ([t, u]) => [t, { user: u.user, groups: u.groups ?? [] }] as [string, UserInfo],
    ),
    [adminToken, { user: 'admin', groups: ['system:masters'] }],
  ]);
  const watches = new Set<WatchStream>();
  let address = '';
  // Created once the URL (the token issuer) is known; no request is served before.
  let auth!: Auth;

  const handler = createRequestHandler({
    rest,
    controllers,
    faults,
    log,
    watches,
    watchLimits: {
      maxPendingEvents: opts.maxWatchPendingEvents ?? 1000,
      bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 5000,
    },
    // Enough for an event's fan-out and a burst of reads; not a copy of the store or the window.
    watchLines: new TextCache(8 * 1024 * 1024),
    objectJson: new TextCache(32 * 1024 * 1024),
    authenticate: (req: IncomingMessage) => auth.authenticate(req),
    authorize: (user, info) => auth.authorize(user, info),
    review: (kind, ns, body, requester) => auth.review(kind, ns, body, requester),
    subresource: (kind, sub) => auth.subresource(kind, sub),
    wellKnown: (path) => auth.wellKnown(path),
    serverAddress: () => address,
    openapiV2,
  });
  const listener: RequestListener = (req, res) => {
    void handler(req, res);
  };
  const server = cert
    ? createTlsServer(
        { key: cert.key, cert: cert.cert, keepAliveTimeout: 65_000, requestTimeout: 0 },
        listener,
      )
    : createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  address = `${host}:${port}`;
  const url = `${cert ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  auth = new Auth({
    rest,
    rbac,
    staticTokens,
    url,
    ca: cert?.cert,
    keyFile: opts.dataFile ? `${opts.dataFile}.sa.key` : undefined,
  });
  store.onCommit = (ev) => {
    controllers.onCommit(ev);
    auth.onCommit(ev);
  };
  auth.boot();
  const clusterTrust = cert
    ? `    certificate-authority-data: ${Buffer.from(cert.cert).toString('base64')}`
    : '    insecure-skip-tls-verify: true';

  const kubeconfig = (o: { token?: string; namespace?: string } = {}): string =>
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: metal3fn',
      '  cluster:',
      `    server: ${url}`,
      clusterTrust,
      'users:',
      '- name: metal3fn-admin',
      '  user:',
      `    token: ${o.token ?? adminToken}`,
      'contexts:',
      '- name: metal3fn',
      '  context:',
      '    cluster: metal3fn',
      '    user: metal3fn-admin',
      `    namespace: ${o.namespace ?? 'default'}`,
      'current-context: metal3fn',
      '',
    ].join('\n');

  // Compaction also runs on every read and write of the history; this catches an idle server up.
  const compactor = setInterval(() => store.tick(), 10_000);
  compactor.unref();
  let stopped = false;
  return {
    url,
    port,
    kubeconfig,
    writeKubeconfig: (path, o) => writeFile(path, kubeconfig(o), { mode: 0o600 }),
    faults,
    log,
    adminToken,
    auth: auth.handle,
    resourceVersion: () => store.rv,
    bookmarkNow: () => {
      for (const w of watches) w.bookmark();
    },
    watchCount: () => watches.size,
    settle: () => {
      controllers.drain();
      auth.drain();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(compactor);
      for (const w of [...watches]) w.close();
      auth.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      store.close();
    },
  };
}
