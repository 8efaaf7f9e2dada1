/**
 * After scale-down: verifies nothing leaked. Pure over the dumped objects, so the end-to-end
 * tests, `metal3fn dev --scale-down` and the chaos suite apply the same rules.
 *
 * With a scope (what the run applied, the state at Ready, the hosts others held) only what the
 * product owns is judged: the run's machines (their Machine belongs to what the run applied) and
 * every object that belongs to their Metal3Machines (claim, Metal3Data, IP claims and addresses,
 * data Secrets) must be gone, their entries gone from templates and pools, the hosts they held
 * released; a host someone else held before the run must be exactly as it was. Without a scope the
 * whole cluster is the run's (an embedded run of the sample).
 */
import { parseBareMetalHost } from '../../../shared/api/baremetalhost.ts';
import { fieldOf } from '../../../shared/api/json.ts';
import { resourceTexts } from '../../../shared/api/vmetal/common.ts';
import { parseNodeType } from '../../../shared/api/vmetal/nodetype.ts';
import {
  NODE_CLAIM_LABEL,
  NODE_TYPE_LABEL,
  VMETAL_CLAIM_UID_LABEL,
  VMETAL_HOST_ANNOTATION,
  VMETAL_ORIGINAL_ANNOTATIONS,
} from '../../../shared/api/wellknown.ts';
import { sameJson } from '../../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import {
  compileTypeSelection,
  nodeTypeCapacity,
  type TypeSelection,
} from '../../../shared/vmetal/eligibility.ts';
import { belongsTo, byUid, runMetal3Machines } from './ownership.ts';

export interface ReleaseFinding {
  object: string;
  problem: string;
}

export interface ReleaseScope {
  /** uids of the objects the run applied. */
  applied: ReadonlySet<string>;
  /** Every object at Ready: the run's machines and what the product made for them are found there. */
  atReady: KubeObject[];
  /** Hosts someone else held before the run, as they were then. */
  foreignHosts: KubeObject[];
  /** Which NodeClaims are the run's (vMetal, ADR 018; default none). */
  isRunClaim?: ((claim: KubeObject) => boolean) | undefined;
  /** Every host before the run: a host a run claim held must have its network annotations back. */
  hostsBefore?: KubeObject[] | undefined;
}

const ref = (o: KubeObject) =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
const nsName = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const DATA_SECRET_TYPE = 'infrastructure.cluster.x-k8s.io/secret';
const OUR_FINALIZER = /metal3|ipam|cluster\.x-k8s\.io/;
const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
const LEAK_KINDS = new Set([
  'Metal3Machine',
  'Metal3Data',
  'Metal3DataClaim',
  'IPClaim',
  'IPAddress',
  'NodeClaim',
]);

type ConsumerRef = { kind?: string; namespace?: string; name?: string };
const consumerOf = (h: KubeObject): ConsumerRef | undefined =>
  ((h.spec ?? {}) as { consumerRef?: ConsumerRef }).consumerRef;

/** What the product owns for the run, from the scope (undefined: everything). */
interface Judged {
  owned(o: KubeObject): boolean;
  /** Claim names (`ns/name`) whose entries must leave templates (Metal3DataClaims) and pools (IPClaims). */
  dataClaims: Set<string>;
  ipClaims: Set<string>;
  /** Hosts (`ns/name`) the run's machines held. */
  held: Set<string>;
  /** Hosts (`ns/name`) the run's NodeClaims held, as they were before the run (undefined: not known). */
  heldByClaims: Map<string, KubeObject | undefined>;
  /** uids of the run's NodeClaims. */
  claimUids: Set<string>;
  foreign: Map<string, KubeObject>;
}

function judge(now: KubeObject[], scope: ReleaseScope): Judged {
  const all = new Map<string, KubeObject>();
  for (const o of [...scope.atReady, ...now]) all.set(o.metadata.uid ?? `${o.kind}|${nsName(o)}`, o);
  const everything = [...all.values()];
  const known = byUid(everything);
  const machines = runMetal3Machines(everything, scope.applied);
  const roots = new Set(machines.map((m) => m.metadata.uid!));
  const machineKeys = new Set(machines.map(nsName));
  const owned = (o: KubeObject) => belongsTo(o, roots, known);
  const dataClaims = new Set<string>();
  const ipClaims = new Set<string>();
  const held = new Set<string>();
  const claimUids = new Set(
    everything
      .filter((o) => o.kind === 'NodeClaim' && scope.isRunClaim?.(o) === true)
      .map((o) => o.metadata.uid ?? ''),
  );
  const before = new Map((scope.hostsBefore ?? []).map((h) => [nsName(h), h]));
  const heldByClaims = new Map<string, KubeObject | undefined>();
  for (const o of everything) {
    if (o.kind === 'IPClaim' && claimUids.has(o.metadata.labels?.[VMETAL_CLAIM_UID_LABEL] ?? ''))
      ipClaims.add(nsName(o));
    if (o.kind === 'BareMetalHost' && claimUids.has(o.metadata.labels?.[NODE_CLAIM_LABEL] ?? ''))
      heldByClaims.set(nsName(o), before.get(nsName(o)));
    if (o.kind === 'Metal3DataClaim' && owned(o)) dataClaims.add(nsName(o));
    if (o.kind === 'IPClaim' && owned(o)) ipClaims.add(nsName(o));
    if (o.kind === 'BareMetalHost') {
      const c = consumerOf(o);
      if (c?.kind === 'Metal3Machine' && machineKeys.has(`${c.namespace || o.metadata.namespace}/${c.name}`))
        held.add(nsName(o));
    }
  }
  return {
    owned: (o) =>
      owned(o) ||
      (o.kind === 'NodeClaim' && claimUids.has(o.metadata.uid ?? '')) ||
      claimUids.has(o.metadata.labels?.[VMETAL_CLAIM_UID_LABEL] ?? ''),
    dataClaims,
    ipClaims,
    held,
    heldByClaims,
    claimUids,
    foreign: new Map(scope.foreignHosts.map((h) => [nsName(h), h])),
  };
}

