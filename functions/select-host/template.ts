/**
 * Metal3MachineTemplate: `spec.template.spec.automatedCleaningMode` changes propagate to the
 * Metal3Machines cloned from it (annotations cluster.x-k8s.io/cloned-from-name + -groupkind) and to
 * their hosts (only hosts those machines consume). `nodeReuse` is read by the release path.
 */
import { parseMetal3MachineTemplate } from '../../shared/api/metal3machinetemplate.ts';
import { R } from '../../shared/api/resources.ts';
import {
  CLONED_FROM_GROUPKIND_ANNOTATION,
  CLONED_FROM_NAME_ANNOTATION,
  validHostRef,
} from '../../shared/api/wellknown.ts';
import { M3MT_GROUPKIND } from '../../shared/capi/lookups.ts';
import { hostHeldBy, metal3MachineConsumer } from '../../shared/hosts/consumer.ts';
import { optimisticUpdate, SKIP } from '../../shared/kube/optimistic.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { TerminalError } from '../../shared/reconcile/errors.ts';
import { done, type ReconcileResult, terminal } from '../../shared/reconcile/result.ts';

export async function reconcileTemplate(
  ctx: ReconcileContext,
  ns: string,
  name: string,
): Promise<ReconcileResult> {
  const raw = await ctx.client.get(R.Metal3MachineTemplate, ns, name);
  if (!raw) return done('Metal3MachineTemplate gone');
  let mode: string | undefined;
  try {
    mode = parseMetal3MachineTemplate(raw).spec.template.spec.automatedCleaningMode;
  } catch (e) {
    if (!(e instanceof TerminalError)) throw e;
    await ctx.events.record(raw, 'Warning', e.reason, e.message);
    return terminal(e.reason, e.message);
  }
  if (!mode) return done('no automatedCleaningMode to propagate');
  const { items } = await ctx.client.list(R.Metal3Machine, ns);
  let machines = 0;
  let hosts = 0;
  for (const m of items) {
    const ann = m.metadata.annotations ?? {};
    if (ann[CLONED_FROM_NAME_ANNOTATION] !== name || ann[CLONED_FROM_GROUPKIND_ANNOTATION] !== M3MT_GROUPKIND)
      continue;
    if (m.metadata.deletionTimestamp) continue;
    const r = await optimisticUpdate(
      ctx.client,
      R.Metal3Machine,
      ns,
      m.metadata.name!,
      (o) => {
        if (o.metadata.deletionTimestamp) return SKIP;
        (o.spec as Record<string, unknown>).automatedCleaningMode = mode;
      },
      { current: m, expectedUid: m.metadata.uid },
    );
    if (r.outcome === 'updated') machines++;
    const hostRef = validHostRef(m);
    if (!hostRef) continue;
    const me = metal3MachineConsumer({ name: m.metadata.name!, namespace: ns });
    const h = await optimisticUpdate(ctx.client, R.BareMetalHost, hostRef.namespace, hostRef.name, (o) => {
      if (!hostHeldBy(o, me)) return SKIP;
      (o.spec as Record<string, unknown>).automatedCleaningMode = mode;
    });
    if (h.outcome === 'updated') hosts++;
  }
  return done(`automatedCleaningMode ${mode}: ${machines} machine(s), ${hosts} host(s) updated`);
}
