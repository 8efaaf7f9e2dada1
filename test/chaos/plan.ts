/**
 * The chaos suite's pieces, pure or nearly (no wiring; run.ts composes them with runDev's hooks):
 *
 *   - faultRules: the API servers' fault plan (rule format of infra/local/apiserver/faults.ts):
 *     409s and 5xx on the product's writes, latency on any request, watch drops, 410s on watches;
 *   - crashingTable: wraps every core so that, in a fraction of invocations, a write succeeds and
 *     then the "process dies" (a SimulatedCrash is thrown before the next step), the message is
 *     redelivered and the next invocation must pick up from the half-done state;
 *   - duplicatePlan: which relay messages are sent a second time, and how late (duplicates that
 *     overtake or trail later messages: reordering);
 *   - InvariantChecker: no host held by two machines (by consumerRef and by the Metal3Machine
 *     annotation), no Metal3DataTemplate index and no IP address handed out twice.
 *
 * Every random decision comes from a seeded PRNG stream, so a seed replays the same decisions
 * (the interleaving of concurrent work is the scheduler's, not ours).
 */
import type { FunctionName, MessageEnvelope } from '../../events/envelope.ts';
import { seededRandom } from '../../infra/local/apiserver/clock.ts';
import type { FaultRule } from '../../infra/local/apiserver/faults.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { ReconcileContext, ReconcileFn } from '../../shared/reconcile/context.ts';
import type { FunctionTable } from '../../shared/runtimes/dispatch.ts';

/** mulberry32, the PRNG the embedded API server's fault injector uses. */
export { seededRandom };

/** Independent streams from one seed (one per concern, so adding draws in one leaves the rest alone). */
export function stream(seed: number, name: string): () => number {
  let h = seed >>> 0;
  for (const c of name) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return seededRandom(h);
}

// ---------------------------------------------------------------------------------------------
// API server faults

export interface FaultPlanOptions {
  /** Probability of a 409 on an update/patch/delete of a product resource (default 0.10). */
  conflict?: number;
  /** Probability of a 500/503 on a write of a product resource (default 0.05). */
  serverError?: number;
  /** Probability and size of added latency on any request (default 0.2, 25 ms; 0.02, 250 ms). */
  latency?: { probability: number; ms: number }[];
  /** Probability that a watch ends after a few events (default 0.3, after 20 events). */
  watchDrop?: { probability: number; after: number };
  /** Probability that a watch request is answered 410 Gone (default 0.05). */
  watchGone?: number;
}

/**
 * What our functions write in the management cluster, by resource and verb. Only these get the
 * 409s and 5xx: the simulators' own kinds (Machines, MachineSets, KubeadmControlPlanes …), their
 * creates and deletes of Metal3Machines and the host status the baremetal-operator simulator writes
 * are left alone, so the faults land on the product (a simulator shares a few of these, e.g.
 * bootstrap Secrets, and retries like a real controller).
 */
export const PRODUCT_WRITES: Record<string, readonly string[]> = {
  metal3machines: ['update', 'patch'],
  'metal3machines/status': ['update', 'patch'],
  metal3clusters: ['update', 'patch'],
  'metal3clusters/status': ['update', 'patch'],
  metal3datatemplates: ['update', 'patch'],
  'metal3datatemplates/status': ['update', 'patch'],
  metal3dataclaims: ['create', 'update', 'patch', 'delete'],
  'metal3dataclaims/status': ['update', 'patch'],
  metal3datas: ['create', 'update', 'patch', 'delete'],
  'metal3datas/status': ['update', 'patch'],
  ipclaims: ['create', 'update', 'patch', 'delete'],
  'ipclaims/status': ['update', 'patch'],
  ipaddresses: ['create', 'update', 'patch', 'delete'],
  ippools: ['update'],
  'ippools/status': ['update', 'patch'],
  baremetalhosts: ['update', 'patch'],
  secrets: ['create', 'delete'],
};

/** Workload cluster: resolveProviderID patches Nodes (the kubelet simulator creates them). */
export const WORKLOAD_WRITES: Record<string, readonly string[]> = { nodes: ['update', 'patch'] };

/** The verbs that may answer 409 (a create conflicts only as AlreadyExists, by name). */
const CONFLICT_VERBS = new Set(['update', 'patch', 'delete']);

