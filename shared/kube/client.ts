/**
 * The product's only door to Kubernetes: a thin generic client over @kubernetes/client-node's
 * request machinery. URLs come from our resource registry (no discovery round-trips), responses
 * stay plain JSON (unknown fields preserved, no Date conversion), failures become typed errors.
 */
import {
  ApiException,
  type Configuration,
  HttpMethod,
  KubeConfig,
  RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import { z } from 'zod';
import { isRecord } from '../api/json.ts';
import { apiVersionOf, K, type ResourceType } from '../api/kinds.ts';
import { KubeObjectSchema } from '../api/meta.ts';
import { parseObject } from '../api/parse.ts';
import type { Resource } from '../api/resources.ts';
import { isNotFound, kubeErrorFrom } from './errors.ts';
import { RequestStats, type Verb } from './stats.ts';
import { undiciRequestLibrary } from './transport.ts';
import type { KubeList, KubeObject } from './types.ts';

export type PatchType = 'merge' | 'json';
const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
};

export interface ListOptions {
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** Page size; the client follows `continue` tokens until the list is complete. */
  limit?: number | undefined;
  /** Stop after this many pages (with `limit`): the result then carries `continue` when more remain. */
  maxPages?: number | undefined;
  /** Resume from a `continue` token of an earlier partial list. */
  continue?: string | undefined;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
}

/**
 * A watch event. The object is read through its envelope only: the relay must not choke on an
 * object a function would reject, and a BOOKMARK or ERROR (a Status) has no body of the kind.
 */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject;
}

const WATCH_TYPES: ReadonlySet<string> = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);
const isWatchType = (t: string): t is WatchEvent['type'] => WATCH_TYPES.has(t);

/** One page of a LIST: the items stay unknown until each is parsed with the kind's schema. */
const ListPageSchema = z.looseObject({
  items: z.array(z.unknown()).nullish(),
  metadata: z
    .looseObject({ resourceVersion: z.string().optional(), continue: z.string().optional() })
    .optional(),
});

/** `obj` parsed with the handle's schema: the typed object, or an InvalidObjectError naming it. */
export const parseAs = <T extends KubeObject>(t: Resource<T>, obj: unknown): T =>
  parseObject(t.schema, t.kind, obj);

/** A Table first, the object or list from a server that cannot make one (kubectl get's header, v1 only). */
const TABLE_ACCEPT = 'application/json;as=Table;g=meta.k8s.io;v=v1,application/json';

/** A Table of rows (cells only) or, from a server without Tables, a plain list (built on first use). */
const TableOrListSchema = z.lazy(() =>
  z.looseObject({
    kind: z.string().optional(),
    metadata: z.looseObject({ continue: z.string().optional() }).optional(),
    columnDefinitions: z.array(z.looseObject({ format: z.string().optional() })).optional(),
    rows: z.array(z.looseObject({ cells: z.array(z.unknown()) })).optional(),
    items: z.array(z.looseObject({ metadata: z.looseObject({ name: z.string() }) })).optional(),
  }),
);

/** A 2xx answer: its status (200, 201, ...) for the request metrics, and its JSON body. */
interface RawResponse {
  status: number;
  body: unknown;
}

/**
 * client-node's request plumbing (the KubeConfig's auth and its middleware, as
 * KubernetesObjectApi.requestPromise runs them, with the http library of ./transport.ts) for any
 * path, with raw JSON out. Standalone
 * rather than a KubernetesObjectApi subclass: that class pulls in the serializer and every
 * generated model (~300 KB of a Lambda bundle, parsed at each cold start) that raw JSON never uses.
 */
class RawApi {
  readonly configuration: Configuration;
  constructor(configuration: Configuration) {
    this.configuration = configuration;
  }

  async send(
    method: HttpMethod,
    path: string,
    query: Record<string, string | undefined>,
    body?: unknown,
    contentType?: string,
    accept = 'application/json',
  ): Promise<RawResponse> {
    const ctx: RequestContext = this.configuration.baseServer.makeRequestContext(path, method);
    ctx.setHeaderParam('Accept', accept);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) ctx.setQueryParam(k, v);
    if (body !== undefined) {
      ctx.setHeaderParam('Content-Type', contentType ?? 'application/json');
      ctx.setBody(JSON.stringify(body));
    }
    return this.requestPromise(ctx);
  }

  private async requestPromise(request: RequestContext): Promise<RawResponse> {
    const config = this.configuration;
    await config.authMethods.BearerToken?.applySecurityAuthentication(request);
    await config.authMethods.default?.applySecurityAuthentication(request);
    let ctx = request;
    for (const m of config.middleware) ctx = await m.pre(ctx).toPromise();
    let response = await undiciRequestLibrary.send(ctx).toPromise();
    for (const m of config.middleware) response = await m.post(response).toPromise();
    return this.processResponse(response);
  }

  private async processResponse(response: ResponseContext): Promise<RawResponse> {
    const text = await response.body.text();
    if (response.httpStatusCode >= 200 && response.httpStatusCode <= 299) {
      const body: unknown = text ? JSON.parse(text) : {};
      return { status: response.httpStatusCode, body };
    }
    throw new ApiException(response.httpStatusCode, 'Unsuccessful HTTP Request', text, response.headers);
  }
}

