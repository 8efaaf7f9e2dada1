/**
 * The function table, the one place that lists every function: its reconcile core by name (what
 * the local worker, the HTTP runtime, the direct runtime and replay are given to dispatch to) and
 * its folder (whose lambda.ts the build bundles; each Lambda bundle holds only its own core).
 */
import type { FunctionName } from '../events/envelope.ts';
import { reconcile as allocateIndex } from '../functions/allocate-index/core.ts';
import { reconcile as deprovision } from '../functions/deprovision/core.ts';
import { reconcile as reconcileCluster } from '../functions/metal3-cluster/core.ts';
import { reconcile as renderData } from '../functions/render-data/core.ts';
import { reconcile as resolveProviderID } from '../functions/resolve-provider-id/core.ts';
import { reconcile as selectHost } from '../functions/select-host/core.ts';
import type { ReconcileFn } from '../shared/reconcile/context.ts';

export const FUNCTIONS: Record<FunctionName, ReconcileFn> = {
  selectHost,
  allocateIndex,
  renderData,
  resolveProviderID,
  deprovision,
  reconcileCluster,
};

/** FunctionName -> the folder of its core. */
export const FUNCTION_DIRS: Record<FunctionName, string> = {
  selectHost: 'select-host',
  allocateIndex: 'allocate-index',
  renderData: 'render-data',
  resolveProviderID: 'resolve-provider-id',
  deprovision: 'deprovision',
  reconcileCluster: 'metal3-cluster',
};
