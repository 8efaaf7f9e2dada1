/**
 * HTTP runtime (`metal3fn http`, hono): CloudEvents in (binary or structured), the same dispatch
 * core as every other runtime. For Knative: a Trigger delivers our relay's message events, or
 * ApiServerSource events (Resource or Reference mode), which are routed through the relay's table.
 *
 *   POST /        one CloudEvent; 200 all done, 400 malformed, 401 unauthenticated, 413 too large,
 *                 500 when a function failed transiently (the Broker retries with its backoff),
 *                 503 when the OIDC issuer cannot be reached to check the sender (retried too)
 *   GET /healthz  liveness
 *   GET /metrics  Prometheus (prom-client)
 *
 * Requeue-after has no queue here: a timer re-dispatches in-process (a safety net only; events and
 * the source's resync wake waits), or `onRequeue` hands it to SQS when one is configured.
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { FUNCTION_NAMES, type FunctionName, type MessageEnvelope } from '../../events/envelope.ts';
import { isRecord, messageOf, stringOf } from '../api/json.ts';
import { KubeObjectSchema } from '../api/meta.ts';
import { envelopeOf, resourceFor } from '../api/resources.ts';
import type { ReconcileContext } from '../reconcile/context.ts';
import type { RoutingEvent } from '../routing/index.ts';
import { ROUTES } from '../routing/index.ts';
import { RoutingMemory, routeWithApi } from '../routing/lookup.ts';
import { type AuthOptions, authConfigured, verifyRequest } from './auth.ts';
import {
  apiServerEventType,
  type CloudEvent,
  CloudEventError,
  extensionOf,
  MESSAGE_EVENT_TYPE,
  parseCloudEvent,
  WATCH_TYPE_OF,
} from './cloudevents.ts';
import { type DispatchOutcome, dispatch, type FunctionTable } from './dispatch.ts';
import { PipelineMetrics } from './metrics.ts';

export interface HttpRuntimeOptions {
  fns: FunctionTable;
  context: ReconcileContext;
  /** The functions this service runs (one Knative Service per function); default all in `fns`. */
  functions?: readonly FunctionName[] | undefined;
  auth: AuthOptions & { allowUnauthenticated?: boolean | undefined };
  /** Largest accepted body (default 64 KiB). */
  maxBodyBytes?: number | undefined;
  metrics?: PipelineMetrics | undefined;
  /** Requeue-after: default an in-process timer. */
  /** `notBefore`: the due time the core named (requeueAt), when it named one. */
  onRequeue?:
    | ((msg: MessageEnvelope, afterSeconds: number, notBefore?: number) => void | Promise<void>)
    | undefined;
  /** Longest in-process requeue timer (default 900 s). */
  maxRequeueSeconds?: number | undefined;
  /** Objects whose last routed state is remembered for ApiServerSource events (default 10,000). */
  routingMemory?: number | undefined;
}

interface Invocation {
  function: FunctionName;
  kind: string;
  key: string;
  outcome: DispatchOutcome['kind'];
  detail?: string | undefined;
}

