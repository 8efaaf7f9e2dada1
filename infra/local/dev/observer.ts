/**
 * Watches the objects that make up a machine's progress (management: Metal3Machine, Machine,
 * MachineSet, BareMetalHost; each workload cluster: Node) and records when each machine reached
 * each phase. Only the run's machines are followed when the run says what it applied (a Machine
 * that belongs to it, ./ownership.ts): on a shared cluster other people's machines are not ours to
 * wait for. It uses its own client and counters, so what it reads never counts as the product's
 * requests.
 */
import { R } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { type Cache, type Change, informer, keyOf } from '../informer.ts';
import { belongsTo } from './ownership.ts';
import { claimPhase, machinePhase, type Phase } from './phase.ts';

export interface MachineTimeline {
  /** `ns/name` of the Metal3Machine, or `NodeClaim ns/name` for a vMetal claim. */
  key: string;
  /** Which model: a CAPM3 machine (default) or a vMetal NodeClaim. */
  model?: 'capm3' | 'vmetal';
  firstSeen: number;
  phase: Phase;
  /** ms timestamps of the first time each phase was observed. */
  at: Partial<Record<Phase, number>>;
  /** When the host first carried our spec (image): from here the (simulated) BMO works, not us. */
  hostHandedOver?: number;
  /** Time the host spent in simulated hardware states (provisioning) and the kubelet took. */
  hostProvisioningStarted?: number;
  hostProvisioned?: number;
  nodeSeen?: number;
  /**
   * When the Metal3Machine first had its providerID and `status.ready`: our last step is done;
   * what follows (the Machine's nodeRef, Running) is CAPI's (simulated) work.
   */
  infraReady?: number;
  host?: string;
}

export interface ProgressObserverOptions {
  /** The uids of what the run applied: only machines that belong to them are followed (default: all). */
  applied?: ReadonlySet<string> | undefined;
  /**
   * Follow vMetal NodeClaims too; `isRunClaim` says which are the run's (default: all). Their
   * timelines are keyed `NodeClaim ns/name`.
   */
  claims?: { isRunClaim?: (claim: KubeObject) => boolean } | undefined;
}

export const CLAIM_KEY_PREFIX = 'NodeClaim ';

/** When the host was handed over (our image on it), started provisioning and was provisioned. */
function markHost(tl: MachineTimeline, host: KubeObject, now: number): void {
  const state = (host.status as { provisioning?: { state?: string } } | undefined)?.provisioning?.state;
  if ((host.spec as { image?: { url?: string } } | undefined)?.image?.url) tl.hostHandedOver ??= now;
  if (state === 'provisioning') tl.hostProvisioningStarted ??= now;
  if (state === 'provisioned') tl.hostProvisioned ??= now;
}

/** `key → set of keys` index helpers. */
function link(index: Map<string, Set<string>>, from: string, to: string): void {
  let set = index.get(from);
  if (!set) {
    set = new Set();
    index.set(from, set);
  }
  set.add(to);
}
function unlink(index: Map<string, Set<string>>, from: string | undefined, to: string): void {
  if (from === undefined) return;
  const set = index.get(from);
  set?.delete(to);
  if (set?.size === 0) index.delete(from);
}

const HOST_ANNOTATION = 'metal3.io/BareMetalHost';
const NODE_HOST_UID_LABEL = 'metal3.io/uuid';

/**
 * Each watch event refreshes only the timelines its object concerns (a Metal3Machine's own, a
 * Machine's Metal3Machine, a host's machines and claims, a Node's host's machine), found through
 * indexes kept here, so following N machines costs O(1) per event; the listeners are told once per
 * turn of the event loop. (Recomputing every timeline on every event made the observer the fastest
 * growing cost of a `metal3fn dev` run: O(N) per event, O(N²) per run.) A re-list recomputes all.
 */
