/**
 * metal3fn migrate-provider-ids [--apply] [--kubeconfig F] [-n NS] [--wait] [--timeout S] [--json]
 *
 * Finds Metal3Machines and workload Nodes still on the legacy `metal3://<uid>` providerID, prints
 * a plan, and with --apply requests a rolling replacement through Cluster API (spec.rolloutAfter on
 * the owning KubeadmControlPlane / MachineDeployment). Node providerIDs are immutable, so nothing
 * is rewritten in place; cloud-provider clusters are never touched. See docs/adr/005.
 */
import { parseArgs } from 'node:util';
import type { KubeadmControlPlane, MachineDeployment } from '../../shared/api/capi.ts';
import { R, type Resource } from '../../shared/api/resources.ts';
import { CLUSTER_NAME_LABEL } from '../../shared/api/wellknown.ts';
import { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { createWorkloadClientCache, type WorkloadClientCache } from '../../shared/kube/workload.ts';
import {
  cloudProviderEnabled,
  formatPlan,
  type MigrationCluster,
  type MigrationMachine,
  type MigrationPlan,
  type OwnerRef,
  planMigration,
} from '../../shared/providerid/index.ts';

const USAGE = `usage: metal3fn migrate-provider-ids [--apply] [--kubeconfig F] [-n NS] [--wait] [--timeout SECONDS] [--json]

Plans (default, a dry run) or applies the migration of machines still on legacy metal3://<uid>
providerIDs: --apply sets spec.rolloutAfter on the owning KubeadmControlPlane / MachineDeployment
so Cluster API replaces them; replacements get metal3://<namespace>/<host>/<machine>.
  --wait        after --apply, report progress until no legacy ID remains (or --timeout, default 1800 s)
exit codes: 0 done/nothing to do, 1 error, 2 usage, 3 some machines refused, 4 --wait timed out`;

export async function run(argv: string[]): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse(argv);
  } catch (e) {
    process.stderr.write(`migrate-provider-ids: ${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const mgmt = args.kubeconfig ? KubeClient.fromFile(args.kubeconfig) : KubeClient.fromDefault();
  const workloads = createWorkloadClientCache(mgmt, { revalidateMs: 0 });
  const out = (s: string) => process.stdout.write(`${s}\n`);

  const clusters = await gather(mgmt, workloads, args.namespace);
  const plan = planMigration(clusters, new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
  if (args.json) out(JSON.stringify(plan, null, 2));
  else if (plan.rows.length === 0) out('no legacy metal3://<uid> providerIDs found: nothing to migrate');
  else {
    out(formatPlan(plan));
    out('');
    for (const o of plan.owners) {
      out(
        `${o.action === 'set' ? (args.apply ? 'rolling' : 'would roll') : 'already rolling'} ${o.namespace}/${o.kind}/${o.name} (rolloutAfter ${o.rolloutAfter}): ${o.machines.join(', ')}`,
      );
    }
    if (!args.apply) out('\ndry run: rerun with --apply to request the rolling replacements');
  }
  const refused = plan.rows.some((r) => r.action === 'refuse');

  if (args.apply) {
    for (const o of plan.owners) {
      if (o.action !== 'set') continue;
      await setRolloutAfter(mgmt, o.kind, o.namespace, o.name, o.rolloutAfter);
    }
    if (args.wait && plan.migratable > 0) {
      const refusedIds = new Set(plan.rows.filter((r) => r.action === 'refuse').map((r) => r.currentID));
      if (refusedIds.size) out(`note: ${refusedIds.size} refused legacy ID(s) are not waited for`);
      const left = await waitUntilMigrated(
        mgmt,
        workloads,
        args.namespace,
        clusters,
        refusedIds,
        args.timeoutSeconds,
        out,
      );
      if (left > 0) return 4;
    }
  }
  return refused ? 3 : 0;
}

function parse(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      apply: { type: 'boolean', default: false },
      kubeconfig: { type: 'string' },
      namespace: { type: 'string', short: 'n' },
      wait: { type: 'boolean', default: false },
      timeout: { type: 'string', default: '1800' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const timeoutSeconds = Number(values.timeout);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
    throw new Error(`--timeout must be a positive number of seconds, got ${values.timeout}`);
  return {
    apply: values.apply === true,
    kubeconfig: values.kubeconfig,
    namespace: values.namespace,
    wait: values.wait === true,
    timeoutSeconds,
    json: values.json === true,
    help: values.help === true,
  };
}

/** Sets spec.rolloutAfter, conditioned on the resourceVersion it was read at; never moves a covering value. */
async function setRolloutAfter(
  mgmt: KubeClient,
  kind: OwnerRef['kind'],
  ns: string,
  name: string,
  at: string,
): Promise<void> {
  const t: Resource<KubeadmControlPlane | MachineDeployment> =
    kind === 'KubeadmControlPlane' ? R.KubeadmControlPlane : R.MachineDeployment;
  for (let attempt = 0; attempt < 5; attempt++) {
    const obj = await mgmt.get(t, ns, name);
    if (!obj) throw new Error(`${kind} ${ns}/${name} not found`);
    const current = (obj.spec as { rolloutAfter?: string } | undefined)?.rolloutAfter;
    if (current && Date.parse(current) >= Date.parse(at)) return; // resumed run: already requested
    try {
      await mgmt.patch(t, ns, name, {
        metadata: { resourceVersion: obj.metadata.resourceVersion },
        spec: { rolloutAfter: at },
      });
      return;
    } catch (e) {
      if ((e as { code?: number }).code !== 409) throw e;
    }
  }
  throw new Error(`${kind} ${ns}/${name}: too many conflicts setting spec.rolloutAfter`);
}

/** Reads machines, hosts, owners and each workload cluster's Nodes into the planner's input. */
async function gather(
  mgmt: KubeClient,
  workloads: WorkloadClientCache,
  namespace: string | undefined,
): Promise<MigrationCluster[]> {
  const [m3ms, hosts, machines, machineSets] = await Promise.all([
    mgmt.list(R.Metal3Machine, namespace),
    mgmt.list(R.BareMetalHost, namespace),
    mgmt.list(R.Machine, namespace),
    mgmt.list(R.MachineSet, namespace),
  ]);
  const clusters = await mgmt.list(R.Cluster, namespace);
  const byKey = <T extends KubeObject>(items: T[]) =>
    new Map(items.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));
  const machineByKey = byKey(machines.items);
  const msByKey = byKey(machineSets.items);
  const ownerCache = new Map<string, KubeObject | undefined>();

  const result: MigrationCluster[] = [];
  for (const cluster of clusters.items) {
    const ns = cluster.metadata.namespace!;
    const name = cluster.metadata.name!;
    const infra = (cluster.spec as { infrastructureRef?: { kind?: string; name?: string } } | undefined)
      ?.infrastructureRef;
    const m3c =
      infra?.kind === 'Metal3Cluster' && infra.name
        ? await mgmt.get(R.Metal3Cluster, ns, infra.name)
        : undefined;
    if (!m3c) continue; // not a Metal3 cluster
    const clusterMachines: MigrationMachine[] = [];
    for (const m of m3ms.items) {
      if (m.metadata.namespace !== ns || m.metadata.labels?.[CLUSTER_NAME_LABEL] !== name) continue;
      clusterMachines.push({
        name: m.metadata.name!,
        providerID: (m.spec as { providerID?: string } | undefined)?.providerID,
        creationTimestamp: m.metadata.creationTimestamp,
        ...(await ownerOf(mgmt, m, machineByKey, msByKey, ownerCache)),
      });
    }
    let nodes: MigrationCluster['nodes'] = [];
    let unreachable: string | undefined;
    try {
      const wl = await workloads.get(ns, name);
      nodes = (await wl.list(R.Node)).items.map((n) => ({
        name: n.metadata.name!,
        providerID: (n.spec as { providerID?: string } | undefined)?.providerID,
      }));
    } catch (e) {
      unreachable = (e as Error).message;
    }
    result.push({
      namespace: ns,
      name,
      cloudProvider: cloudProviderEnabled(
        m3c.spec as { cloudProviderEnabled?: boolean; noCloudProvider?: boolean },
      ),
      unreachable,
      machines: clusterMachines,
      nodes,
      hosts: hosts.items
        .filter((h) => h.metadata.namespace === ns)
        .map((h) => {
          const c = (h.spec as { consumerRef?: { kind?: string; name?: string } } | undefined)?.consumerRef;
          return {
            name: h.metadata.name!,
            uid: h.metadata.uid!,
            consumer: c?.kind === 'Metal3Machine' ? c.name : undefined,
          };
        }),
    });
  }
  return result;
}

/** Metal3Machine -> Machine -> KubeadmControlPlane, or -> MachineSet -> MachineDeployment. */
async function ownerOf(
  mgmt: KubeClient,
  m3m: KubeObject,
  machines: Map<string, KubeObject>,
  machineSets: Map<string, KubeObject>,
  cache: Map<string, KubeObject | undefined>,
): Promise<Partial<Pick<MigrationMachine, 'owner' | 'ownerProblem'>>> {
  const ns = m3m.metadata.namespace!;
  const ref = m3m.metadata.ownerReferences?.find((o) => o.kind === 'Machine');
  const machine = ref ? machines.get(`${ns}/${ref.name}`) : undefined;
  if (!machine) return { ownerProblem: 'no owner Machine' };
  const mo = machine.metadata.ownerReferences ?? [];
  const kcp = mo.find((o) => o.kind === 'KubeadmControlPlane');
  const read = async (t: Resource, name: string) => {
    const k = `${t.kind}/${ns}/${name}`;
    if (!cache.has(k)) cache.set(k, await mgmt.get(t, ns, name));
    return cache.get(k);
  };
  const rolloutAfter = (o: KubeObject) => (o.spec as { rolloutAfter?: string } | undefined)?.rolloutAfter;
  if (kcp) {
    const obj = await read(R.KubeadmControlPlane, kcp.name);
    if (!obj) return { ownerProblem: `KubeadmControlPlane ${kcp.name} not found` };
    return { owner: { kind: 'KubeadmControlPlane', name: kcp.name, rolloutAfter: rolloutAfter(obj) } };
  }
  const msRef = mo.find((o) => o.kind === 'MachineSet');
  if (!msRef)
    return {
      ownerProblem: `Machine ${machine.metadata.name} has no KubeadmControlPlane or MachineSet owner: replace it by hand`,
    };
  const ms = machineSets.get(`${ns}/${msRef.name}`);
  const mdRef = ms?.metadata.ownerReferences?.find((o) => o.kind === 'MachineDeployment');
  if (!mdRef)
    return {
      ownerProblem: `MachineSet ${msRef.name} has no MachineDeployment: replace its machines by hand`,
    };
  const md = await read(R.MachineDeployment, mdRef.name);
  if (!md) return { ownerProblem: `MachineDeployment ${mdRef.name} not found` };
  return { owner: { kind: 'MachineDeployment', name: mdRef.name, rolloutAfter: rolloutAfter(md) } };
}

/** Event-driven progress: re-plan on Metal3Machine and Node events until no legacy ID remains or the timeout. */
async function waitUntilMigrated(
  mgmt: KubeClient,
  workloads: WorkloadClientCache,
  namespace: string | undefined,
  clusters: readonly { namespace: string; name: string }[],
  refusedIds: ReadonlySet<string>,
  timeoutSeconds: number,
  out: (s: string) => void,
): Promise<number> {
  let last = -1;
  const check = async (): Promise<number> => {
    const plan: MigrationPlan = planMigration(
      await gather(mgmt, workloads, namespace),
      new Date().toISOString(),
      refusedIds,
    );
    if (plan.migratable !== last)
      out(`${new Date().toISOString()} legacy providerIDs remaining: ${plan.migratable}`);
    last = plan.migratable;
    return plan.migratable;
  };
  const stops: (() => void)[] = [];
  let finish: (n: number) => void = () => {};
  const result = new Promise<number>((resolve) => {
    finish = resolve;
  });
  let running = false;
  let again = false;
  const onEvent = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        if ((await check()) === 0) finish(0);
      } while (again);
    } catch (e) {
      out(`progress check failed: ${(e as Error).message}`);
    } finally {
      running = false;
    }
  };
  stops.push(await watchForever(mgmt, R.Metal3Machine, namespace, onEvent));
  for (const c of clusters) {
    const wl = await workloads.get(c.namespace, c.name).catch(() => undefined);
    if (wl) stops.push(await watchForever(wl, R.Node, undefined, onEvent));
  }
  const timer = setTimeout(() => {
    out(`timed out after ${timeoutSeconds}s with ${last} legacy providerIDs remaining`);
    finish(last);
  }, timeoutSeconds * 1000);
  await onEvent();
  const n = await result;
  clearTimeout(timer);
  for (const stop of stops) stop();
  return n;
}

/** A watch that re-lists and resumes when its stream ends; `onEvent` on every change. */
async function watchForever(
  client: KubeClient,
  t: Resource,
  namespace: string | undefined,
  onEvent: () => void,
): Promise<() => void> {
  let stopped = false;
  let ctrl: AbortController | undefined;
  const start = async (): Promise<void> => {
    if (stopped) return;
    const list = await client.list(t, namespace);
    ctrl = await client.watch(
      t,
      namespace,
      { resourceVersion: list.resourceVersion },
      (ev) => {
        if (ev.type !== 'BOOKMARK') onEvent();
      },
      () => {
        if (!stopped) {
          onEvent();
          setTimeout(() => void start().catch(() => {}), 200);
        }
      },
    );
  };
  await start();
  return () => {
    stopped = true;
    ctrl?.abort();
  };
}
