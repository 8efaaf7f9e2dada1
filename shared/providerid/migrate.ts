/**
 * The plan of `metal3fn migrate-provider-ids` (pure). A Node's providerID is immutable once set,
 * so a machine still on the legacy `metal3://<uid>` format is migrated by replacing it: Cluster API
 * rolls the owning KubeadmControlPlane / MachineDeployment when `spec.rolloutAfter` passes, and
 * the replacement machines get the new format. Ambiguous cases are refused with a reason.
 */
import { parseProviderID } from './ids.ts';

export interface OwnerRef {
  kind: 'KubeadmControlPlane' | 'MachineDeployment';
  name: string;
  /** Its current `spec.rolloutAfter`, if any. */
  rolloutAfter?: string | undefined;
}

export interface MigrationMachine {
  name: string;
  providerID?: string | undefined;
  creationTimestamp?: string | undefined;
  /** The owning rollout object, or why there is none. */
  owner?: OwnerRef | undefined;
  ownerProblem?: string | undefined;
}

export interface MigrationNode {
  name: string;
  providerID?: string | undefined;
}

export interface MigrationHost {
  name: string;
  uid: string;
  /** consumerRef name when it is a Metal3Machine. */
  consumer?: string | undefined;
}

export interface MigrationCluster {
  namespace: string;
  name: string;
  cloudProvider: boolean;
  /** Why the workload cluster could not be read, if so (its Nodes are then unknown). */
  unreachable?: string | undefined;
  machines: MigrationMachine[];
  nodes: MigrationNode[];
  hosts: MigrationHost[];
}

export interface PlanRow {
  cluster: string;
  machine?: string | undefined;
  host?: string | undefined;
  node?: string | undefined;
  currentID: string;
  owner?: string | undefined;
  action: 'roll' | 'refuse';
  reason: string;
}

export interface OwnerAction {
  namespace: string;
  cluster: string;
  kind: OwnerRef['kind'];
  name: string;
  /** `set`: write rolloutAfter = plan time; `keep`: the current value already covers the machines. */
  action: 'set' | 'keep';
  rolloutAfter: string;
  machines: string[];
}

export interface MigrationPlan {
  planTime: string;
  rows: PlanRow[];
  owners: OwnerAction[];
  /** Legacy IDs still present (machines + Nodes), for progress reports. */
  remaining: number;
  /** Of those, the ones not in refused rows: what a rollout is expected to remove. */
  migratable: number;
}

const ownerKey = (ns: string, o: OwnerRef) => `${ns}/${o.kind}/${o.name}`;

/**
 * `ignoreIds`: legacy IDs refused by the first plan (not expected to go away), for progress
 * reports during a rollout; without it, this plan's refused rows are the ones left out of
 * `migratable`. (During a rollout a legacy Node may briefly outlive its machine; it still counts.)
 */
