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
import { type Cache, informer, keyOf } from '../informer.ts';
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
  private readonly listeners = new Set<() => void>();
  private readonly applied: ReadonlySet<string> | undefined;
  private readonly changed = () => this.update();

  constructor(management: KubeClient, opts: ProgressObserverOptions = {}) {
    this.applied = opts.applied;
    this.stops.push(informer(management, R.Metal3Machine, this.m3ms, this.changed));
    this.stops.push(informer(management, R.Machine, this.machines, this.changed));
    if (this.applied) this.stops.push(informer(management, R.MachineSet, this.machineSets, this.changed));
    this.stops.push(informer(management, R.BareMetalHost, this.hosts, this.changed));
    this.claimOpts = opts.claims;
    if (opts.claims) this.stops.push(informer(management, R.NodeClaim, this.claims, this.changed));
  }

  /** Follows the Nodes of one more workload cluster (each cluster once). */
  addWorkload(key: string, client: KubeClient): void {
    if (this.nodes.has(key)) return;
    const cache: Cache = new Map();
    this.nodes.set(key, cache);
    this.stops.push(informer(client, R.Node, cache, this.changed));
  }

  /** Whether a Metal3Machine is one of the run's machines (its Machine belongs to what the run applied). */
  isRunMachine(m3m: KubeObject): boolean {
    if (!this.applied) return true;
    const machine = this.machineOf(m3m);
    if (!machine) return false;
    const known = new Map<string, KubeObject>();
    for (const o of [...this.machines.values(), ...this.machineSets.values()])
      if (o.metadata.uid) known.set(o.metadata.uid, o);
    return belongsTo(machine, this.applied, known);
  }

  onChange(fn: () => void): () => void {
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

  private claimHost(claim: KubeObject): KubeObject | undefined {
    const st = claim.status as { host?: string; hostNamespace?: string } | undefined;
    return st?.host ? this.hosts.get(`${st.hostNamespace ?? ''}/${st.host}`) : undefined;
  }

  hostCount(): number {
    return this.hosts.size;
  }

  private machineOf(m3m: KubeObject): KubeObject | undefined {
    const owner = m3m.metadata.ownerReferences?.find((r) => r.kind === 'Machine');
    return owner ? this.machines.get(`${m3m.metadata.namespace}/${owner.name}`) : undefined;
  }

  private hostOf(m3m: KubeObject): KubeObject | undefined {
    const ann = m3m.metadata.annotations?.['metal3.io/BareMetalHost'];
    return ann ? this.hosts.get(ann) : undefined;
  }

  private update(): void {
    const now = Date.now();
    const nodeByUid = new Map<string, KubeObject>();
    // A tenant's Node is named after its claim: `<cluster namespace>/<node name>`.
    const nodeNames = new Set<string>();
    for (const [cluster, cache] of this.nodes)
      for (const n of cache.values()) {
        nodeNames.add(`${cluster.split('/')[0]}/${n.metadata.name}`);
        const uid = n.metadata.labels?.['metal3.io/uuid'];
        if (uid) nodeByUid.set(uid, n);
      }
    for (const [key, m3m] of this.m3ms) {
      let tl = this.timelines.get(key);
      if (!tl) {
        if (!this.isRunMachine(m3m)) continue;
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
        if (host.metadata.uid && nodeByUid.has(host.metadata.uid)) tl.nodeSeen ??= now;
      }
    }
    this.updateClaims(now, nodeNames);
    for (const fn of this.listeners) fn();
  }

  private updateClaims(now: number, nodeNames: Set<string>): void {
    for (const [k, claim] of this.claims) {
      const key = `${CLAIM_KEY_PREFIX}${k}`;
      let tl = this.timelines.get(key);
      if (!tl) {
        if (this.claimOpts?.isRunClaim && !this.claimOpts.isRunClaim(claim)) continue;
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
      if (nodeNames.has(`${claim.metadata.namespace}/${claim.metadata.name}`)) tl.nodeSeen ??= now;
    }
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
