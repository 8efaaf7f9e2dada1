/** Per-verb and per-resource request counters, for metrics, benchmarks and the dev summary. */
export type Verb =
  | 'get'
  | 'list'
  | 'create'
  | 'update'
  | 'update-status'
  | 'patch'
  | 'patch-status'
  | 'delete'
  | 'watch';

const WRITE_VERBS: ReadonlySet<Verb> = new Set([
  'create',
  'update',
  'update-status',
  'patch',
  'patch-status',
  'delete',
]);

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

  /** Records a failure (code != 2xx) as it happens; the request itself is counted by recordDone. */
  record(verb: Verb, resource: string, _ms: number, code: number): void {
    if (verb === 'watch') {
      this.requests++;
      this.byVerb.set(verb, (this.byVerb.get(verb) ?? 0) + 1);
      return;
    }
    if (code === 409) this.conflicts++;
    if (code >= 400 || code === 0) this.errors++;
    void resource;
  }

  recordDone(verb: Verb, resource: string, _ms: number): void {
    this.requests++;
    if (WRITE_VERBS.has(verb)) this.writes++;
    this.byVerb.set(verb, (this.byVerb.get(verb) ?? 0) + 1);
    const key = `${verb} ${resource}`;
    this.byResource.set(key, (this.byResource.get(key) ?? 0) + 1);
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
