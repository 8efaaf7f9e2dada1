/**
 * Fault injection in the spirit of controller-runtime's interceptor.Funcs: rules matching
 * verb/resource/namespace/name (absent = any) that fail requests N times or with a probability,
 * add latency, drop watches after K events; and a forced compaction. Seeded, so deterministic.
 */
import { seededRandom } from './clock.ts';
import {
  type ApiError,
  conflict,
  expired,
  internalError,
  serviceUnavailable,
  tooManyRequests,
} from './status.ts';

export interface FaultRule {
  /** get, list, watch, create, update, patch, delete, deletecollection; '*' or absent for any. */
  verb?: string;
  /** Plural (`metal3machines`), `plural.group`, or with a subresource (`metal3machines/status`). */
  resource?: string;
  namespace?: string;
  name?: string;
  /** The failure to answer with; absent for latency- or watch-only rules. */
  error?: 409 | 410 | 429 | 500 | 503;
  /** Fail this many matching requests, then stop matching (default: unlimited). */
  times?: number;
  /** Fail a matching request with this probability (seeded PRNG); default 1. */
  probability?: number;
  retryAfterSeconds?: number;
  latencyMs?: number;
  /** For watches: end the stream after this many events. */
  dropWatchAfter?: number;
}

export interface RequestAttributes {
  verb: string;
  resource: string;
  group: string;
  subresource?: string | undefined;
  namespace?: string | undefined;
  name?: string | undefined;
}

export interface FaultDecision {
  error?: ApiError;
  latencyMs: number;
  dropWatchAfter?: number;
}

interface ActiveRule {
  rule: FaultRule;
  remaining: number;
  hits: number;
}

export class FaultInjector {
  private rules: ActiveRule[] = [];
  private random: () => number;
  private readonly compactor: () => void;
  /** Off unless the server was started with `faults: true` or a rule is added. */
  enabled: boolean;

  constructor(compactor: () => void, enabled = false, seed = 1) {
    this.compactor = compactor;
    this.enabled = enabled;
    this.random = seededRandom(seed);
  }

  seed(n: number): void {
    this.random = seededRandom(n);
  }

  /** Adds a rule; returns a function that removes it. */
  add(rule: FaultRule): () => void {
    const active: ActiveRule = { rule, remaining: rule.times ?? Number.POSITIVE_INFINITY, hits: 0 };
    this.rules.push(active);
    this.enabled = true;
    return () => {
      this.rules = this.rules.filter((r) => r !== active);
    };
  }

  /** Shorthand: fail the next `times` matching requests with `error`. */
  failNext(match: Omit<FaultRule, 'error' | 'times'>, error: FaultRule['error'], times = 1): () => void {
    return this.add({ ...match, error, times });
  }

  clear(): void {
    this.rules = [];
  }

  /** How often each rule fired, in the order added. */
  hits(): number[] {
    return this.rules.map((r) => r.hits);
  }

  /** Forgets the watch event history: resumes from older RVs and old continue tokens get 410. */
  compact(): void {
    this.compactor();
  }

  private matches(r: FaultRule, a: RequestAttributes): boolean {
    if (r.verb && r.verb !== '*' && r.verb !== a.verb) return false;
    if (r.resource && r.resource !== '*') {
      const [res, sub] = r.resource.split('/');
      const names = [a.resource, a.group ? `${a.resource}.${a.group}` : a.resource];
      if (!names.includes(res!)) return false;
      if ((sub ?? undefined) !== (a.subresource ?? undefined)) return false;
    }
    if (r.namespace && r.namespace !== '*' && r.namespace !== a.namespace) return false;
    if (r.name && r.name !== '*' && r.name !== a.name) return false;
    return true;
  }

  decide(a: RequestAttributes): FaultDecision {
    const d: FaultDecision = { latencyMs: 0 };
    if (!this.enabled) return d;
    for (const r of this.rules) {
      if (r.remaining <= 0 || !this.matches(r.rule, a)) continue;
      const p = r.rule.probability ?? 1;
      if (p < 1 && this.random() >= p) continue;
      r.remaining--;
      r.hits++;
      if (r.rule.latencyMs) d.latencyMs += r.rule.latencyMs;
      if (r.rule.dropWatchAfter !== undefined) d.dropWatchAfter = r.rule.dropWatchAfter;
      if (r.rule.error && !d.error) d.error = faultError(r.rule, a);
    }
    return d;
  }
}

function faultError(r: FaultRule, a: RequestAttributes): ApiError {
  const k = { plural: a.resource, group: a.group };
  switch (r.error) {
    case 409:
      return conflict(k, a.name ?? '');
    case 410:
      return expired('too old resource version: injected fault');
    case 429:
      return tooManyRequests(r.retryAfterSeconds ?? 1);
    case 503: {
      const e = serviceUnavailable();
      if (r.retryAfterSeconds !== undefined) e.headers['Retry-After'] = String(r.retryAfterSeconds);
      return e;
    }
    default:
      return internalError('injected fault');
  }
}
