/** The request log: one entry per request, and counters per verb and resource. Resettable. */
export interface RequestLogEntry {
  verb: string;
  /** Plural resource (with `/subresource`), or the path for non-resource requests. */
  resource: string;
  namespace?: string | undefined;
  name?: string | undefined;
  method: string;
  path: string;
  user: string;
  status: number;
  ms: number;
  /** Bytes of the request's body (0 for none). */
  requestBytes?: number;
}

export class RequestLog {
  private entriesRing: RequestLogEntry[] = [];
  private readonly max: number;
  private readonly counters = new Map<string, number>();

  constructor(max = 20_000) {
    this.max = max;
  }

  record(e: RequestLogEntry): void {
    this.entriesRing.push(e);
    // Trimmed in bulk at twice the bound: a splice of the whole array per request once full cost
    // O(max) each, a visible share of a long run's CPU.
    if (this.entriesRing.length >= 2 * this.max) this.trim();
    const key = `${e.verb} ${e.resource}`;
    this.counters.set(key, (this.counters.get(key) ?? 0) + 1);
  }

  /** The most recent entries (bounded), oldest first. */
  get entries(): readonly RequestLogEntry[] {
    this.trim();
    return this.entriesRing;
  }

  private trim(): void {
    if (this.entriesRing.length > this.max) this.entriesRing.splice(0, this.entriesRing.length - this.max);
  }

  /** How many requests of a verb (and resource, when given) were served since the last reset. */
  count(verb: string, resource?: string): number {
    if (resource !== undefined) return this.counters.get(`${verb} ${resource}`) ?? 0;
    let n = 0;
    for (const [k, v] of this.counters) if (k.startsWith(`${verb} `)) n += v;
    return n;
  }

  /** `"<verb> <resource>" → count`. */
  counts(): Record<string, number> {
    return Object.fromEntries([...this.counters].sort(([a], [b]) => a.localeCompare(b)));
  }

  reset(): void {
    this.entriesRing = [];
    this.counters.clear();
  }
}