/**
 * client-node 2.0 builds a new undici Agent (its own keep-alive connection pool) for every request;
 * under load the idle sockets pile up until the process runs out of file descriptors (EMFILE).
 * One dispatcher per KubeConfig keeps a single pool, as client-go does.
 */
function reuseDispatcher(kc: KubeConfig): void {
  // createDispatcher is private in client-node's typings: reached by name and checked at run time.
  const create: unknown = Reflect.get(kc, 'createDispatcher');
  if (typeof create !== 'function' || Reflect.get(kc, DISPATCHER_REUSED) === true) return;
  let cached: unknown;
  Reflect.set(kc, 'createDispatcher', (...a: unknown[]): unknown => {
    cached ??= Reflect.apply(create, kc, a);
    return cached;
  });
  Reflect.set(kc, DISPATCHER_REUSED, true);
}
const DISPATCHER_REUSED = '__dispatcherReused';

export interface KubeClientOptions {
  /** Shared counters; pass one instance to several clients to count a whole process. */
  stats?: RequestStats;
  fieldManager?: string;
  /**
   * `fieldValidation` on every write. Absent: the server's default (Warn: unknown fields dropped
   * with a warning). Tests use Strict, so a field a schema lacks fails the write instead of
   * vanishing.
   */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

export class KubeClient {
  readonly kc: KubeConfig;
  readonly stats: RequestStats;
  private readonly api: RawApi;
  private readonly fieldManager: string;
  /** The write options a client made from this one (a workload cluster's) carries too. */
  readonly fieldValidation: KubeClientOptions['fieldValidation'];

  constructor(kc: KubeConfig, opts: KubeClientOptions = {}) {
    reuseDispatcher(kc);
    this.kc = kc;
    this.api = kc.makeApiClient(RawApi);
    this.stats = opts.stats ?? new RequestStats();
    this.fieldManager = opts.fieldManager ?? 'metal3-functions';
    this.fieldValidation = opts.fieldValidation;
  }

  static fromFile(path: string, opts?: KubeClientOptions): KubeClient {
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    return new KubeClient(kc, opts);
  }

  static fromString(yaml: string, opts?: KubeClientOptions): KubeClient {
    const kc = new KubeConfig();
    kc.loadFromString(yaml);
    return new KubeClient(kc, opts);
  }

  /** KUBECONFIG, ~/.kube/config, or the in-cluster service account, as kubectl would. */
  static fromDefault(opts?: KubeClientOptions): KubeClient {
    const kc = new KubeConfig();
    kc.loadFromDefault();
    return new KubeClient(kc, opts);
  }

  /**
   * GET of a non-resource URL with this cluster's credentials and CA: the service-account issuer's
   * OIDC discovery document and JWKS, which Knative's own receivers also fetch this way (the
   * issuer's jwks_uri may name another address of the same API server). Status and body as they came.
   */
  async getUrl(url: string): Promise<{ status: number; body: string }> {
    const ctx = new RequestContext(url, HttpMethod.GET);
    ctx.setHeaderParam('Accept', 'application/json');
    await this.kc.applySecurityAuthentication(ctx);
    const res = await undiciRequestLibrary.send(ctx).toPromise();
    return { status: res.httpStatusCode, body: await res.body.text() };
  }

  /** Path of a collection (ns undefined for all namespaces or a cluster-scoped kind) or an object. */
  path(t: ResourceType, namespace?: string, name?: string, subresource?: string): string {
    const base = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
    const parts = [base];
    if (t.namespaced && namespace) parts.push('namespaces', encodeURIComponent(namespace));
    parts.push(t.plural);
    if (name !== undefined) parts.push(encodeURIComponent(name));
    if (subresource) parts.push(subresource);
    return parts.join('/');
  }

  /** One request, counted in `stats` with its status (0 when no answer came back) and duration. */
  private async call(verb: Verb, t: ResourceType, fn: () => Promise<RawResponse>): Promise<unknown> {
    const started = performance.now();
    let code = 0;
    try {
      const r = await fn();
      code = r.status;
      return r.body;
    } catch (e) {
      if (!(e instanceof ApiException)) throw e;
      const err = kubeErrorFrom(e.code, e.body, e.headers);
      code = err.code;
      throw err;
    } finally {
      this.stats.recordRequest(verb, t.plural, code, performance.now() - started);
    }
  }