export interface FaultPlan {
  rules: FaultRule[];
  /** What each rule stands for, index-aligned with `rules` (to sum `faults.hits()`). */
  labels: ('409' | '5xx' | 'latency' | 'watch-drop' | 'watch-410')[];
}

export function faultRules(writes: Record<string, readonly string[]>, o: FaultPlanOptions = {}): FaultPlan {
  const rules: FaultRule[] = [];
  const labels: FaultPlan['labels'] = [];
  const conflict = o.conflict ?? 0.1;
  const serverError = o.serverError ?? 0.05;
  for (const [resource, verbs] of Object.entries(writes)) {
    for (const verb of verbs) {
      const canConflict = CONFLICT_VERBS.has(verb) && conflict > 0;
      if (canConflict) {
        rules.push({ verb, resource, error: 409, probability: conflict });
        labels.push('409');
      }
      if (serverError <= 0) continue;
      // The first matching error rule wins: scale so that the overall 5xx share is `serverError`.
      const p = canConflict ? serverError / (1 - conflict) : serverError;
      rules.push({ verb, resource, error: rules.length % 2 ? 503 : 500, probability: Math.min(1, p) });
      labels.push('5xx');
    }
  }
  for (const l of o.latency ?? [
    { probability: 0.2, ms: 25 },
    { probability: 0.02, ms: 250 },
  ]) {
    rules.push({ latencyMs: l.ms, probability: l.probability });
    labels.push('latency');
  }
  const drop = o.watchDrop ?? { probability: 0.3, after: 20 };
  if (drop.probability > 0) {
    rules.push({ verb: 'watch', dropWatchAfter: drop.after, probability: drop.probability });
    labels.push('watch-drop');
  }
  const gone = o.watchGone ?? 0.05;
  if (gone > 0) {
    rules.push({ verb: 'watch', error: 410, probability: gone });
    labels.push('watch-410');
  }
  return { rules, labels };
}

/** Sums `faults.hits()` by label. */
export function sumHits(plan: FaultPlan, hits: readonly number[]): Record<string, number> {
  const out: Record<string, number> = {};
  plan.labels.forEach((l, i) => {
    out[l] = (out[l] ?? 0) + (hits[i] ?? 0);
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Worker crashes between two writes

export class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash';
}

const WRITE_METHODS = new Set(['create', 'replace', 'replaceStatus', 'patch', 'delete']);

export interface CrashStats {
  invocations: number;
  /** Invocations chosen to crash (they crash only if they write enough). */
  armed: number;
  /** Crashes that happened (after a successful write). */
  crashed: number;
}

/** The write budget of one invocation: crash right after write number `after`. */
export interface CrashBudget {
  after: number;
  writes: number;
  crashed: boolean;
}

/**
 * A KubeClient whose write methods count against `budget`: the write that reaches `budget.after`
 * succeeds and then throws SimulatedCrash instead of returning (the write is done, the caller never
 * learns it: the process "died"); every write after that fails too (nothing runs after a crash).
 */
export function crashingClient(client: KubeClient, budget: CrashBudget, onCrash: () => void): KubeClient {
  return new Proxy(client, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      if (typeof prop !== 'string' || !WRITE_METHODS.has(prop)) return v.bind(target);
      return async (...args: unknown[]) => {
        if (budget.crashed) throw new SimulatedCrash('simulated crash: the process is gone');
        const r = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        budget.writes++;
        if (budget.writes === budget.after) {
          budget.crashed = true;
          onCrash();
          throw new SimulatedCrash(`simulated crash after write #${budget.writes} (${prop})`);
        }
        return r;
      };
    },
  });
}

/**
 * Wraps each core: with probability `p` an invocation is armed to crash right after its k-th
 * successful write (k uniform in 1..3; an invocation that writes less finishes normally). Writes
 * through the management client and through workload clients share the budget.
 */
