/**
 * Candidate hosts for a claim, read in small pages (ADR 022): what a claim reads does not grow with
 * the fleet. The server narrows the list to hosts that can be free for this selector (its
 * matchLabels and the expressions the label-selector syntax can say, no cluster-name label, no
 * consumer label, no node-reuse booking); the client-side checks (eligibility.ts) stay
 * authoritative. Pages are read in the server's order (namespace/name) until one holds an
 * eligible host this process is not claiming already.
 */
import type { BareMetalHost } from '../api/baremetalhost.ts';
import { R } from '../api/resources.ts';
import { CLUSTER_NAME_LABEL, CONSUMER_LABEL, NODE_REUSE_LABEL } from '../api/wellknown.ts';
import type { KubeClient } from '../kube/client.ts';
import {
  type CompiledSelector,
  type Requirement,
  selectorMentions,
  serverLabelSelector,
} from '../selectors/labels.ts';

/** Hosts per page of a claim's candidate list (objects listed per claim, without conflicts). */
export const CANDIDATE_PAGE_SIZE = 4;

/**
 * A requirement in the API server's selector syntax, or undefined when it stays client-side only:
 * gt/lt (integer parsing differs between Go and this client for signs and sizes) and empty values.
 */
export function serverRequirement(r: Requirement): string | undefined {
  if (r.values.some((v) => v === '')) return undefined;
  switch (r.op) {
    case 'exists':
      return r.key;
    case 'doesnotexist':
      return `!${r.key}`;
    case '=':
      return `${r.key}=${r.values[0]}`;
    case '!=':
      return `${r.key}!=${r.values[0]}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.op} (${r.values.join(',')})`;
    default:
      return undefined;
  }
}

/** The labelSelector of every host `selector` matches, as far as the server can say (the client re-checks). */
export function selectorHosts(selector: CompiledSelector, extra: readonly string[] = []): string {
  const terms: string[] = [];
  for (const r of selector.requirements) {
    const t = serverRequirement(r);
    if (t) terms.push(t);
  }
  return serverLabelSelector(selector.matchLabels, [...terms, ...extra]);
}

/**
 * The labelSelector of hosts that may be free for `selector`: claimed hosts carry the cluster-name
 * and consumer labels (a claim writes them with the consumerRef, a release removes them with it),
 * and a host booked for node reuse is never available to a plain claim (the reuse list is asked
 * separately). A label the host selector itself mentions is left to it. `extra` terms are added.
 */
export function freeHostSelector(selector: CompiledSelector, extra: readonly string[] = []): string {
  const free = [CLUSTER_NAME_LABEL, CONSUMER_LABEL, NODE_REUSE_LABEL]
    .filter((key) => !selectorMentions(selector, key))
    .map((key) => `!${key}`);
  return selectorHosts(selector, [...free, ...extra]);
}

/**
 * Hosts this process is claiming or claimed a moment ago: concurrent claims in one process (a
 * worker's slots, one Lambda batch) pass over each other's picks instead of racing for them. A
 * hint only: across processes the resourceVersion-checked claim stays the lock.
 */
export class ClaimHints {
  private readonly until = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  constructor(ttlMs = 30_000, now: () => number = Date.now) {
    this.ttlMs = ttlMs;
    this.now = now;
  }
  private key = (h: BareMetalHost) => `${h.metadata.namespace}/${h.metadata.name}`;
  mark(h: BareMetalHost): void {
    const t = this.now();
    // Entries expire in insertion order: drop the expired ones from the front.
    for (const [k, u] of this.until) {
      if (u > t) break;
      this.until.delete(k);
    }
    const k = this.key(h);
    this.until.delete(k);
    this.until.set(k, t + this.ttlMs);
  }
  has(h: BareMetalHost): boolean {
    const u = this.until.get(this.key(h));
    return u !== undefined && u > this.now();
  }
  get size(): number {
    return this.until.size;
  }
}

/** The process's hints, shared by every claim in it. */
export const processClaimHints = new ClaimHints();

/** What the pages read through: a cluster's client, or a reader that may ignore selector and limit (a preview). */
export type HostLister = Pick<KubeClient, 'list'>;

