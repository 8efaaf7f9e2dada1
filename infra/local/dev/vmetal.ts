/**
 * The vMetal side of `metal3fn dev` (ADR 018, "dev --vmetal"): which objects are vMetal's, how many
 * NodeClaims a run waits for, which claims are the run's, the sample's hosts and decoys, and the
 * scale-down (the tenants' counts to zero, the run's own claims deleted). Pure except the two
 * functions that write (hosts, scale-down).
 */
import { R, VMETAL_GROUP } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { assetPath } from '../assets.ts';
import { createSampleHosts } from '../sim/bmo.ts';
import { TENANT_DECLARATION_LABEL, TENANT_LABEL, wantedCounts } from '../sim/platform.ts';

export const SAMPLE_VMETAL_DIR = assetPath('infra/local/sample-vmetal');

const groupOf = (o: KubeObject) => (o.apiVersion ?? '').split('/')[0];
/** A tenant cluster declaration of the platform simulator (infra/local/sim/platform.ts). */
export const isTenantDeclaration = (o: KubeObject): boolean =>
  o.kind === 'ConfigMap' && o.metadata.labels?.[TENANT_DECLARATION_LABEL] !== undefined;
/** An object of the vMetal model: our vMetal group, or a tenant declaration. */
export const isVmetalObject = (o: KubeObject): boolean =>
  groupOf(o) === VMETAL_GROUP || isTenantDeclaration(o);

/** The claims the run waits for: the tenants' declared counts and the NodeClaims it applied. */
export function expectedClaims(applied: KubeObject[]): number {
  let n = 0;
  for (const o of applied) {
    if (isTenantDeclaration(o)) for (const c of wantedCounts(o).values()) n += c;
    else if (o.kind === 'NodeClaim') n += 1;
  }
  return n;
}

/**
 * Whether a NodeClaim is the run's: one it applied, or one the platform simulator made for a
 * tenant it declared (same namespace, the tenant's label).
 */
export function runClaimPredicate(applied: KubeObject[]): (claim: KubeObject) => boolean {
  const uids = new Set(applied.filter((o) => o.kind === 'NodeClaim').map((o) => o.metadata.uid));
  const tenants = new Set(
    applied.filter(isTenantDeclaration).map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
  );
  return (c) =>
    uids.has(c.metadata.uid) ||
    tenants.has(`${c.metadata.namespace}/${c.metadata.labels?.[TENANT_LABEL] ?? ''}`);
}

/** What `--scale-down` does to the vMetal objects the run applied. */
export interface VmetalScaleDown {
  /** Tenant declarations whose counts go to 0. */
  tenants: { namespace: string; name: string; types: string[] }[];
  /** NodeClaims the run applied itself, deleted. */
  claims: { namespace: string; name: string }[];
}

export function vmetalScaleDownPlan(applied: KubeObject[]): VmetalScaleDown {
  const at = (o: KubeObject) => ({ namespace: o.metadata.namespace!, name: o.metadata.name! });
  return {
    tenants: applied
      .filter(isTenantDeclaration)
      .map((o) => ({ ...at(o), types: [...wantedCounts(o).keys()] })),
    claims: applied.filter((o) => o.kind === 'NodeClaim').map(at),
  };
}

export async function vmetalScaleDown(client: KubeClient, plan: VmetalScaleDown): Promise<void> {
  for (const t of plan.tenants)
    await client.patch(R.ConfigMap, t.namespace, t.name, {
      data: Object.fromEntries(t.types.map((k) => [k, '0'])),
    });
  for (const c of plan.claims) await client.delete(R.NodeClaim, c.namespace, c.name).catch(() => undefined);
}

/** The vMetal sample's hosts beside the CAPM3 sample's, in the same namespace (one fleet). */
export interface VmetalHostPlan {
  labels: Record<string, string>;
  /** A decoy: `error` (a host in error), `held` (someone else's consumerRef), or none. */
  decoy?: 'error' | 'held';
}

/**
 * Hosts `vmetal-5000`…: worker hosts for the claims (rack a for `large`, which every `small` may take too, so rack a has
 * room for all of them and the CAPM3 workers) and decoys: one no selector matches, one in error,
 * one held by someone else. `start` keeps their MAC addresses apart from the CAPM3 sample's.
 */
export function planVmetalHosts(): VmetalHostPlan[] {
  const worker = (rack: string) => ({ role: 'worker', rack });
  return [
    ...Array.from({ length: 7 }, () => ({ labels: worker('a') })),
    ...Array.from({ length: 2 }, () => ({ labels: worker('b') })),
    { labels: { role: 'storage', rack: 'a' } },
    { labels: worker('a'), decoy: 'error' },
    { labels: worker('a'), decoy: 'held' },
  ];
}

/** The MAC/IP index of the first vMetal sample host (the CAPM3 sample's hosts count from 0). */
const VMETAL_HOST_INDEX = 5000;

/** Creates the vMetal sample's hosts (available) and makes the decoys what they are. */
export async function createVmetalSampleHosts(client: KubeClient, namespace: string): Promise<void> {
  const plans = planVmetalHosts();
  const hosts = await createSampleHosts(client, namespace, plans.length, {
    prefix: 'vmetal',
    start: VMETAL_HOST_INDEX,
    labels: (i) => plans[i - VMETAL_HOST_INDEX]?.labels ?? {},
  });
  await Promise.all(
    hosts.map(async (h, i) => {
      const plan = plans[i]!;
      const name = h.metadata.name!;
      if (plan.decoy === 'error') {
        const cur = (await client.get(R.BareMetalHost, namespace, name))!;
        await client.replaceStatus(R.BareMetalHost, {
          ...cur,
          status: {
            ...cur.status,
            operationalStatus: 'error',
            errorType: 'registration error',
            errorMessage: 'decoy: BMC credentials rejected',
          },
        });
      } else if (plan.decoy === 'held') {
        await client.patch(R.BareMetalHost, namespace, name, {
          spec: {
            consumerRef: { apiVersion: 'v1', kind: 'ConfigMap', name: 'reserved', namespace: 'other-team' },
          },
        });
      }
    }),
  );
}
