/**
 * allocateIndex for a Metal3DataTemplate: the status maps rebuilt from the Metal3Data that belong
 * to it (seed 001's three links), and the label and owner reference pointing at its Metal3Cluster
 * (the cluster named by its claims' cluster-name label). Both are derived state: level-triggered,
 * written only when different, through optimisticUpdate.
 */

import {
  CLUSTER_NAME_LABEL,
  controllerOf,
  isOwnedBy,
  ownerRef,
  statusOf,
  timestamp,
} from '../../shared/allocation/objects.ts';
import { belongsToTemplate } from '../../shared/allocation/template-match.ts';
import { updateOrGone } from '../../shared/allocation/update.ts';
import type { Cluster, Metal3Data, Metal3DataClaim, Metal3DataTemplate } from '../../shared/api/index.ts';
import { R } from '../../shared/api/resources.ts';
import { SKIP, sameJson } from '../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult } from '../../shared/reconcile/result.ts';

export interface TemplateMaps {
  indexes: Record<string, string>;
  dataNames: Record<string, string>;
}

/** The status maps of `template` from the Metal3Data list (pure). */
export function templateMaps(template: Metal3DataTemplate, datas: readonly Metal3Data[]): TemplateMaps {
  const indexes: Record<string, string> = {};
  const dataNames: Record<string, string> = {};
  const linked = datas
    .filter((d) => Number.isInteger(d.spec?.index) && d.spec.claim?.name && belongsToTemplate(template, d))
    .sort((a, b) => a.spec.index - b.spec.index);
  for (const d of linked) {
    indexes[String(d.spec.index)] = d.spec.claim.name;
    dataNames[d.spec.claim.name] = d.metadata.name ?? '';
  }
  return { indexes, dataNames };
}

export async function reconcileTemplate(
  ctx: ReconcileContext,
  namespace: string,
  name: string,
): Promise<ReconcileResult> {
  const { client } = ctx;
  const raw = await client.get(R.Metal3DataTemplate, namespace, name);
  if (!raw) return done('template gone');
  const template = raw as unknown as Metal3DataTemplate;
  const [datas, claims] = await Promise.all([
    client.list(R.Metal3Data, namespace),
    client.list(R.Metal3DataClaim, namespace),
  ]);
  const maps = templateMaps(template, datas.items as unknown as Metal3Data[]);
  await updateOrGone(
    client,
    R.Metal3DataTemplate,
    namespace,
    name,
    (o) => {
      const status = statusOf(o);
      if (sameJson(status.indexes ?? {}, maps.indexes) && sameJson(status.dataNames ?? {}, maps.dataNames))
        return SKIP;
      status.indexes = maps.indexes;
      status.dataNames = maps.dataNames;
      status.lastUpdated = timestamp(ctx.now());
    },
    { status: true, current: raw, expectedUid: raw.metadata.uid },
  );

  const clusterName =
    raw.metadata.labels?.[CLUSTER_NAME_LABEL] ??
    (claims.items as unknown as Metal3DataClaim[])
      .filter((c) => c.spec?.template?.name === name)
      .map((c) => c.metadata.labels?.[CLUSTER_NAME_LABEL])
      .find((v) => v);
  if (clusterName) await pointAtCluster(ctx, namespace, name, clusterName);
  return done();
}

/** Label `cluster.x-k8s.io/cluster-name` and an owner reference to the cluster's Metal3Cluster. */
export async function pointAtCluster(
  ctx: ReconcileContext,
  namespace: string,
  name: string,
  clusterName: string,
  opts: { ownerOnly?: boolean } = {},
): Promise<void> {
  const { client } = ctx;
  const cluster = (await client.get(R.Cluster, namespace, clusterName)) as (Cluster & KubeObject) | undefined;
  const infra = (
    cluster?.spec as { infrastructureRef?: { kind?: string; name?: string; namespace?: string } } | undefined
  )?.infrastructureRef;
  const m3c: KubeObject | undefined =
    infra?.kind === 'Metal3Cluster' && infra.name
      ? await client.get(R.Metal3Cluster, infra.namespace || namespace, infra.name)
      : undefined;
  if (!m3c && opts.ownerOnly) return;
  await updateOrGone(client, R.Metal3DataTemplate, namespace, name, (o) => {
    let changed = false;
    if (o.metadata.labels?.[CLUSTER_NAME_LABEL] !== clusterName && !o.metadata.labels?.[CLUSTER_NAME_LABEL]) {
      o.metadata.labels = { ...(o.metadata.labels ?? {}), [CLUSTER_NAME_LABEL]: clusterName };
      changed = true;
    }
    if (m3c && !isOwnedBy(o, m3c.metadata.uid)) {
      // The seed shows the Metal3Cluster as controller; never steal the role from another controller.
      const ref = ownerRef(R.Metal3Cluster, m3c, { controller: !controllerOf(o) });
      o.metadata.ownerReferences = [...(o.metadata.ownerReferences ?? []), ref];
      changed = true;
    }
    return changed ? undefined : SKIP;
  });
}
