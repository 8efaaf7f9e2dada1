/**
 * Platform simulator (test and dev only; never imported by product code): vCluster Platform's part
 * in the vMetal model — a tenant cluster asks for nodes, the platform makes NodeClaims (issue 19,
 * "Who creates NodeClaims").
 *
 * A tenant cluster is declared by a ConfigMap in its project namespace (`p-<project>`), named after
 * the cluster and labelled `platform.sim.metal3fn.io/tenant-cluster`; each data key is a NodeType
 * and its value the number of nodes of that type:
 *
 *   kind: ConfigMap
 *   metadata: { name: alpha, namespace: p-team-a, labels: { platform.sim.metal3fn.io/tenant-cluster: "true" } }
 *   data: { small: "2", large: "1" }
 *
 * For each declaration the simulator starts the tenant's embedded API server (the control-plane
 * provider of infra/local/workload/) and publishes `<tenant>-kubeconfig` (key `value`; owned by the
 * ConfigMap) unless it exists, then keeps the claims at the counts: NodeClaims with generateName
 * `<tenant>-<type>-`, `vClusterRef` = tenant, `typeRef` = type, labelled with the tenant; a lower
 * count (or a removed key or ConfigMap) deletes the newest. Claims made by hand are not counted.
 * One sync at a time, from fresh lists (a claim just created is counted even before its event).
 */
import { R } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { Logger } from '../../../shared/observability/logger.ts';
import { type Cache, informer } from '../informer.ts';
import type { ControlPlaneProvider } from '../workload/provider.ts';
import { publishKubeconfig } from '../workload/secret.ts';

/** The label that makes a ConfigMap a tenant cluster declaration. */
export const TENANT_DECLARATION_LABEL = 'platform.sim.metal3fn.io/tenant-cluster';
/** The label on the claims the simulator made: the tenant's name. */
export const TENANT_LABEL = 'platform.sim.metal3fn.io/tenant';

export interface PlatformSimulatorOptions {
  client: KubeClient;
  /** Starts a tenant's API server and gives the kubeconfig for its Secret (undefined: not ours). */
  controlPlane?: ControlPlaneProvider;
  log?: Logger;
}

export interface PlatformSimulator {
  stop(): void;
  /** Resolves when no sync is running or due (for tests). */
  idle(): Promise<void>;
}

/** The wanted count per NodeType of a declaration (unparseable or negative counts are 0). */
export function wantedCounts(decl: KubeObject): Map<string, number> {
  const data = (decl as { data?: Record<string, string> }).data ?? {};
  const out = new Map<string, number>();
  for (const [type, raw] of Object.entries(data)) {
    const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : 0;
    out.set(type, n);
  }
  return out;
}

/** What to create and delete for one tenant: pure, over its declaration and its live claims. */
export function planTenant(
  wanted: Map<string, number>,
  claims: KubeObject[],
): { create: string[]; remove: KubeObject[] } {
  const byType = new Map<string, KubeObject[]>();
  for (const c of claims) {
    const type = String((c.spec as { typeRef?: string } | undefined)?.typeRef ?? '');
    byType.set(type, [...(byType.get(type) ?? []), c]);
  }
  const create: string[] = [];
  const remove: KubeObject[] = [];
  for (const [type, n] of wanted) for (let i = byType.get(type)?.length ?? 0; i < n; i++) create.push(type);
  for (const [type, list] of byType) {
    const extra = list.length - (wanted.get(type) ?? 0);
    if (extra <= 0) continue;
    // The newest go first (a scale-down keeps the longest-serving nodes).
    const newestFirst = [...list].sort(
      (a, b) =>
        String(b.metadata.creationTimestamp ?? '').localeCompare(
          String(a.metadata.creationTimestamp ?? ''),
        ) || String(b.metadata.name).localeCompare(String(a.metadata.name)),
    );
    remove.push(...newestFirst.slice(0, extra));
  }
  return { create, remove };
}

