/**
 * selectHost: message kinds Metal3Machine (contract checks, host claim, data, host spec) and
 * Metal3MachineTemplate (automatedCleaningMode propagation), each parsed by the shared opening.
 */
import { R } from '../../shared/api/resources.ts';
import { COND } from '../../shared/capi/conditions.ts';
import { clusterLabelOrSpec } from '../../shared/capi/lookups.ts';
import { recordTerminal } from '../../shared/capi/status.ts';
import { recordEventOnly } from '../../shared/reconcile/failure.ts';
import { reconcileKinds, reconcileObject } from '../../shared/reconcile/object.ts';
import { reconcileMachine } from './machine.ts';
import { reconcileTemplate } from './template.ts';

export const reconcile = reconcileKinds(
  {
    Metal3Machine: reconcileObject({
      resource: R.Metal3Machine,
      gone: 'Metal3Machine gone',
      reconcile: reconcileMachine,
      recordFailure: (ctx, m3m, err) => recordTerminal(ctx, m3m, err, COND.AssociateBMH, { once: true }),
      // Paused, the machine's host gets the paused annotation and its condition says so (machine.ts).
      cluster: clusterLabelOrSpec,
      pausesItself: true,
    }),
    Metal3MachineTemplate: reconcileObject({
      resource: R.Metal3MachineTemplate,
      gone: 'Metal3MachineTemplate gone',
      reconcile: reconcileTemplate,
      recordFailure: recordEventOnly,
      cluster: clusterLabelOrSpec,
    }),
  },
  (kind) => `selectHost ignores kind ${kind}`,
);
