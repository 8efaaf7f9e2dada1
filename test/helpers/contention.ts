/**
 * The contention scenario shared by the concurrency test and the benchmark: N claims on one
 * template (or N IPClaims on one pool), W workers calling the core directly and concurrently,
 * with some messages delivered twice (at-least-once queues), duplicates placed right next to the
 * original so they really run at the same time.
 */
import {
  reconcile as allocateIndex,
  reconcileDataClaimMessage,
  reconcileIPClaimMessage,
} from '../../functions/allocate-index/core.ts';
import { seededRandom } from '../../infra/local/apiserver/clock.ts';
import { R, type Resource } from '../../shared/api/resources.ts';
import { FINALIZER } from '../../shared/api/wellknown.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { objectGroup } from '../../shared/queue/message.ts';
import { MAX_RECEIVE_COUNT } from '../../shared/queue/redelivery.ts';
import type { AllocationEvent, ReconcileContext, ReconcileMetrics } from '../../shared/reconcile/context.ts';
import { TransientError } from '../../shared/reconcile/errors.ts';
import type { ReconcileResult } from '../../shared/reconcile/result.ts';
import { dispatch } from '../../shared/runtimes/dispatch.ts';
import { createClaim, makeCtx, msg, NS } from './data.ts';
import { runWorkers } from './workers.ts';

/** Deterministic PRNG (mulberry32) so every run sees the same message order. */
export const prng = seededRandom;

/** Message order: every name once, shuffled, and a `dupRate` share delivered twice back to back. */
export function deliveries(names: string[], dupRate: number, seed = 1): string[] {
  const rnd = prng(seed);
  const order = [...names];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const out: string[] = [];
  for (const n of order) {
    out.push(n);
    if (rnd() < dupRate) out.push(n);
  }
  return out;
}

export interface ContentionResult {
  allocations: number;
  deliveries: number;
  /** Every 409 the API server answered (AlreadyExists on create and Conflict on update). */
  http409: number;
  /** AlreadyExists on a Metal3Data/IPAddress create. */
  alreadyExists: number;
  /** ... of which the existing object was this very claim's (a duplicate delivery racing itself). */
  duplicateCreates: number;
  /** Deliveries repeated after a transient error (an allocation that lost its create too often). */
  redeliveries: number;
  /** Objects returned by list calls while contending (what a burst costs in reads). */
  listed: number;
  ms: number;
}

export interface ContentionOptions {
  claims: number;
  workers: number;
  dupRate: number;
  seed?: number;
  /**
   * Call the per-kind function directly instead of through dispatch, so duplicates race each other
   * as they would in two processes (dispatch runs one delivery of a key at a time per process).
   */
  crossProcess?: boolean;
  /** Deliveries of one claim before a transient error fails the run (default: the queues' receive limit). */
  maxReceives?: number;
  /** ProductConfig.indexSpreadByRank (default true). */
  spreadByRank?: boolean;
}

/** Counts what allocateIndex reports through ReconcileContext.metrics. */
export function allocationTally(): { counts: Record<AllocationEvent, number>; metrics: ReconcileMetrics } {
  const counts: Record<AllocationEvent, number> = {
    created: 0,
    alreadyExists: 0,
    duplicateCreate: 0,
    reused: 0,
  };
  return {
    counts,
    metrics: {
      allocation: (_resource, event) => {
        counts[event]++;
      },
    },
  };
}

export async function indexContention(
  client: KubeClient,
  opts: ContentionOptions & { template?: string },
): Promise<ContentionResult> {
  const template = opts.template ?? 'contended';
  await client.create(R.Metal3DataTemplate, { metadata: { name: template, namespace: NS }, spec: {} });
  const names = Array.from(
    { length: opts.claims },
    (_, i) => `${template}-claim-${String(i).padStart(4, '0')}`,
  );
  await runWorkers(names, 16, (n) => createClaim(client, n, template));
  return contend(client, R.Metal3DataClaim, names, opts);
}

export async function addressContention(
  client: KubeClient,
  opts: ContentionOptions & { pool: string },
): Promise<ContentionResult> {
  const names = Array.from({ length: opts.claims }, (_, i) => `ipc-${String(i).padStart(4, '0')}`);
  await runWorkers(names, 16, (n) =>
    client.create(R.IPClaim, {
      metadata: { name: n, namespace: NS },
      spec: { pool: { name: opts.pool, namespace: NS } },
    }),
  );
  return contend(client, R.IPClaim, names, opts);
}

