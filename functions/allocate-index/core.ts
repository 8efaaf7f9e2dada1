/**
 * allocateIndex (DESIGN.md §1): the lowest free index of a Metal3DataTemplate for a
 * Metal3DataClaim, the lowest free address of an IPPool for an IPClaim, the template's derived
 * status and cluster label, and the deletion protection of templates and pools (their finalizers,
 * template.ts and pool.ts). Deleting claims are released here too (release.ts), so a message that
 * arrives after the deletion started never allocates.
 */
import type { ReconcileFn } from '../../shared/reconcile/context.ts';
import { done } from '../../shared/reconcile/result.ts';
import { reconcileDataClaim } from './claim.ts';
import { reconcileIPClaim } from './ipclaim.ts';
import { reconcilePool } from './pool.ts';
import { reconcileTemplate } from './template.ts';

export const reconcile: ReconcileFn = async (ctx, msg) => {
  const ns = msg.namespace ?? 'default';
  switch (msg.kind) {
    case 'Metal3DataClaim':
      return reconcileDataClaim(ctx, ns, msg.name);
    case 'IPClaim':
      return reconcileIPClaim(ctx, ns, msg.name);
    case 'Metal3DataTemplate':
      return reconcileTemplate(ctx, ns, msg.name);
    case 'IPPool':
      return reconcilePool(ctx, ns, msg.name);
    default:
      return done(`allocateIndex: ignoring kind ${msg.kind}`);
  }
};

export { reconcileRelease } from '../../shared/release/data.ts';
