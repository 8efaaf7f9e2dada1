/**
 * The one home of our kube client's request counting: per-verb and per-resource counters (metrics,
 * benchmarks, the dev summary) and observers, through which each runtime exports every request as
 * client-go's `rest_client_*` metrics (Prometheus on the long-running processes, EMF on Lambda).
 */
export const VERBS = [
  'get',
  'list',
  'create',
  'update',
  'update-status',
  'patch',
  'patch-status',
  'delete',
  'watch',
] as const;
export type Verb = (typeof VERBS)[number];

/** Every other verb writes. */
const READ_VERBS: ReadonlySet<Verb> = new Set(['get', 'list', 'watch']);

/** One finished request, as an observer sees it. */
export interface RequestObservation {
  verb: Verb;
  /** Plural resource name (`metal3machines`). */
  resource: string;
  /** HTTP status; 0 when no response came back (connection refused, TLS, timeout). */
  code: number;
  /** Time to the response; absent for a watch, which lasts until it is closed. */
  seconds?: number | undefined;
}

export type RequestObserver = (o: RequestObservation) => void;

export interface RequestStatsSnapshot {
  requests: number;
  /** Objects returned by list calls, all pages: what a list-heavy step costs as data grows. */
  listedItems: number;
  writes: number;
  conflicts: number;
  errors: number;
  byVerb: Record<string, number>;
  byResource: Record<string, number>;
}

export class RequestStats {
  requests = 0;
  writes = 0;
  conflicts = 0;
  errors = 0;
  listedItems = 0;
  readonly byVerb = new Map<string, number>();
  readonly byResource = new Map<string, number>();
  /** Objects returned by lists, per resource. */
  readonly listedByResource = new Map<string, number>();
  private readonly observers = new Set<RequestObserver>();

  /** Calls `fn` with every request recorded from now on; returns the function that stops it. */
  observe(fn: RequestObserver): () => void {
    this.observers.add(fn);
    return () => this.observers.delete(fn);
  }

  /** One request, once its answer (or its failure) is in; a watch when it starts. */
  recordRequest(verb: Verb, resource: string, code: number, ms?: number): void {
    this.requests++;
    this.byVerb.set(verb, (this.byVerb.get(verb) ?? 0) + 1);
    if (verb !== 'watch') {
      if (!READ_VERBS.has(verb)) this.writes++;
      const key = `${verb} ${resource}`;
      this.byResource.set(key, (this.byResource.get(key) ?? 0) + 1);
      if (code === 409) this.conflicts++;
      if (code >= 400 || code === 0) this.errors++;
    }
    if (this.observers.size === 0) return;
    const o: RequestObservation = {
      verb,
      resource,
      code,
      seconds: verb === 'watch' || ms === undefined ? undefined : ms / 1000,
    };
    for (const fn of this.observers) fn(o);
  }

  /** Counts the objects one list call returned. */
  recordListed(items: number, resource = ''): void {
    this.listedItems += items;
    this.listedByResource.set(resource, (this.listedByResource.get(resource) ?? 0) + items);
  }

  snapshot(): RequestStatsSnapshot {
    return {
      requests: this.requests,
      listedItems: this.listedItems,
      writes: this.writes,
      conflicts: this.conflicts,
      errors: this.errors,
      byVerb: Object.fromEntries(this.byVerb),
      byResource: Object.fromEntries(this.byResource),
    };
  }
}