export function createHttpApp(opts: HttpRuntimeOptions): Hono {
  if (!authConfigured(opts.auth) && !opts.auth.allowUnauthenticated) {
    throw new Error(
      'the HTTP runtime needs an OIDC audience, a bearer token or an HMAC secret (or an explicit --allow-unauthenticated)',
    );
  }
  const metrics = opts.metrics ?? new PipelineMetrics();
  const served = new Set<FunctionName>(opts.functions ?? FUNCTION_NAMES.filter((fn) => opts.fns[fn]));
  const maxBody = opts.maxBodyBytes ?? 64 * 1024;
  const timers = new Set<NodeJS.Timeout>();
  // ApiServerSource events: only this Service's routes (no reads for another function's), and
  // the previous state of each object, so the relay's change predicates apply (shared/routing/lookup.ts).
  const routes = ROUTES.filter((r) => served.has(r.fn));
  const memory = new RoutingMemory(opts.routingMemory);

  const requeue =
    opts.onRequeue ??
    ((msg: MessageEnvelope, afterSeconds: number, notBefore?: number) => {
      const t = setTimeout(
        () => {
          timers.delete(t);
          // The due time goes with it: a core that named one recognises a requeue a later pass covered.
          void run({
            ...msg,
            reason: 'requeue',
            attempt: (msg.attempt ?? 0) + 1,
            observedAt: Date.now(),
            ...(notBefore !== undefined ? { notBefore } : {}),
          });
        },
        Math.min(afterSeconds, opts.maxRequeueSeconds ?? 900) * 1000,
      );
      t.unref();
      timers.add(t);
    });

  const run = async (
    msg: MessageEnvelope | unknown,
  ): Promise<Invocation | { outcome: 'malformed'; detail: string }> => {
    const out = await dispatch(opts.fns, opts.context, msg, { expect: [...served], metrics });
    if (out.kind === 'malformed') return { outcome: 'malformed', detail: out.reason };
    if (out.kind === 'requeue') await requeue(out.msg, out.afterSeconds, out.notBefore);
    return {
      function: out.msg.function,
      kind: out.msg.kind,
      key: out.msg.namespace ? `${out.msg.namespace}/${out.msg.name}` : out.msg.name,
      outcome: out.kind,
      detail: out.kind === 'retry' ? out.error.message : out.kind === 'terminal' ? out.message : undefined,
    };
  };

  /** The watch-style event an ApiServerSource CloudEvent stands for. */
  const apiServerEvent = async (
    ce: CloudEvent<unknown>,
    mode: 'resource' | 'ref',
    type: RoutingEvent['type'],
  ): Promise<RoutingEvent> => {
    const data = ce.data;
    if (!isRecord(data)) throw new CloudEventError('ApiServerSource event without data');
    if (mode === 'resource') {
      const object = KubeObjectSchema.safeParse(data).data;
      if (!object?.kind || !object.metadata.name)
        throw new CloudEventError('Resource-mode data must be an object with kind and metadata.name');
      return { type, object };
    }
    // Reference mode: the data names the object; read it back (a deleted one becomes a stub).
    const ref = {
      apiVersion: stringOf(data.apiVersion) ?? extensionOf(ce, 'apiversion'),
      kind: stringOf(data.kind) ?? extensionOf(ce, 'kind'),
      name: stringOf(data.name) ?? extensionOf(ce, 'name'),
      namespace: stringOf(data.namespace) ?? extensionOf(ce, 'namespace'),
    };
    if (!ref.kind || !ref.name) throw new CloudEventError('Reference-mode data must name kind and name');
    const t = resourceFor(ref.apiVersion ?? '', ref.kind);
    const obj =
      t && type !== 'DELETED'
        ? await opts.context.client.get(envelopeOf(t), ref.namespace, ref.name)
        : undefined;
    if (obj) {
      obj.kind ??= ref.kind;
      obj.apiVersion ??= ref.apiVersion;
      return { type, object: obj };
    }
    return {
      type: 'DELETED',
      object: {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name, namespace: ref.namespace },
      },
    };
  };

  const app = new Hono();
  app.get('/healthz', (c) => c.text('ok'));
  app.get('/metrics', async (c) =>
    c.body(await metrics.registry.metrics(), 200, { 'content-type': metrics.registry.contentType }),
  );
  app.post(
    '/',
    bodyLimit({
      maxSize: maxBody,
      onError: (c) => c.json({ error: `body larger than ${maxBody} bytes` }, 413),
    }),
    async (c) => {
      const body = await c.req.text();
      if (!opts.auth.allowUnauthenticated) {
        const verdict = await verifyRequest(opts.auth, c.req.raw.headers, body);
        if (!verdict.ok && verdict.status === 401)
          return c.json({ error: verdict.error }, 401, { 'www-authenticate': 'Bearer' });
        if (!verdict.ok) return c.json({ error: verdict.error }, 503);
      }
      let ce: CloudEvent<unknown>;
      try {
        ce = parseCloudEvent(c.req.raw.headers, body);
      } catch (e) {
        return c.json({ error: messageOf(e) }, 400);
      }
      const results: Invocation[] = [];
      try {
        if (ce.type === MESSAGE_EVENT_TYPE) {
          const r = await run(ce.data);
          if (r.outcome === 'malformed') return c.json({ error: r.detail }, 400);
          results.push(r as Invocation);
        } else {
          const api = apiServerEventType(ce.type);
          if (!api) return c.json({ error: `unsupported event type '${ce.type}'` }, 400);
          const ev = memory.withPrevious(await apiServerEvent(ce, api.mode, WATCH_TYPE_OF[api.verb]));
          const routed = await routeWithApi(opts.context.client, { ...ev, observedAt: Date.now() }, routes);
          const outs = await Promise.all(routed.map((r) => run(r.msg)));
          for (const o of outs) if (o.outcome !== 'malformed') results.push(o as Invocation);
          // Remembered once handled: a delivery answered 500 is retried and must route again.
          if (!results.some((r) => r.outcome === 'retry')) memory.remember(ev);
        }
      } catch (e) {
        if (e instanceof CloudEventError) return c.json({ error: e.message }, 400);
        // Reading the cluster failed: transient, let the sender retry.
        return c.json({ error: messageOf(e) }, 500);
      }
      const failed = results.some((r) => r.outcome === 'retry');
      return c.json({ id: ce.id, results }, failed ? 500 : 200);
    },
  );
  return app;
}