/** Reads a candidate list page by page (`limit` + `continue`). */
export class CandidatePages {
  /** Hosts read so far. */
  considered = 0;
  private cont: string | undefined;
  private started = false;
  private readonly client: HostLister;
  private readonly namespace: string;
  private readonly labelSelector: string;
  private readonly pageSize: number;
  constructor(client: HostLister, namespace: string, labelSelector: string, pageSize = CANDIDATE_PAGE_SIZE) {
    this.client = client;
    this.namespace = namespace;
    this.labelSelector = labelSelector;
    this.pageSize = pageSize;
  }
  get exhausted(): boolean {
    return this.started && !this.cont;
  }
  /** The next page; empty once exhausted. */
  async next(): Promise<BareMetalHost[]> {
    if (this.exhausted) return [];
    const page = await this.client.list(R.BareMetalHost, this.namespace, {
      labelSelector: this.labelSelector,
      limit: this.pageSize,
      maxPages: 1,
      continue: this.cont,
    });
    this.started = true;
    this.cont = page.continue;
    this.considered += page.items.length;
    return page.items;
  }
}

export interface SamplerOptions {
  /** Page size (default CANDIDATE_PAGE_SIZE). */
  pageSize?: number | undefined;
  /** Stop reading pages once this many eligible hosts are known (default 1: the first page with one). */
  enough?: number | undefined;
  /** Hosts other claims of this process picked (default: the process's). */
  hints?: ClaimHints | undefined;
}

/**
 * The eligible hosts a claim knows of, and the one pick step over them (every claim, whatever its
 * consumer, picks through it). A pool of hosts read beforehand has no more to read; the sampler
 * below reads candidate pages as it goes.
 */
export class CandidatePool {
  eligible: BareMetalHost[];
  readonly hints: ClaimHints;
  private readonly given: number;
  constructor(eligible: BareMetalHost[] = [], hints: ClaimHints = processClaimHints) {
    this.eligible = eligible;
    this.given = eligible.length;
    this.hints = hints;
  }
  /** Hosts read so far. */
  get considered(): number {
    return this.given;
  }
  /** Reads more eligible hosts while there may be some (none here). */
  async fill(): Promise<void> {}
  /**
   * One pick: `choose` is shown the known eligible hosts that no other claim of the process picked
   * (all of them when each one was; the next page is read first when none is known, and the list is
   * empty once none is left), and the host its answer names (`hostOf`; none for an answer that
   * picks nothing) is taken out of the pool and marked as picked. The choice and its mark are one
   * synchronous step, so two claims of the process never pick the same host.
   */
  async pick<C>(
    choose: (hosts: readonly BareMetalHost[]) => C,
    hostOf: (choice: C) => BareMetalHost | undefined,
  ): Promise<C> {
    if (this.eligible.length === 0) await this.fill();
    const unpicked = this.eligible.filter((h) => !this.hints.has(h));
    const choice = choose(unpicked.length > 0 ? unpicked : this.eligible);
    const host = hostOf(choice);
    if (host) {
      this.eligible.splice(this.eligible.indexOf(host), 1);
      this.hints.mark(host);
    }
    return choice;
  }
}

/**
 * Reads the candidate list page by page until a page holds an eligible host that no other claim of
 * this process has picked (those are kept as the last resort when the list ends). `isEligible` is
 * the consumer's own client-side check (authoritative; the server's selector only narrows).
 */
export class CandidateSampler extends CandidatePool {
  private hinted: BareMetalHost[] = [];
  private readonly pages: CandidatePages;
  private readonly isEligible: (h: BareMetalHost) => boolean;
  private readonly enough: number;
  constructor(
    client: HostLister,
    namespace: string,
    labelSelector: string,
    isEligible: (h: BareMetalHost) => boolean,
    opts: SamplerOptions = {},
  ) {
    super([], opts.hints);
    this.pages = new CandidatePages(client, namespace, labelSelector, opts.pageSize);
    this.isEligible = isEligible;
    this.enough = opts.enough ?? 1;
  }
  override get considered(): number {
    return this.pages.considered;
  }
  get exhausted(): boolean {
    return this.pages.exhausted;
  }
  override async fill(): Promise<void> {
    while (this.eligible.length < this.enough && !this.exhausted) {
      for (const h of await this.pages.next()) {
        if (this.isEligible(h)) (this.hints.has(h) ? this.hinted : this.eligible).push(h);
      }
    }
    if (this.eligible.length === 0) {
      this.eligible = this.hinted;
      this.hinted = [];
    }
  }
}
