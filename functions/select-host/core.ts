/**
 * selectHost: message kinds Metal3Machine (contract checks, host claim, data, host spec) and
 * Metal3MachineTemplate (automatedCleaningMode propagation), each parsed by the shared opening;
 * and the vMetal kinds NodeProvider, NodeType and NodeClaim (ADR 018).
 */
import { R } from '../../shared/api/resources.ts';
import { COND } from '../../shared/capi/conditions.ts';
import { clusterLabelOrSpec } from '../../shared/capi/lookups.ts';
import { recordTerminal } from '../../shared/capi/status.ts';
import { recordEventOnly } from '../../shared/reconcile/failure.ts';
import { reconcileKinds, reconcileObject } from '../../shared/reconcile/object.ts';
import { recordClaimFailure } from '../../shared/vmetal/status.ts';
import { reconcileMachine } from './machine.ts';
import { reconcileNodeClaim } from './nodeclaim.ts';
import { reconcileNodeProvider } from './nodeprovider.ts';
import { reconcileNodeType } from './nodetype.ts';
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
    NodeProvider: reconcileObject({
      resource: R.NodeProvider,
      gone: 'NodeProvider gone',
      reconcile: reconcileNodeProvider,
      recordFailure: recordEventOnly,
      // vMetal objects belong to no Cluster API Cluster: Cluster API pause does not apply.
      cluster: () => undefined,
    }),
    NodeType: reconcileObject({
      resource: R.NodeType,
      gone: 'NodeType gone',
      reconcile: reconcileNodeType,
      recordFailure: recordEventOnly,
      // vMetal objects belong to no Cluster API Cluster: Cluster API pause does not apply.
      cluster: () => undefined,
    }),
    NodeClaim: reconcileObject({
      resource: R.NodeClaim,
      gone: 'NodeClaim gone',
      reconcile: reconcileNodeClaim,
      recordFailure: recordClaimFailure,
      // vMetal objects belong to no Cluster API Cluster: Cluster API pause does not apply.
      cluster: () => undefined,
    }),
  },
  (kind) => `selectHost ignores kind ${kind}`,
);