export function checkRelease(objects: KubeObject[], scope?: ReleaseScope): ReleaseFinding[] {
  const findings: ReleaseFinding[] = [];
  const judged = scope ? judge(objects, scope) : undefined;
  const owned = (o: KubeObject) => judged?.owned(o) ?? true;
  const secrets = new Map(objects.filter((o) => o.kind === 'Secret').map((o) => [nsName(o), o]));
  for (const o of objects) {
    if (o.kind && LEAK_KINDS.has(o.kind)) {
      if (owned(o)) findings.push({ object: ref(o), problem: 'still exists after scale-down' });
    } else if (o.kind === 'Secret') {
      const claimData = Boolean(o.metadata.labels?.[VMETAL_CLAIM_UID_LABEL]);
      if (((o as { type?: string }).type === DATA_SECRET_TYPE || claimData) && owned(o))
        findings.push({ object: ref(o), problem: 'rendered data Secret left behind' });
    } else if (o.kind === 'Metal3DataTemplate' || o.kind === 'IPPool') {
      findings.push(...allocationsLeft(o, judged));
    } else if (o.kind === 'BareMetalHost') {
      const before = judged?.foreign.get(nsName(o));
      if (before) findings.push(...changedSince(before, o));
      else if (judged?.heldByClaims.has(nsName(o)))
        findings.push(...notReleased(o, secrets), ...claimTraces(o, judged.heldByClaims.get(nsName(o))));
      else if (judged?.held.has(nsName(o))) findings.push(...notReleased(o, secrets));
      // Without a scope every host is the run's, except those held by something of neither model
      // (someone else's booking: not the product's to release).
      else if (!judged && !heldByOther(o))
        findings.push(...notReleased(o, secrets), ...claimTraces(o, undefined));
    }
    const stuck = (o.metadata.finalizers ?? []).filter((f) => OUR_FINALIZER.test(f));
    if (o.metadata.deletionTimestamp && stuck.length && owned(o))
      findings.push({ object: ref(o), problem: `deleting but held by finalizers ${stuck.join(', ')}` });
  }
  findings.push(...capacityOff(objects));
  if (judged) {
    const present = new Set(objects.filter((o) => o.kind === 'BareMetalHost').map(nsName));
    for (const [key, before] of judged.foreign)
      if (!present.has(key))
        findings.push({
          object: ref(before),
          problem: `held by ${describe(consumerOf(before))} before the run, and deleted since`,
        });
  }
  return findings;
}

/**
 * NodeType capacity counts that are not the hosts' (ADR 025): once the fleet is quiet the coalesced
 * counts converge, so the release check's settle loop waits for them too. Types without counts
 * (no provider, a bad selector) are their own status's business.
 */
function capacityOff(objects: KubeObject[]): ReleaseFinding[] {
  const out: ReleaseFinding[] = [];
  const hosts = objects.filter((o) => o.kind === 'BareMetalHost').map((h) => parseBareMetalHost(h));
  for (const t of objects.filter((o) => o.kind === 'NodeType')) {
    const have = fieldOf(t, 'status', 'capacity');
    const provider = objects.find(
      (o) => o.kind === 'NodeProvider' && o.metadata.name === fieldOf(t, 'spec', 'providerRef'),
    );
    const namespace = fieldOf(provider, 'spec', 'metal3', 'clusterRef', 'namespace');
    if (!have || typeof namespace !== 'string') continue;
    let sel: TypeSelection;
    try {
      const type = parseNodeType(t);
      sel = compileTypeSelection({
        name: type.metadata.name!,
        selector: type.spec.bareMetalHosts?.selector,
        resources: resourceTexts(type.spec.resources),
      });
    } catch {
      continue;
    }
    const n = nodeTypeCapacity(hosts, sel, namespace);
    const want = { total: n.total, available: n.free, claimed: n.claimed, provisioned: n.provisioned };
    if (!sameJson(have, want))
      out.push({
        object: ref(t),
        problem: `capacity ${JSON.stringify(have)} is not the hosts' ${JSON.stringify(want)}`,
      });
  }
  return out;
}

/**
 * What the allocations recorded on a template or pool must lose with them: the index or address
 * entries and the burst registry (ADR 012) — all of them, or with a scope those of the run's claims.
 */