export class ProgressObserver {
  readonly timelines = new Map<string, MachineTimeline>();
  private readonly m3ms: Cache = new Map();
  private readonly machines: Cache = new Map();
  private readonly machineSets: Cache = new Map();
  private readonly hosts: Cache = new Map();
  private readonly claims: Cache = new Map();
  private readonly claimOpts: ProgressObserverOptions['claims'];
  /** Nodes per workload cluster. */
  private readonly nodes = new Map<string, Cache>();
  private readonly stops: { stop(): void }[] = [];
  private readonly listeners = new Set<(changed: ReadonlySet<string>) => void>();
  /** Timeline keys refreshed since the listeners were last told. */
  private readonly changed = new Set<string>();
  private readonly applied: ReadonlySet<string> | undefined;
  /** Machines and MachineSets by uid (ownership walks of `isRunMachine`). */
  private readonly owners = new Map<string, KubeObject>();
  /** Metal3Machines seen that are not (yet) known to be the run's: a Machine or MachineSet event may make them so. */
  private readonly pending = new Set<string>();
  /** Host key → Metal3Machines whose annotation names it; m3m key → the host key indexed. */
  private readonly m3msByHost = new Map<string, Set<string>>();
  private readonly hostOfM3m = new Map<string, string>();
  /** Host key → claims whose status names it; claim key → the host key indexed. */
  private readonly claimsByHost = new Map<string, Set<string>>();
  private readonly hostOfClaim = new Map<string, string>();
  private readonly hostKeyByUid = new Map<string, string>();
  /** Host uid → `cluster|node` keys of the Nodes labelled with it. */
  private readonly nodesByHostUid = new Map<string, Set<string>>();
  /** `<cluster namespace>/<node name>` → `cluster|node` keys (a tenant's Node is named after its claim). */
  private readonly nodesByName = new Map<string, Set<string>>();
  private notifyScheduled = false;

  constructor(management: KubeClient, opts: ProgressObserverOptions = {}) {
    this.applied = opts.applied;
    this.claimOpts = opts.claims;
    this.stops.push(informer(management, R.Metal3Machine, this.m3ms, (c) => this.onMetal3Machine(c)));
    this.stops.push(informer(management, R.Machine, this.machines, (c) => this.onOwner(c, true)));
    if (this.applied)
      this.stops.push(informer(management, R.MachineSet, this.machineSets, (c) => this.onOwner(c, false)));
    this.stops.push(informer(management, R.BareMetalHost, this.hosts, (c) => this.onHost(c)));
    if (opts.claims) this.stops.push(informer(management, R.NodeClaim, this.claims, (c) => this.onClaim(c)));
  }

  /** Follows the Nodes of one more workload cluster (each cluster once). */
  addWorkload(key: string, client: KubeClient): void {
    if (this.nodes.has(key)) return;
    const cache: Cache = new Map();
    this.nodes.set(key, cache);
    this.stops.push(informer(client, R.Node, cache, (c) => this.onNode(key, c)));
  }

  /** Whether a Metal3Machine is one of the run's machines (its Machine belongs to what the run applied). */
  isRunMachine(m3m: KubeObject): boolean {
    if (!this.applied) return true;
    const machine = this.machineOf(m3m);
    if (!machine) return false;
    return belongsTo(machine, this.applied, this.owners);
  }

