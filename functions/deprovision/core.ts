/**
 * deprovision: a deleting Metal3Machine or NodeClaim is released here; deleting Metal3DataClaim,
 * Metal3Data and IPClaim objects go to the data path's release functions (shared/release/data.ts).
 * Every kind is read through its release view by the shared opening: a release never waits for a
 * valid spec.
 */
import { R } from '../../shared/api/resources.ts';
import { COND } from '../../shared/capi/conditions.ts';
import { clusterLabelOrSpec } from '../../shared/capi/lookups.ts';
import { recordTerminal } from '../../shared/capi/status.ts';
import type { ReconcileFn } from '../../shared/reconcile/context.ts';
import { reconcileKinds, reconcileObject } from '../../shared/reconcile/object.ts';
import { reconcileRelease } from '../../shared/release/data.ts';
import { recordClaimFailure } from '../../shared/vmetal/status.ts';
import { deprovisionMachine } from './machine.ts';
import { deprovisionNodeClaim } from './nodeclaim.ts';
import { MACHINE_FOR_RELEASE } from './views.ts';

export const reconcile: ReconcileFn = reconcileKinds(
  {
    Metal3Machine: reconcileObject({
      resource: MACHINE_FOR_RELEASE,
      gone: 'Metal3Machine gone',
      reconcile: deprovisionMachine,
      recordFailure: (ctx, m3m, err) => recordTerminal(ctx, m3m, err, COND.AssociateBMH, { once: true }),
      cluster: clusterLabelOrSpec,
    }),
    NodeClaim: reconcileObject({
      resource: R.NodeClaim,
      gone: 'NodeClaim gone',
      reconcile: deprovisionNodeClaim,
      recordFailure: recordClaimFailure,
      // vMetal objects belong to no Cluster API Cluster: Cluster API pause does not apply.
      cluster: () => undefined,
    }),
    Metal3DataClaim: reconcileRelease,
    Metal3Data: reconcileRelease,
    IPClaim: reconcileRelease,
  },
  (kind) => `deprovision ignores kind ${kind}`,
);