function allocationsLeft(o: KubeObject, judged: Judged | undefined): ReleaseFinding[] {
  const status = (o.status ?? {}) as {
    indexes?: Record<string, string>;
    allocating?: Record<string, unknown>;
    dataNames?: Record<string, unknown>;
  };
  const ns = o.metadata.namespace ?? '';
  const template = o.kind === 'Metal3DataTemplate';
  const claims = judged ? (template ? judged.dataClaims : judged.ipClaims) : undefined;
  const out: ReleaseFinding[] = [];
  const fields: ['indexes' | 'allocating' | 'dataNames', (k: string, v: unknown) => string][] = [
    // A template's indexes map index -> claim; a pool's, claim -> address.
    ['indexes', (k, v) => (template ? String(v) : k)],
    ['allocating', (k) => k],
    ...(claims ? [['dataNames', (k: string) => k] as ['dataNames', (k: string) => string]] : []),
  ];
  for (const [field, claimOf] of fields) {
    const left = Object.entries(status[field] ?? {})
      .filter(([k, v]) => !claims || claims.has(`${ns}/${claimOf(k, v)}`))
      .map(([k]) => k);
    if (left.length > 0)
      out.push({ object: ref(o), problem: `status.${field} not empty: ${left.sort().join(', ')}` });
  }
  return out;
}

function notReleased(o: KubeObject, secrets: Map<string, KubeObject>): ReleaseFinding[] {
  const out: ReleaseFinding[] = [];
  const spec = (o.spec ?? {}) as Record<string, unknown>;
  const status = (o.status ?? {}) as { provisioning?: { state?: string } };
  if (spec.consumerRef)
    out.push({ object: ref(o), problem: `still consumed by ${JSON.stringify(spec.consumerRef)}` });
  const state = status.provisioning?.state;
  if (state !== 'available' && state !== 'ready')
    out.push({ object: ref(o), problem: `state is '${state}', not available` });
  if (spec.image) out.push({ object: ref(o), problem: 'image not cleared' });
  // A released host's BMC credentials Secret must not carry a cluster label any more
  // (clusterctl move would take it away with the cluster).
  const bmc = (spec.bmc as { credentialsName?: string } | undefined)?.credentialsName;
  const secret = !spec.consumerRef && bmc ? secrets.get(`${o.metadata.namespace}/${bmc}`) : undefined;
  const label = secret?.metadata.labels?.[CLUSTER_NAME_LABEL];
  if (secret && label)
    out.push({
      object: ref(secret),
      problem: `BMC credentials Secret of released ${ref(o)} still labelled ${CLUSTER_NAME_LABEL}=${label}`,
    });
  return out;
}

const OUR_CONSUMERS = new Set(['Metal3Machine', 'NodeClaim']);
const heldByOther = (h: KubeObject): boolean => {
  const c = consumerOf(h);
  return Boolean(c?.name && c.kind && !OUR_CONSUMERS.has(c.kind));
};

/** What a NodeClaim leaves on a host it held: its label, the saved record, network annotations changed. */
function claimTraces(now: KubeObject, before: KubeObject | undefined): ReleaseFinding[] {
  const out: ReleaseFinding[] = [];
  for (const key of [NODE_CLAIM_LABEL, NODE_TYPE_LABEL]) {
    const label = now.metadata.labels?.[key];
    if (label) out.push({ object: ref(now), problem: `still labelled ${key}=${label}` });
  }
  const ann = now.metadata.annotations ?? {};
  if (ann[VMETAL_ORIGINAL_ANNOTATIONS] !== undefined)
    out.push({ object: ref(now), problem: `still carries ${VMETAL_ORIGINAL_ANNOTATIONS}` });
  if (before) {
    const was = before.metadata.annotations ?? {};
    const changed = Object.values(VMETAL_HOST_ANNOTATION).filter((k) => ann[k] !== was[k]);
    if (changed.length)
      out.push({
        object: ref(now),
        problem: `network annotations not as before the run: ${changed.join(', ')}`,
      });
  }
  return out;
}

const describe = (c: ConsumerRef | undefined) =>
  c ? `${c.kind ?? 'an object'} ${c.namespace ? `${c.namespace}/` : ''}${c.name}` : 'someone else';

/** A host someone else held: its spec and metadata exactly as before the run. */
function changedSince(before: KubeObject, now: KubeObject): ReleaseFinding[] {
  const parts: [string, (h: KubeObject) => unknown][] = [
    ['spec', (h) => h.spec ?? {}],
    ['labels', (h) => h.metadata.labels ?? {}],
    ['annotations', (h) => h.metadata.annotations ?? {}],
    ['finalizers', (h) => h.metadata.finalizers ?? []],
    ['ownerReferences', (h) => h.metadata.ownerReferences ?? []],
  ];
  const changed = parts.filter(([, get]) => !sameJson(get(before), get(now))).map(([name]) => name);
  return changed.length
    ? [
        {
          object: ref(now),
          problem: `held by ${describe(consumerOf(before))} before the run, and changed: ${changed.join(', ')}`,
        },
      ]
    : [];
}