async function contend(
  client: KubeClient,
  t: Resource,
  names: string[],
  opts: ContentionOptions,
): Promise<ContentionResult> {
  const tally = allocationTally();
  const base = makeCtx(client);
  const ctx: ReconcileContext = {
    ...base,
    config: { ...base.config, indexSpreadByRank: opts.spreadByRank ?? true },
    metrics: tally.metrics,
  };
  const order = deliveries(names, opts.dupRate, opts.seed ?? 1);
  const conflicts0 = client.stats.conflicts;
  const listed0 = client.stats.listedItems;
  const started = performance.now();
  const direct = t === R.IPClaim ? reconcileIPClaimMessage : reconcileDataClaimMessage;
  // One delivery as a runtime makes it: through dispatch (one delivery of a key at a time).
  const delivered = async (n: string): Promise<ReconcileResult> => {
    const out = await dispatch({ allocateIndex }, ctx, msg('allocateIndex', t, n));
    if (out.kind === 'retry') throw out.error;
    if (out.kind === 'done') return out.result;
    if (out.kind === 'terminal') return { kind: 'terminal', reason: out.reason, message: out.message };
    throw new Error(`unexpected outcome ${JSON.stringify(out)}`);
  };
  let redeliveries = 0;
  // A transient error is what the queue redelivers (up to its receive limit): do the same.
  const deliver = async (n: string): Promise<ReconcileResult> => {
    for (let receive = 1; ; receive++) {
      try {
        return await (opts.crossProcess ? direct(ctx, msg('allocateIndex', t, n, NS)) : delivered(n));
      } catch (e) {
        if (!(e instanceof TransientError) || receive >= (opts.maxReceives ?? MAX_RECEIVE_COUNT)) throw e;
        redeliveries++;
      }
    }
  };
  const results = await runWorkers(order, opts.workers, deliver);
  const ms = performance.now() - started;
  const bad = results.filter((r) => r.kind !== 'done');
  if (bad.length > 0) throw new Error(`${bad.length} reconciles did not finish: ${JSON.stringify(bad[0])}`);
  return {
    allocations: names.length,
    deliveries: order.length,
    http409: client.stats.conflicts - conflicts0,
    alreadyExists: tally.counts.alreadyExists,
    duplicateCreates: tally.counts.duplicateCreate,
    redeliveries,
    listed: client.stats.listedItems - listed0,
    ms,
  };
}

export interface SerializedResult {
  allocations: number;
  /** Requests the passes sent, and of them the GETs of the template (its status grows with the fleet). */
  requests: number;
  templateGets: number;
  templateStatusWrites: number;
  http409: number;
  ms: number;
}

/**
 * The queued runtimes' case (ADR 012, 033): N claims of one template, created as select-host
 * creates them (with the claim finalizer), each delivered once in the template's FIFO group, one
 * pass at a time, in creation order.
 */
export async function serializedIndexAllocation(
  client: KubeClient,
  opts: { claims: number; template?: string },
): Promise<SerializedResult> {
  const template = opts.template ?? 'serialized';
  await client.create(R.Metal3DataTemplate, { metadata: { name: template, namespace: NS }, spec: {} });
  const names = Array.from(
    { length: opts.claims },
    (_, i) => `${template}-claim-${String(i).padStart(4, '0')}`,
  );
  await runWorkers(names, 16, (n) =>
    client.create(R.Metal3DataClaim, {
      metadata: { name: n, namespace: NS, finalizers: [FINALIZER.dataClaim] },
      spec: { template: { name: template } },
    }),
  );
  const ctx = makeCtx(client);
  // Delivered in the template's FIFO group: dispatch tells the core it is serialized by it.
  const group = objectGroup('Metal3DataTemplate', NS, template);
  const s = client.stats;
  const before = {
    requests: s.requests,
    gets: s.byResource.get('get metal3datatemplates') ?? 0,
    conflicts: s.conflicts,
  };
  const writes0 = s.byResource.get('patch-status metal3datatemplates') ?? 0;
  const started = performance.now();
  for (const n of names) {
    const out = await dispatch({ allocateIndex }, ctx, msg('allocateIndex', R.Metal3DataClaim, n), { group });
    if (out.kind !== 'done' || out.result.kind !== 'done') throw new Error(`${n}: ${JSON.stringify(out)}`);
  }
  return {
    allocations: names.length,
    requests: s.requests - before.requests,
    templateGets: (s.byResource.get('get metal3datatemplates') ?? 0) - before.gets,
    templateStatusWrites: (s.byResource.get('patch-status metal3datatemplates') ?? 0) - writes0,
    http409: s.conflicts - before.conflicts,
    ms: performance.now() - started,
  };
}