export function startPlatformSimulator(opts: PlatformSimulatorOptions): PlatformSimulator {
  const { client, log } = opts;
  const decls: Cache = new Map();
  const seenClaims: Cache = new Map();
  const published = new Set<string>();
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;

  const tenantsOf = async (): Promise<KubeObject[]> =>
    (await client.list(R.ConfigMap, undefined, { labelSelector: TENANT_DECLARATION_LABEL })).items;

  async function ensureTenant(decl: KubeObject): Promise<void> {
    const ns = decl.metadata.namespace!;
    const tenant = decl.metadata.name!;
    const key = `${ns}/${tenant}`;
    if (published.has(key) || !opts.controlPlane) return;
    const kubeconfig = await opts.controlPlane.kubeconfig(ns, tenant);
    if (kubeconfig)
      await publishKubeconfig(client, {
        namespace: ns,
        secretName: `${tenant}-kubeconfig`,
        clusterName: tenant,
        kubeconfig,
        owner: { ...decl, apiVersion: 'v1', kind: 'ConfigMap' },
      });
    published.add(key);
  }

  async function syncOnce(): Promise<void> {
    const declared = await tenantsOf();
    const claims = (await client.list(R.NodeClaim, undefined, { labelSelector: TENANT_LABEL })).items.filter(
      (c) => !c.metadata.deletionTimestamp,
    );
    const tenants = new Map<string, { ns: string; tenant: string; wanted: Map<string, number> }>();
    for (const d of declared) {
      if (d.metadata.deletionTimestamp) continue;
      await ensureTenant(d);
      const key = `${d.metadata.namespace}/${d.metadata.name}`;
      tenants.set(key, { ns: d.metadata.namespace!, tenant: d.metadata.name!, wanted: wantedCounts(d) });
    }
    // Claims of tenants no longer declared go as well.
    for (const c of claims) {
      const key = `${c.metadata.namespace}/${c.metadata.labels?.[TENANT_LABEL]}`;
      if (!tenants.has(key))
        tenants.set(key, {
          ns: c.metadata.namespace!,
          tenant: c.metadata.labels![TENANT_LABEL]!,
          wanted: new Map(),
        });
    }
    for (const { ns, tenant, wanted } of tenants.values()) {
      const mine = claims.filter(
        (c) => c.metadata.namespace === ns && c.metadata.labels?.[TENANT_LABEL] === tenant,
      );
      const plan = planTenant(wanted, mine);
      for (const type of plan.create) {
        if (stopped) return;
        await client.create(R.NodeClaim, {
          metadata: { generateName: `${tenant}-${type}-`, namespace: ns, labels: { [TENANT_LABEL]: tenant } },
          spec: { typeRef: type, vClusterRef: tenant },
        });
      }
      for (const c of plan.remove) {
        if (stopped) return;
        await client.delete(R.NodeClaim, ns, c.metadata.name!).catch(() => undefined);
      }
      if (plan.create.length || plan.remove.length)
        log?.debug('platform sim: claims', {
          tenant: `${ns}/${tenant}`,
          created: plan.create,
          deleted: plan.remove.length,
        });
    }
  }

  const sync = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = syncOnce()
      .catch((e: unknown) => {
        log?.warn('platform sim: sync failed, retrying', { error: (e as Error).message });
        again = true;
      })
      .finally(() => {
        running = undefined;
        if (again && !stopped) {
          again = false;
          setTimeout(sync, 50);
        }
      });
  };

  const watches = [
    informer(client, R.ConfigMap, decls, sync, { labelSelector: TENANT_DECLARATION_LABEL }),
    // A claim deleted by someone else is replaced (the platform keeps the count).
    informer(client, R.NodeClaim, seenClaims, sync, { labelSelector: TENANT_LABEL }),
  ];

  return {
    stop() {
      stopped = true;
      for (const w of watches) w.stop();
    },
    async idle() {
      while (running) await running;
    },
  };
}
