/**
 * selectHost: message kinds Metal3Machine (contract checks, host claim, data, host spec) and
 * Metal3MachineTemplate (automatedCleaningMode propagation).
 */
import type { MessageEnvelope } from '../../events/envelope.ts';
import type { ReconcileContext, ReconcileFn } from '../../shared/reconcile/context.ts';
import { MalformedMessageError } from '../../shared/reconcile/errors.ts';
import { done } from '../../shared/reconcile/result.ts';
import { reconcileMachine } from './machine.ts';
import { reconcileTemplate } from './template.ts';

export const reconcile: ReconcileFn = async (ctx: ReconcileContext, msg: MessageEnvelope) => {
  if (!msg.namespace)
    throw new MalformedMessageError(`selectHost: ${msg.kind} ${msg.name} needs a namespace`);
  switch (msg.kind) {
    case 'Metal3Machine':
      return reconcileMachine(ctx, msg.namespace, msg.name);
    case 'Metal3MachineTemplate':
      return reconcileTemplate(ctx, msg.namespace, msg.name);
    default:
      return done(`selectHost ignores kind ${msg.kind}`);
  }
};