  /** GET one object, parsed with the handle's schema; undefined when it does not exist. */
  async get<T extends KubeObject>(
    t: Resource<T>,
    namespace: string | undefined,
    name: string,
  ): Promise<T | undefined> {
    let body: unknown;
    try {
      body = await this.call('get', t, () =>
        this.api.send(HttpMethod.GET, this.path(t, namespace, name), {}),
      );
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
    return parseAs(t, body);
  }

  /**
   * Whether an object exists, read as a Table row without the object (`includeObject=None`, what
   * `kubectl get` reads): for a wait's reason about a kind whose objects grow with the fleet (an
   * IPPool, a Metal3DataTemplate: their status and managedFields have an entry per machine, ADR 029).
   * A server that cannot make Tables answers the object (the plain-JSON fallback, as kubectl's).
   */
  async exists(t: ResourceType, namespace: string | undefined, name: string): Promise<boolean> {
    try {
      await this.call('get', t, () =>
        this.api.send(
          HttpMethod.GET,
          this.path(t, namespace, name),
          { includeObject: 'None' },
          undefined,
          undefined,
          TABLE_ACCEPT,
        ),
      );
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  /** The names of a kind's objects in a namespace, read as Table rows without the objects (see `exists`). */
  async listNames(t: ResourceType, namespace?: string): Promise<string[]> {
    const names: string[] = [];
    let cont: string | undefined;
    do {
      const body = await this.call('list', t, () =>
        this.api.send(
          HttpMethod.GET,
          this.path(t, namespace),
          { includeObject: 'None', continue: cont },
          undefined,
          undefined,
          TABLE_ACCEPT,
        ),
      );
      const page = TableOrListSchema.parse(body);
      if (page.kind === 'Table') {
        const at = Math.max(0, page.columnDefinitions?.findIndex((c) => c.format === 'name') ?? 0);
        for (const row of page.rows ?? []) {
          const name = row.cells[at];
          if (typeof name !== 'string')
            throw new Error(`LIST ${this.path(t, namespace)}: a Table row without a name cell`);
          names.push(name);
        }
      } else for (const item of page.items ?? []) names.push(item.metadata.name);
      this.stats.recordListed((page.rows ?? page.items ?? []).length, t.plural);
      cont = page.metadata?.continue || undefined;
    } while (cont);
    return names;
  }

  /**
   * LIST, following continue tokens; each item parsed with the handle's schema (the first that
   * fails throws its InvalidObjectError). The resourceVersion is the list's (for a watch to start from).
   */
  async list<T extends KubeObject>(
    t: Resource<T>,
    namespace?: string,
    opts: ListOptions = {},
  ): Promise<KubeList<T>> {
    const items: T[] = [];
    let cont: string | undefined = opts.continue || undefined;
    let resourceVersion = '';
    let pages = 0;
    do {
      const body = await this.call('list', t, () =>
        this.api.send(HttpMethod.GET, this.path(t, namespace), {
          labelSelector: opts.labelSelector || undefined,
          fieldSelector: opts.fieldSelector || undefined,
          limit: opts.limit !== undefined ? String(opts.limit) : undefined,
          continue: cont,
        }),
      );
      const page = ListPageSchema.parse(body);
      const kind = t.kind;
      const apiVersion = apiVersionOf(t);
      for (const item of page.items ?? []) {
        // Lists omit kind/apiVersion on items; put them back so objects are self-describing.
        items.push(parseAs(t, isRecord(item) ? { apiVersion, kind, ...item } : item));
      }
      this.stats.recordListed(page.items?.length ?? 0, t.plural);
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      cont = page.metadata?.continue || undefined;
      pages++;
      if (cont && opts.maxPages !== undefined && pages >= opts.maxPages)
        return { items, resourceVersion, continue: cont };
    } while (cont);
    return { items, resourceVersion };
  }

  /** POST; the answer parsed with the handle's schema. */
  async create<T extends KubeObject>(t: Resource<T>, obj: T, opts: { dryRun?: boolean } = {}): Promise<T> {
    const body = { ...obj, apiVersion: apiVersionOf(t), kind: t.kind };
    const created = await this.call('create', t, () =>
      this.api.send(
        HttpMethod.POST,
        this.path(t, obj.metadata.namespace),
        {
          fieldManager: this.fieldManager,
          fieldValidation: this.fieldValidation,
          dryRun: opts.dryRun ? 'All' : undefined,
        },
        body,
      ),
    );
    return parseAs(t, created);
  }

  /** PUT: the object's metadata.resourceVersion is the precondition (409 when stale). */
  async replace<T extends KubeObject>(t: Resource<T>, obj: T): Promise<T> {
    const body = { ...obj, apiVersion: apiVersionOf(t), kind: t.kind };
    const written = await this.call('update', t, () =>
      this.api.send(
        HttpMethod.PUT,
        this.path(t, obj.metadata.namespace, obj.metadata.name!),
        { fieldManager: this.fieldManager, fieldValidation: this.fieldValidation },
        body,
      ),
    );
    return parseAs(t, written);
  }

  /** PUT to /status (or the main resource when the kind has no status subresource). */
  async replaceStatus<T extends KubeObject>(t: Resource<T>, obj: T): Promise<T> {
    if (!t.statusSubresource) return this.replace(t, obj);
    const body = { ...obj, apiVersion: apiVersionOf(t), kind: t.kind };
    const written = await this.call('update-status', t, () =>
      this.api.send(
        HttpMethod.PUT,
        this.path(t, obj.metadata.namespace, obj.metadata.name!, 'status'),
        { fieldManager: this.fieldManager, fieldValidation: this.fieldValidation },
        body,
      ),
    );
    return parseAs(t, written);
  }

  /** PATCH; a merge patch carrying metadata.resourceVersion is conditioned on it. The answer is parsed. */
  async patch<T extends KubeObject>(
    t: Resource<T>,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    type: PatchType = 'merge',
    opts: { status?: boolean } = {},
  ): Promise<T> {
    const sub = opts.status && t.statusSubresource ? 'status' : undefined;
    const patched = await this.call(sub ? 'patch-status' : 'patch', t, () =>
      this.api.send(
        HttpMethod.PATCH,
        this.path(t, namespace, name, sub),
        { fieldManager: this.fieldManager, fieldValidation: this.fieldValidation },
        patch,
        PATCH_CONTENT_TYPE[type],
      ),
    );
    return parseAs(t, patched);
  }

  /**
   * POST an Eviction to `pods/<name>/eviction` (policy/v1): the API server deletes the Pod unless a
   * PodDisruptionBudget forbids it (429 TooManyRequests). Resolves false when the Pod is gone.
   */
  async evict(namespace: string, name: string): Promise<boolean> {
    try {
      await this.call('create', K.Pod, () =>
        this.api.send(
          HttpMethod.POST,
          this.path(K.Pod, namespace, name, 'eviction'),
          {},
          {
            apiVersion: 'policy/v1',
            kind: 'Eviction',
            metadata: { name, namespace },
          },
        ),
      );
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  /** DELETE; resolves false when the object was already gone. */
  async delete(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): Promise<boolean> {
    const body =
      opts.preconditions || opts.propagationPolicy
        ? {
            apiVersion: 'v1',
            kind: 'DeleteOptions',
            preconditions: opts.preconditions,
            propagationPolicy: opts.propagationPolicy,
          }
        : undefined;
    try {
      await this.call('delete', t, () =>
        this.api.send(HttpMethod.DELETE, this.path(t, namespace, name), {}, body),
      );
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  /**
   * Starts a watch. Resolves with a controller to stop it; `done` is called once when the stream
   * ends (null on a clean end, the error otherwise; a 410 arrives as an ERROR event first).
   */
  async watch(
    t: ResourceType,
    namespace: string | undefined,
    params: {
      resourceVersion?: string;
      labelSelector?: string;
      fieldSelector?: string;
      timeoutSeconds?: number;
      allowWatchBookmarks?: boolean;
    },
    onEvent: (ev: WatchEvent) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    this.stats.recordRequest('watch', t.plural, 200);
    // Imported here, not at the top: only the relay watches, and a Lambda cold start then neither
    // parses Watch nor loads what it needs (node:readline, undici's fetch).
    const { Watch } = await import('@kubernetes/client-node/dist/watch.js');
    const w = new Watch(this.kc);
    const query: Record<string, string | number | boolean | undefined> = {
      allowWatchBookmarks: params.allowWatchBookmarks ?? true,
      resourceVersion: params.resourceVersion,
      labelSelector: params.labelSelector,
      fieldSelector: params.fieldSelector,
      timeoutSeconds: params.timeoutSeconds,
    };
    return w.watch(
      this.path(t, namespace),
      query,
      (type: string, object: unknown) => {
        // An unknown event type or an object without an envelope (no metadata) is the stream's
        // error, not an event: the watcher relists.
        const parsed = KubeObjectSchema.safeParse(object);
        if (isWatchType(type) && parsed.success) onEvent({ type, object: parsed.data });
        else if (type === 'ERROR')
          onEvent({ type, object: { metadata: {}, ...(isRecord(object) ? object : {}) } });
        else done(new Error(`watch ${t.plural}: unexpected event ${type}`));
      },
      done,
    );
  }
}

/**
 * The reads of a KubeClient: what decisions that only read take, so an offline preview can hand
 * them objects from manifests (bin/commands/render-claim.ts) through the same schemas.
 */
export type ObjectReader = Pick<KubeClient, 'get' | 'list'>;
