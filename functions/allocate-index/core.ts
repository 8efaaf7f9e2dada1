/**
 * allocateIndex (DESIGN.md §1): the lowest free index of a Metal3DataTemplate for a
 * Metal3DataClaim, the lowest free address of an IPPool for an IPClaim, the template's derived
 * status and cluster label, and the deletion protection of templates and pools (their finalizers,
 * template.ts and pool.ts). Deleting claims are released here too (release.ts), so a message that
 * arrives after the deletion started never allocates. Each kind is parsed by the shared opening:
 * the claims through their own schemas, templates and pools through the views their allocations
 * read (shared/allocation/views.ts: a template the renderer rejects still has its indexes kept).
 */
import { V } from '../../shared/allocation/views.ts';
import { R } from '../../shared/api/resources.ts';
import { clusterLabelOrSpec } from '../../shared/capi/lookups.ts';
import { recordEventOnly } from '../../shared/reconcile/failure.ts';
import { reconcileKinds, reconcileObject } from '../../shared/reconcile/object.ts';
import { reconcileDataClaim, recordDataClaimFailure } from './claim.ts';
import { reconcileIPClaim, recordIPClaimFailure } from './ipclaim.ts';
import { reconcilePool } from './pool.ts';
import { reconcileTemplate } from './template.ts';

export const reconcileDataClaimMessage = reconcileObject({
  resource: R.Metal3DataClaim,
  gone: 'claim gone',
  reconcile: reconcileDataClaim,
  recordFailure: recordDataClaimFailure,
  cluster: clusterLabelOrSpec,
});
export const reconcileIPClaimMessage = reconcileObject({
  resource: R.IPClaim,
  gone: 'claim gone',
  reconcile: reconcileIPClaim,
  recordFailure: recordIPClaimFailure,
  cluster: clusterLabelOrSpec,
});

export const reconcile = reconcileKinds(
  {
    Metal3DataClaim: reconcileDataClaimMessage,
    IPClaim: reconcileIPClaimMessage,
    Metal3DataTemplate: reconcileObject({
      resource: V.Metal3DataTemplate,
      gone: 'template gone',
      reconcile: reconcileTemplate,
      recordFailure: recordEventOnly,
      cluster: clusterLabelOrSpec,
    }),
    IPPool: reconcileObject({
      resource: V.IPPool,
      gone: 'pool gone',
      reconcile: reconcilePool,
      recordFailure: recordEventOnly,
      cluster: clusterLabelOrSpec,
    }),
  },
  (kind) => `allocateIndex: ignoring kind ${kind}`,
);

export { reconcileRelease } from '../../shared/release/data.ts';
