/**
 * Metal3MachineTemplate: `spec.template.spec.automatedCleaningMode` changes propagate to the
 * Metal3Machines cloned from it (annotations cluster.x-k8s.io/cloned-from-name + -groupkind) and to
 * their hosts (only hosts those machines consume). `nodeReuse` is read by the release path.
 */
import type { Metal3MachineTemplate } from '../../shared/api/metal3machinetemplate.ts';
import { R } from '../../shared/api/resources.ts';
import {
  CLONED_FROM_GROUPKIND_ANNOTATION,
  CLONED_FROM_NAME_ANNOTATION,
  validHostRef,
} from '../../shared/api/wellknown.ts';
import { clusterLabelOrSpec, isPaused, M3MT_GROUPKIND, pausedObject } from '../../shared/capi/lookups.ts';
import { hostHeldBy, metal3MachineConsumer } from '../../shared/hosts/consumer.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { done, type ReconcileResult } from '../../shared/reconcile/result.ts';
import { MACHINE_FOR_PROPAGATION } from './views.ts';

export async function reconcileTemplate(
  ctx: ReconcileContext,
  template: Metal3MachineTemplate,
): Promise<ReconcileResult> {
  const ns = template.metadata.namespace!;
  const name = template.metadata.name!;
  const mode = template.spec.template.spec.automatedCleaningMode;
  if (!mode) return done('no automatedCleaningMode to propagate');
  // Every machine of the namespace, read through a view: one machine whose spec fails its schema
  // must not stop the propagation to the others.
  const { items } = await ctx.client.list(MACHINE_FOR_PROPAGATION, ns);
  let machines = 0;
  let hosts = 0;
  // A machine of a paused Cluster is left alone (the template's own pause is the opening's); each
  // Cluster is read once.
  const clusters = new Map<string, Promise<boolean>>();
  const paused = (m: (typeof items)[number]): Promise<boolean> => {
    const cluster = clusterLabelOrSpec(m) ?? '';
    if (!clusters.has(cluster))
      clusters.set(cluster, pausedObject(ctx, { metadata: { namespace: ns } }, cluster));
    return clusters.get(cluster)!.then((p) => p || isPaused(undefined, m));
  };
  for (const m of items) {
    const ann = m.metadata.annotations ?? {};
    if (ann[CLONED_FROM_NAME_ANNOTATION] !== name || ann[CLONED_FROM_GROUPKIND_ANNOTATION] !== M3MT_GROUPKIND)
      continue;
    if (m.metadata.deletionTimestamp || (await paused(m))) continue;
    const r = await optimisticUpdate(
      ctx.client,
      MACHINE_FOR_PROPAGATION,
      ns,
      m.metadata.name!,
      (o) => {
        if (o.metadata.deletionTimestamp) return SKIP;
        o.spec = { ...o.spec, automatedCleaningMode: mode };
      },
      { current: m, expectedUid: m.metadata.uid },
    );
    if (r.outcome === 'updated') machines++;
    const hostRef = validHostRef(m);
    if (!hostRef) continue;
    const me = metal3MachineConsumer({ name: m.metadata.name!, namespace: ns });
    const h = await optimisticUpdate(ctx.client, R.BareMetalHost, hostRef.namespace, hostRef.name, (o) => {
      if (!hostHeldBy(o, me)) return SKIP;
      o.spec = { ...o.spec, automatedCleaningMode: mode };
    });
    if (h.outcome === 'updated') hosts++;
  }
  return done(`automatedCleaningMode ${mode}: ${machines} machine(s), ${hosts} host(s) updated`);
}