  /** `fn` is told, once per turn of the event loop, which timelines were refreshed (by key). */
  onChange(fn: (changed: ReadonlySet<string>) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The current objects of a machine or claim (for the stuck report). */
  objectsOf(key: string): { m3m?: KubeObject; machine?: KubeObject; host?: KubeObject; claim?: KubeObject } {
    if (key.startsWith(CLAIM_KEY_PREFIX)) {
      const claim = this.claims.get(key.slice(CLAIM_KEY_PREFIX.length));
      return { claim, host: claim ? this.claimHost(claim) : undefined };
    }
    const m3m = this.m3ms.get(key);
    return { m3m, machine: m3m ? this.machineOf(m3m) : undefined, host: m3m ? this.hostOf(m3m) : undefined };
  }

  /** Whether the object a timeline follows still exists. */
  exists(key: string): boolean {
    const o = this.objectsOf(key);
    return Boolean(o.m3m ?? o.claim);
  }

  private claimHostKey(claim: KubeObject): string | undefined {
    const st = claim.status as { host?: string; hostNamespace?: string } | undefined;
    return st?.host ? `${st.hostNamespace ?? ''}/${st.host}` : undefined;
  }

  private claimHost(claim: KubeObject): KubeObject | undefined {
    const k = this.claimHostKey(claim);
    return k ? this.hosts.get(k) : undefined;
  }

  hostCount(): number {
    return this.hosts.size;
  }

  private machineOf(m3m: KubeObject): KubeObject | undefined {
    const owner = m3m.metadata.ownerReferences?.find((r) => r.kind === 'Machine');
    return owner ? this.machines.get(`${m3m.metadata.namespace}/${owner.name}`) : undefined;
  }

  private hostOf(m3m: KubeObject): KubeObject | undefined {
    const ann = m3m.metadata.annotations?.[HOST_ANNOTATION];
    return ann ? this.hosts.get(ann) : undefined;
  }

  // ---- events ----------------------------------------------------------------------------------

  private onMetal3Machine(c: Change): void {
    if (!c) {
      this.recomputeAll();
      return;
    }
    this.refreshMachine(keyOf(c.object), Date.now());
    this.notify();
  }

  /** A Machine (its Metal3Machine's phase) or MachineSet (ownership) changed. */
  private onOwner(c: Change, isMachine: boolean): void {
    if (!c) {
      this.recomputeAll();
      return;
    }
    const uid = c.object.metadata.uid;
    if (uid) {
      if (c.type === 'DELETED') this.owners.delete(uid);
      else this.owners.set(uid, c.object);
    }
    const now = Date.now();
    const infra = (c.object.spec as { infrastructureRef?: { name?: string } } | undefined)?.infrastructureRef;
    if (!isMachine) for (const k of [...this.pending]) this.refreshMachine(k, now);
    else if (infra?.name) this.refreshMachine(`${c.object.metadata.namespace ?? ''}/${infra.name}`, now);
    this.notify();
  }

  private onHost(c: Change): void {
    if (!c) {
      this.recomputeAll();
      return;
    }
    const key = keyOf(c.object);
    const uid = c.object.metadata.uid;
    if (uid) {
      if (c.type === 'DELETED') this.hostKeyByUid.delete(uid);
      else this.hostKeyByUid.set(uid, key);
    }
    this.refreshHostUsers(key, Date.now());
    this.notify();
  }

  private onClaim(c: Change): void {
    if (!c) {
      this.recomputeAll();
      return;
    }
    this.refreshClaim(keyOf(c.object), Date.now());
    this.notify();
  }

  private onNode(cluster: string, c: Change): void {
    if (!c) {
      this.recomputeAll();
      return;
    }
    const node = c.object;
    const nodeKey = `${cluster}|${node.metadata.name}`;
    const uid = node.metadata.labels?.[NODE_HOST_UID_LABEL];
    const name = `${cluster.split('/')[0]}/${node.metadata.name}`;
    if (c.type === 'DELETED') {
      unlink(this.nodesByHostUid, uid, nodeKey);
      unlink(this.nodesByName, name, nodeKey);
    } else {
      if (uid) link(this.nodesByHostUid, uid, nodeKey);
      link(this.nodesByName, name, nodeKey);
    }
    const now = Date.now();
    const hostKey = uid ? this.hostKeyByUid.get(uid) : undefined;
    if (hostKey) for (const k of [...(this.m3msByHost.get(hostKey) ?? [])]) this.refreshMachine(k, now);
    const claimKey = `${CLAIM_KEY_PREFIX}${name}`;
    if (this.timelines.has(claimKey) || this.claims.has(name)) this.refreshClaim(name, now);
    this.notify();
  }

  // ---- timelines -------------------------------------------------------------------------------

  private refreshHostUsers(hostKey: string, now: number): void {
    for (const k of [...(this.m3msByHost.get(hostKey) ?? [])]) this.refreshMachine(k, now);
    for (const k of [...(this.claimsByHost.get(hostKey) ?? [])]) this.refreshClaim(k, now);
  }

  /** Recomputes one Metal3Machine's timeline (`key` = ns/name) from the caches. */
  private refreshMachine(key: string, now: number): void {
    this.changed.add(key);
    const m3m = this.m3ms.get(key);
    const ann = m3m?.metadata.annotations?.[HOST_ANNOTATION];
    if (this.hostOfM3m.get(key) !== ann) {
      unlink(this.m3msByHost, this.hostOfM3m.get(key), key);
      if (ann) {
        link(this.m3msByHost, ann, key);
        this.hostOfM3m.set(key, ann);
      } else this.hostOfM3m.delete(key);
    }
    if (!m3m) {
      this.pending.delete(key);
      return;
    }
    let tl = this.timelines.get(key);
    if (!tl) {
      if (!this.isRunMachine(m3m)) {
        this.pending.add(key);
        return;
      }
      this.pending.delete(key);
      tl = { key, firstSeen: now, phase: 'waiting for host', at: {} };
      this.timelines.set(key, tl);
    }
    const host = this.hostOf(m3m);
    const phase = machinePhase({ m3m, machine: this.machineOf(m3m), host });
    tl.phase = phase;
    tl.at[phase] ??= now;
    const m3mStatus = m3m.status as { ready?: boolean } | undefined;
    if ((m3m.spec as { providerID?: string } | undefined)?.providerID && m3mStatus?.ready === true)
      tl.infraReady ??= now;
    if (host) {
      tl.host = keyOf(host);
      markHost(tl, host, now);
      if (host.metadata.uid && this.nodesByHostUid.has(host.metadata.uid)) tl.nodeSeen ??= now;
    }
  }

  /** Recomputes one claim's timeline (`k` = ns/name of the NodeClaim). */
  private refreshClaim(k: string, now: number): void {
    this.changed.add(`${CLAIM_KEY_PREFIX}${k}`);
    const claim = this.claims.get(k);
    const hostKey = claim ? this.claimHostKey(claim) : undefined;
    if (this.hostOfClaim.get(k) !== hostKey) {
      unlink(this.claimsByHost, this.hostOfClaim.get(k), k);
      if (hostKey) {
        link(this.claimsByHost, hostKey, k);
        this.hostOfClaim.set(k, hostKey);
      } else this.hostOfClaim.delete(k);
    }
    if (!claim) return;
    const key = `${CLAIM_KEY_PREFIX}${k}`;
    let tl = this.timelines.get(key);
    if (!tl) {
      if (this.claimOpts?.isRunClaim && !this.claimOpts.isRunClaim(claim)) return;
      tl = { key, model: 'vmetal', firstSeen: now, phase: 'waiting for host', at: {} };
      this.timelines.set(key, tl);
    }
    const host = this.claimHost(claim);
    tl.phase = claimPhase(claim, host);
    tl.at[tl.phase] ??= now;
    if (tl.phase === 'providerID' || tl.phase === 'Ready') tl.infraReady ??= now;
    if (host) {
      tl.host = keyOf(host);
      markHost(tl, host, now);
    }
    if (this.nodesByName.has(`${claim.metadata.namespace}/${claim.metadata.name}`)) tl.nodeSeen ??= now;
  }

  /** After a (re-)list: rebuilds the indexes from the caches and recomputes every timeline. */
  private recomputeAll(): void {
    const now = Date.now();
    this.owners.clear();
    for (const o of [...this.machines.values(), ...this.machineSets.values()])
      if (o.metadata.uid) this.owners.set(o.metadata.uid, o);
    this.hostKeyByUid.clear();
    for (const [k, h] of this.hosts) if (h.metadata.uid) this.hostKeyByUid.set(h.metadata.uid, k);
    this.nodesByHostUid.clear();
    this.nodesByName.clear();
    for (const [cluster, cache] of this.nodes)
      for (const n of cache.values()) {
        const nodeKey = `${cluster}|${n.metadata.name}`;
        const uid = n.metadata.labels?.[NODE_HOST_UID_LABEL];
        if (uid) link(this.nodesByHostUid, uid, nodeKey);
        link(this.nodesByName, `${cluster.split('/')[0]}/${n.metadata.name}`, nodeKey);
      }
    this.pending.clear();
    // A re-list may have changed (or removed) the object of any timeline.
    for (const key of this.timelines.keys()) this.changed.add(key);
    for (const key of new Set([...this.m3ms.keys(), ...this.hostOfM3m.keys()])) this.refreshMachine(key, now);
    for (const k of new Set([...this.claims.keys(), ...this.hostOfClaim.keys()])) this.refreshClaim(k, now);
    this.notify();
  }

  /**
   * Tells the listeners once per turn of the event loop, with the timelines refreshed meanwhile:
   * a listener that looks only at those costs O(1) per event, not O(N) (N² over a run).
   */
  private notify(): void {
    if (this.notifyScheduled) return;
    this.notifyScheduled = true;
    setImmediate(() => {
      this.notifyScheduled = false;
      const changed: ReadonlySet<string> = new Set(this.changed);
      this.changed.clear();
      for (const fn of this.listeners) fn(changed);
    });
  }

  stop(): void {
    for (const s of this.stops) s.stop();
  }
}

/**
 * Our added latency: from the Metal3Machine first seen to our last step done (providerID and
 * ready on the Metal3Machine), minus the simulated parts in between: the BMO's work from the host
 * handed over (our spec on it) to provisioned, and the kubelet's from provisioned to its Node.
 * What precedes the Metal3Machine (CAPI creating it) and follows our last step (CAPI's nodeRef)
 * is CAPI's; `timeToReadyMs` keeps the whole span, simulators included.
 */
export function addedLatencyMs(tl: MachineTimeline): number | undefined {
  const end = tl.infraReady ?? tl.at.Ready;
  if (end === undefined || tl.at.Ready === undefined) return undefined;
  const total = end - tl.firstSeen;
  const handedOver = tl.hostHandedOver ?? tl.hostProvisioningStarted;
  const hardware =
    handedOver !== undefined && tl.hostProvisioned !== undefined ? tl.hostProvisioned - handedOver : 0;
  const kubelet =
    tl.hostProvisioned !== undefined && tl.nodeSeen !== undefined
      ? Math.max(0, Math.min(tl.nodeSeen, end) - tl.hostProvisioned)
      : 0;
  return Math.max(0, total - hardware - kubelet);
}

/** The whole span from the Metal3Machine first seen to Ready on both sides, simulators included. */
export function timeToReadyMs(tl: MachineTimeline): number | undefined {
  return tl.at.Ready === undefined ? undefined : tl.at.Ready - tl.firstSeen;
}
