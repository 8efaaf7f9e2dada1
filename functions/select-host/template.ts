/**
 * Metal3MachineTemplate: `spec.template.spec.automatedCleaningMode` changes propagate to the
 * Metal3Machines cloned from it (annotations cluster.x-k8s.io/cloned-from-name + -groupkind) and to
 * their hosts (only hosts those machines consume). `nodeReuse` is read by the release path.
 */
import { parseMetal3MachineTemplate } from '../../shared/api/metal3machinetemplate.ts';
import { R } from '../../shared/api/resources.ts';
import { CLONED_FROM_GROUPKIND, CLONED_FROM_NAME, M3MT_GROUPKIND } from '../../shared/capi/lookups.ts';
import { HOST_ANNOTATION, hostConsumerRef, isConsumedBy } from '../../shared/hosts/eligibility.ts';
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
    if (ann[CLONED_FROM_NAME] !== name || ann[CLONED_FROM_GROUPKIND] !== M3MT_GROUPKIND) continue;
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
    const hostRef = ann[HOST_ANNOTATION];
    if (!hostRef?.includes('/')) continue;
    const [hns, hname] = [hostRef.slice(0, hostRef.indexOf('/')), hostRef.slice(hostRef.indexOf('/') + 1)];
    const h = await optimisticUpdate(ctx.client, R.BareMetalHost, hns, hname, (o) => {
      if (!isConsumedBy(hostConsumerRef(o), { name: m.metadata.name!, namespace: ns }, o.metadata.namespace))
        return SKIP;
      (o.spec as Record<string, unknown>).automatedCleaningMode = mode;
    });
    if (h.outcome === 'updated') hosts++;
  }
  return done(`automatedCleaningMode ${mode}: ${machines} machine(s), ${hosts} host(s) updated`);
}