export function planMigration(
  clusters: readonly MigrationCluster[],
  planTime: string,
  ignoreIds?: ReadonlySet<string>,
): MigrationPlan {
  const rows: PlanRow[] = [];
  const owners = new Map<string, OwnerAction & { newest: number; existing?: string | undefined }>();
  let remaining = 0;
  const legacyIds: string[] = [];

  for (const c of clusters) {
    const clusterKey = `${c.namespace}/${c.name}`;
    const hostByUid = new Map(c.hosts.map((h) => [h.uid, h]));
    const machineByName = new Map(c.machines.map((m) => [m.name, m]));
    const covered = new Set<string>(); // legacy node names already in a row
    const items: { machine?: MigrationMachine; id: string; nodes: MigrationNode[] }[] = [];

    for (const m of c.machines) {
      if (parseProviderID(m.providerID).format !== 'legacy') continue;
      const nodes = c.nodes.filter((n) => n.providerID === m.providerID);
      for (const n of nodes) covered.add(n.name);
      items.push({ machine: m, id: m.providerID!, nodes });
    }
    for (const n of c.nodes) {
      if (covered.has(n.name) || parseProviderID(n.providerID).format !== 'legacy') continue;
      const nodes = c.nodes.filter((x) => x.providerID === n.providerID);
      for (const x of nodes) covered.add(x.name);
      const host = hostByUid.get(n.providerID!.slice('metal3://'.length));
      const machine = host?.consumer ? machineByName.get(host.consumer) : undefined;
      items.push({ machine, id: n.providerID!, nodes });
    }
    for (const id of [...c.machines, ...c.nodes].map((o) => o.providerID)) {
      if (parseProviderID(id).format !== 'legacy') continue;
      remaining++;
      legacyIds.push(id!);
    }

    for (const it of items) {
      const uid = it.id.slice('metal3://'.length);
      const host = hostByUid.get(uid);
      const row: PlanRow = {
        cluster: clusterKey,
        machine: it.machine?.name,
        host: host?.name,
        node: it.nodes.map((n) => n.name).join(',') || undefined,
        currentID: it.id,
        owner: it.machine?.owner ? `${it.machine.owner.kind}/${it.machine.owner.name}` : undefined,
        action: 'refuse',
        reason: '',
      };
      if (c.cloudProvider)
        row.reason = 'cloud-provider cluster: the cloud provider owns Node providerIDs; not touched';
      else if (c.unreachable) row.reason = `workload cluster unreachable: ${c.unreachable}`;
      else if (!host) row.reason = `uid ${uid} matches no BareMetalHost`;
      else if (it.nodes.length > 1) row.reason = `${it.nodes.length} Nodes carry ${it.id}`;
      else if (!it.machine) row.reason = `host ${host.name} has no Metal3Machine in this cluster`;
      else if (!it.machine.owner)
        row.reason =
          it.machine.ownerProblem ?? 'no KubeadmControlPlane or MachineDeployment owns this machine';
      else {
        row.action = 'roll';
        const o = it.machine.owner;
        const k = ownerKey(c.namespace, o);
        let entry = owners.get(k);
        if (!entry) {
          entry = {
            namespace: c.namespace,
            cluster: clusterKey,
            kind: o.kind,
            name: o.name,
            action: 'set',
            rolloutAfter: planTime,
            machines: [],
            newest: 0,
            existing: o.rolloutAfter,
          };
          owners.set(k, entry);
        }
        entry.machines.push(it.machine.name);
        const created = it.machine.creationTimestamp
          ? Date.parse(it.machine.creationTimestamp)
          : Date.parse(planTime);
        entry.newest = Math.max(entry.newest, Number.isNaN(created) ? 0 : created);
      }
      rows.push(row);
    }
  }

  const planMs = Date.parse(planTime);
  const ownerActions: OwnerAction[] = [];
  for (const e of owners.values()) {
    const existing = e.existing ? Date.parse(e.existing) : Number.NaN;
    // Keep a rolloutAfter that already covers every legacy machine (set by an earlier run, or
    // scheduled later than this plan): rewriting it would roll the replacements again.
    const keep = !Number.isNaN(existing) && (existing > planMs || existing > e.newest);
    for (const r of rows) {
      if (r.action === 'roll' && r.owner === `${e.kind}/${e.name}` && r.cluster === e.cluster) {
        r.reason = keep
          ? `rollout already requested (rolloutAfter ${e.existing})`
          : `set ${e.kind}/${e.name} spec.rolloutAfter=${planTime}: rolling replacement`;
      }
    }
    const { newest: _n, existing: _e, ...rest } = e;
    ownerActions.push({
      ...rest,
      action: keep ? 'keep' : 'set',
      rolloutAfter: keep ? e.existing! : planTime,
    });
  }
  const refused = ignoreIds ?? new Set(rows.filter((r) => r.action === 'refuse').map((r) => r.currentID));
  const migratable = legacyIds.filter((id) => !refused.has(id)).length;
  return { planTime, rows, owners: ownerActions, remaining, migratable };
}

/** A fixed-width table of the plan, one row per legacy machine/Node. */
export function formatPlan(plan: MigrationPlan): string {
  const header = ['CLUSTER', 'MACHINE', 'HOST', 'NODE', 'CURRENT-ID', 'OWNER', 'ACTION', 'REASON'];
  const body = plan.rows.map((r) => [
    r.cluster,
    r.machine ?? '-',
    r.host ?? '-',
    r.node ?? '-',
    r.currentID,
    r.owner ?? '-',
    r.action,
    r.reason,
  ]);
  const all = [header, ...body];
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  return all
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '))
    .join('\n');
}
