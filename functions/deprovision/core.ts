/**
 * deprovision: a deleting Metal3Machine is released here; deleting Metal3DataClaim, Metal3Data and
 * IPClaim objects go to the data path's release functions (shared/release/data.ts).
 */

import type { ReconcileFn } from '../../shared/reconcile/context.ts';
import { MalformedMessageError } from '../../shared/reconcile/errors.ts';
import { done } from '../../shared/reconcile/result.ts';
import { reconcileRelease } from '../../shared/release/data.ts';
import { deprovisionMachine } from './machine.ts';

export const reconcile: ReconcileFn = async (ctx, msg) => {
  switch (msg.kind) {
    case 'Metal3Machine':
      if (!msg.namespace)
        throw new MalformedMessageError(`deprovision: Metal3Machine ${msg.name} needs a namespace`);
      return deprovisionMachine(ctx, msg.namespace, msg.name);
    case 'Metal3DataClaim':
    case 'Metal3Data':
    case 'IPClaim':
      return reconcileRelease(ctx, msg);
    default:
      return done(`deprovision ignores kind ${msg.kind}`);
  }
};
