/**
 * The one opening of every reconcile of an object (controller-runtime's typed reconciler,
 * `AsReconciler`): get → gone → parse → reconcile. A function declares the kinds it reconciles,
 * each with the schema its objects are read through and how a terminal error is recorded on one;
 * it receives the parsed object. Here, in one place:
 *
 *  - the object is gone: done, nothing written;
 *  - the object is paused (Cluster API pause, `cluster`): left alone, nothing written;
 *  - the object fails its schema: the failure is recorded on it (its error fields or condition, a
 *    Warning Event) once, nothing else is written, the result is terminal;
 *  - an object read while reconciling (a related object) fails its schema: the failure is recorded
 *    on the object being reconciled, in the same way; the related object is never written to.
 */
import type { MessageEnvelope } from '../../events/envelope.ts';
import type { KindName } from '../api/kinds.ts';
import type { KubeObject } from '../api/meta.ts';
import type { Resource } from '../api/resources.ts';
import { pausedObject } from '../capi/lookups.ts';
import type { ReconcileContext, ReconcileFn } from './context.ts';
import { InvalidObjectError, MalformedMessageError, type TerminalError } from './errors.ts';
import { done, type ReconcileResult, requeueAfter } from './result.ts';

export interface ObjectReconciler<T extends KubeObject> {
  /** The kind, read through the schema the function acts on. */
  resource: Resource<T>;
  /** The result's note when the object does not exist (any more). */
  gone: string;
  reconcile(ctx: ReconcileContext, obj: T, msg: MessageEnvelope): Promise<ReconcileResult>;
  /**
   * Records a terminal error on the object and returns the terminal result. `obj` is the object as
   * last read: its envelope only when it failed its own schema, so the recorder writes through a
   * view that does not parse the body. It writes nothing when the same error is already recorded.
   */
  recordFailure(ctx: ReconcileContext, obj: KubeObject, err: TerminalError): Promise<ReconcileResult>;
  /**
   * Cluster API pause: the name of the Cluster the object belongs to (read from its metadata or
   * spec, so that it works on an object that fails its schema too). While that Cluster is paused
   * (or the object carries the paused annotation) the object is left alone — its deletion and a
   * failure of its schema included — with nothing written, until the Cluster's unpause event
   * (routing table) wakes it.
   */
  cluster: (obj: KubeObject) => string | undefined;
  /** The reconciler checks pause itself (it has more to do while paused); the opening only gates a schema failure. */
  pausesItself?: boolean;
}

/** Paused: nothing written; the Cluster's unpause event wakes the object (the requeue is a safety net). */
const paused = (ctx: ReconcileContext, kind: string): ReconcileResult =>
  requeueAfter(ctx.config.safetyRequeueSeconds, `paused: ${kind} left alone`);

/** The ReconcileFn of one kind: the opening above around `r.reconcile`. */
export function reconcileObject<T extends KubeObject>(r: ObjectReconciler<T>): ReconcileFn {
  return async (ctx, msg) => {
    if (r.resource.namespaced && !msg.namespace)
      throw new MalformedMessageError(`${msg.function}: ${msg.kind} ${msg.name} needs a namespace`);
    let obj: T | undefined;
    try {
      obj = await ctx.client.get(r.resource, msg.namespace, msg.name);
    } catch (e) {
      if (
        e instanceof InvalidObjectError &&
        e.object &&
        e.concerns(r.resource.kind, msg.namespace, msg.name)
      ) {
        if (await pausedObject(ctx, e.object, r.cluster(e.object))) return paused(ctx, r.resource.kind);
        return r.recordFailure(ctx, e.object, e);
      }
      throw e;
    }
    if (!obj) return done(r.gone);
    try {
      if (!r.pausesItself && (await pausedObject(ctx, obj, r.cluster(obj))))
        return paused(ctx, r.resource.kind);
      return await r.reconcile(ctx, obj, msg);
    } catch (e) {
      // A related object that fails its schema (or this one, re-read after a write of someone else):
      // recorded on the object being reconciled.
      if (e instanceof InvalidObjectError) return r.recordFailure(ctx, obj, e);
      throw e;
    }
  };
}

/**
 * A function's core: its kinds and their openings. A message for another kind is acknowledged
 * with `ignored(kind)` as its note (the relay never sends one).
 */
export function reconcileKinds(
  kinds: Partial<Record<KindName, ReconcileFn>>,
  ignored: (kind: string) => string,
): ReconcileFn {
  const table = new Map<string, ReconcileFn>();
  for (const [kind, fn] of Object.entries(kinds)) if (fn) table.set(kind, fn);
  return (ctx, msg) => table.get(msg.kind)?.(ctx, msg) ?? Promise.resolve(done(ignored(msg.kind)));
}