export function crashingTable(
  fns: FunctionTable,
  p: number,
  random: () => number,
  stats: CrashStats = { invocations: 0, armed: 0, crashed: 0 },
): FunctionTable {
  const out: FunctionTable = {};
  for (const [name, fn] of Object.entries(fns) as [FunctionName, ReconcileFn][]) {
    out[name] = async (ctx: ReconcileContext, msg: MessageEnvelope) => {
      stats.invocations++;
      if (random() >= p) return fn(ctx, msg);
      stats.armed++;
      const budget: CrashBudget = { after: 1 + Math.floor(random() * 3), writes: 0, crashed: false };
      const onCrash = () => {
        stats.crashed++;
      };
      const wrapped: ReconcileContext = {
        ...ctx,
        client: crashingClient(ctx.client, budget, onCrash),
        workloadClient: async (ns, cluster) =>
          crashingClient(await ctx.workloadClient(ns, cluster), budget, onCrash),
      };
      return fn(wrapped, msg);
    };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Duplicates and reordering on the queue

export interface DuplicateDecision {
  duplicate: boolean;
  /** Seconds before the duplicate arrives (0..maxDelay): later messages may overtake it. */
  delaySeconds: number;
}

export function duplicatePlan(p: number, random: () => number, maxDelaySeconds = 3): () => DuplicateDecision {
  return () => {
    if (random() >= p) return { duplicate: false, delaySeconds: 0 };
    return { duplicate: true, delaySeconds: Math.floor(random() * (maxDelaySeconds + 1)) };
  };
}

// ---------------------------------------------------------------------------------------------
// Invariants

export interface Violation {
  invariant:
    | 'host-two-machines'
    | 'host-annotation-mismatch'
    | 'host-two-owners'
    | 'host-claim-mismatch'
    | 'index-twice'
    | 'address-twice';
  detail: string;
}

export interface Snapshot {
  metal3Machines: KubeObject[];
  hosts: KubeObject[];
  metal3Datas: KubeObject[];
  templates: KubeObject[];
  ipAddresses: KubeObject[];
  ipPools: KubeObject[];
  /** vMetal NodeClaims (empty when the run has none). */
  nodeClaims?: KubeObject[];
}

const key = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const HOST_ANNOTATION = 'metal3.io/BareMetalHost';

function duplicates<T>(entries: [T, string][]): Map<T, string[]> {
  const by = new Map<T, string[]>();
  for (const [k, who] of entries) by.set(k, [...(by.get(k) ?? []), who]);
  return new Map([...by].filter(([, v]) => v.length > 1));
}

/** Canonical text of an IP (IPv6 zero runs and case differ in spelling, not in value). */
export function canonicalIp(ip: string): string {
  if (!ip.includes(':')) return ip.trim();
  const [head, tail] = ip.toLowerCase().split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => g.replace(/^0+(?=.)/, '')).join(':');
}

/** Pure: every violation visible in one snapshot. */
export function checkInvariants(s: Snapshot): Violation[] {
  const out: Violation[] = [];
  // A host is held by one machine: no two live machines carry the same host annotation, and a live
  // machine's host names that machine as its consumer (or nobody yet, mid-claim).
  const annotated = s.metal3Machines
    .filter((m) => !m.metadata.deletionTimestamp && m.metadata.annotations?.[HOST_ANNOTATION])
    .map((m) => [m.metadata.annotations![HOST_ANNOTATION]!, key(m)] as [string, string]);
  for (const [host, machines] of duplicates(annotated)) {
    out.push({ invariant: 'host-two-machines', detail: `host ${host} annotated on ${machines.join(', ')}` });
  }
  const hosts = new Map(s.hosts.map((h) => [key(h), h]));
  for (const [hostKey, machine] of annotated) {
    const h = hosts.get(hostKey);
    const ref = (
      h?.spec as { consumerRef?: { name?: string; namespace?: string; kind?: string } } | undefined
    )?.consumerRef;
    if (!ref) continue;
    const refKey = `${ref.namespace ?? h?.metadata.namespace ?? ''}/${ref.name}`;
    if (refKey !== machine) {
      out.push({
        invariant: 'host-annotation-mismatch',
        detail: `${machine} is annotated with host ${hostKey}, whose consumerRef is ${refKey}`,
      });
    }
  }
  out.push(...claimViolations(s, annotated));
  // Indexes: per template, one Metal3Data per claim, and the template's status maps no index twice.
  const dataByTemplate = new Map<string, KubeObject[]>();
  for (const d of s.metal3Datas) {
    if (d.metadata.deletionTimestamp) continue;
    const spec = d.spec as { template?: { name?: string }; claim?: { name?: string } } | undefined;
    const t = `${d.metadata.namespace}/${spec?.template?.name}`;
    dataByTemplate.set(t, [...(dataByTemplate.get(t) ?? []), d]);
  }
  for (const [t, datas] of dataByTemplate) {
    const claims = datas.map(
      (d) =>
        [(d.spec as { claim?: { name?: string } }).claim?.name ?? '', d.metadata.name!] as [string, string],
    );
    for (const [claim, names] of duplicates(claims)) {
      out.push({
        invariant: 'index-twice',
        detail: `template ${t}: claim ${claim} holds ${names.join(', ')}`,
      });
    }
  }
  for (const t of s.templates) {
    const indexes = ((t.status as { indexes?: Record<string, number> } | undefined)?.indexes ?? {}) as Record<
      string,
      number
    >;
    for (const [index, claims] of duplicates(
      Object.entries(indexes).map(([c, i]) => [i, c] as [number, string]),
    )) {
      out.push({
        invariant: 'index-twice',
        detail: `template ${key(t)}: index ${index} given to ${claims.join(', ')}`,
      });
    }
  }
  // Addresses: per pool, each address once (live objects), each claim one address.
  const addrs = s.ipAddresses.filter((a) => !a.metadata.deletionTimestamp);
  const perPool = new Map<string, KubeObject[]>();
  for (const a of addrs) {
    const spec = a.spec as { pool?: { name?: string } };
    const p = `${a.metadata.namespace}/${spec.pool?.name}`;
    perPool.set(p, [...(perPool.get(p) ?? []), a]);
  }
  for (const [pool, list] of perPool) {
    const byIp = list.map(
      (a) =>
        [canonicalIp(String((a.spec as { address?: string }).address ?? '')), a.metadata.name!] as [
          string,
          string,
        ],
    );
    for (const [ip, names] of duplicates(byIp)) {
      out.push({ invariant: 'address-twice', detail: `pool ${pool}: ${ip} in ${names.join(', ')}` });
    }
    const byClaim = list.map(
      (a) =>
        [(a.spec as { claim?: { name?: string } }).claim?.name ?? '', a.metadata.name!] as [string, string],
    );
    for (const [claim, names] of duplicates(byClaim)) {
      out.push({
        invariant: 'address-twice',
        detail: `pool ${pool}: claim ${claim} holds ${names.join(', ')}`,
      });
    }
  }
  // Across pools: a vMetal pool (owned by a NodeProvider) shares no live address with any other
  // pool, CAPM3's included (its network overlapping another pool is a provider condition). Two
  // CAPM3 pools may reuse private addresses on separate networks.
  const vmetalPools = new Set(
    s.ipPools.filter((p) => p.metadata.ownerReferences?.some((r) => r.kind === 'NodeProvider')).map(key),
  );
  const everyPool = addrs.map(
    (a) =>
      [
        canonicalIp(String((a.spec as { address?: string }).address ?? '')),
        `${a.metadata.namespace}/${(a.spec as { pool?: { name?: string } }).pool?.name}`,
      ] as [string, string],
  );
  for (const [ip, pools] of duplicates(everyPool)) {
    if (new Set(pools).size > 1 && pools.some((p) => vmetalPools.has(p)))
      out.push({
        invariant: 'address-twice',
        detail: `${ip} live in pools ${[...new Set(pools)].join(', ')}`,
      });
  }
  for (const p of s.ipPools) {
    const indexes = (p.status as { indexes?: Record<string, string> } | undefined)?.indexes ?? {};
    for (const [ip, claims] of duplicates(
      Object.entries(indexes).map(([c, ip]) => [canonicalIp(ip), c] as [string, string]),
    )) {
      out.push({
        invariant: 'address-twice',
        detail: `pool ${key(p)}: status gives ${ip} to ${claims.join(', ')}`,
      });
    }
  }
  return out;
}

/**
 * A host is held by one owner across both models: no two live claims name the same host, no host
 * is a claim's and a machine's at once, and a claim's host names that claim as its consumer (or
 * nobody, mid-claim or mid-release).
 */
function claimViolations(s: Snapshot, annotated: [string, string][]): Violation[] {
  const out: Violation[] = [];
  const held = (s.nodeClaims ?? [])
    .filter((c) => !c.metadata.deletionTimestamp)
    .map((c) => {
      const st = (c.status ?? {}) as { host?: string; hostNamespace?: string };
      return st.host ? ([`${st.hostNamespace}/${st.host}`, key(c)] as [string, string]) : undefined;
    })
    .filter((e): e is [string, string] => e !== undefined);
  for (const [host, claims] of duplicates(held))
    out.push({ invariant: 'host-two-owners', detail: `host ${host} held by claims ${claims.join(', ')}` });
  const machineOf = new Map(annotated);
  const hosts = new Map(s.hosts.map((h) => [key(h), h]));
  for (const [host, claim] of held) {
    const machine = machineOf.get(host);
    if (machine)
      out.push({
        invariant: 'host-two-owners',
        detail: `host ${host} held by claim ${claim} and machine ${machine}`,
      });
    const ref = (
      hosts.get(host)?.spec as { consumerRef?: { kind?: string; name?: string; namespace?: string } }
    )?.consumerRef;
    if (ref && (ref.kind !== 'NodeClaim' || `${ref.namespace}/${ref.name}` !== claim))
      out.push({
        invariant: 'host-claim-mismatch',
        detail: `claim ${claim} holds host ${host}, whose consumerRef is ${ref.kind} ${ref.namespace}/${ref.name}`,
      });
  }
  return out;
}

/**
 * Runs checkInvariants continuously (throttled) on fresh lists. Lists of different kinds are not
 * one consistent snapshot, so a cross-kind finding (annotation vs consumerRef) counts only when
 * the next check confirms it; single-kind findings are reported at once.
 */
export class InvariantChecker {
  readonly violations: Violation[] = [];
  checks = 0;
  /** Checks that could not list (they are simply skipped; the next one covers them). */
  listErrors = 0;
  private readonly seen = new Set<string>();
  private suspect = new Set<string>();
  private running: Promise<void> | undefined;
  private again = false;
  private last = 0;
  private readonly list: () => Promise<Snapshot>;
  private readonly minIntervalMs: number;

  constructor(list: () => Promise<Snapshot>, minIntervalMs = 250) {
    this.list = list;
    this.minIntervalMs = minIntervalMs;
  }

  /** Asks for a check; at most one runs at a time, and one more is queued behind it. */
  poke(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    const wait = Math.max(0, this.last + this.minIntervalMs - Date.now());
    this.running = new Promise<void>((r) => setTimeout(r, wait))
      .then(async () => {
        await this.checkOnce();
      })
      .catch(() => {
        this.listErrors++;
      })
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.poke();
        }
      });
  }

  async checkOnce(): Promise<Violation[]> {
    this.last = Date.now();
    const found = checkInvariants(await this.list());
    this.checks++;
    const nextSuspect = new Set<string>();
    const fresh: Violation[] = [];
    for (const v of found) {
      const id = `${v.invariant}|${v.detail}`;
      const crossKind =
        v.invariant === 'host-annotation-mismatch' ||
        v.invariant === 'host-claim-mismatch' ||
        (v.invariant === 'host-two-owners' && v.detail.includes(' and machine '));
      if (crossKind && !this.suspect.has(id)) {
        nextSuspect.add(id);
        continue;
      }
      if (crossKind) nextSuspect.add(id);
      if (!this.seen.has(id)) {
        this.seen.add(id);
        this.violations.push(v);
        fresh.push(v);
      }
    }
    this.suspect = nextSuspect;
    return fresh;
  }

  /** Waits for the check in progress (and the one queued behind it). */
  async settle(): Promise<void> {
    while (this.running) await this.running;
  }
}

/** The lists a Snapshot needs, from one client. */
export async function listSnapshot(
  client: KubeClient,
  R: typeof import('../../shared/api/resources.ts').R,
): Promise<Snapshot> {
  const [metal3Machines, hosts, metal3Datas, templates, ipAddresses, ipPools, nodeClaims] = await Promise.all(
    [
      client.list(R.Metal3Machine),
      client.list(R.BareMetalHost),
      client.list(R.Metal3Data),
      client.list(R.Metal3DataTemplate),
      client.list(R.IPAddress),
      client.list(R.IPPool),
      client.list(R.NodeClaim),
    ],
  );
  return {
    metal3Machines: metal3Machines.items,
    hosts: hosts.items,
    metal3Datas: metal3Datas.items,
    templates: templates.items,
    ipAddresses: ipAddresses.items,
    ipPools: ipPools.items,
    nodeClaims: nodeClaims.items,
  };
}
