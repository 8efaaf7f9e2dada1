/**
 * Bad-input corpus setup: the embedded API server with our CRDs, a reconcile context whose writes go
 * over HTTP (so the server's request log sees every one of them), and assertions shared by the
 * table-driven files: what was written (by resource), the Warning Events of an object, and the
 * 422 an invalid object gets from the CRD.
 */
import { expect } from 'vitest';
import { FUNCTIONS } from '../../bin/function-table.ts';
import type { MessageEnvelope } from '../../events/envelope.ts';
import type { RequestLog, RequestLogEntry } from '../../infra/local/apiserver/index.ts';
import { R, type Resource } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { ReconcileContext } from '../../shared/reconcile/context.ts';
import { type DispatchOutcome, dispatch } from '../../shared/runtimes/dispatch.ts';
import { clusterContext } from '../helpers/context.ts';
import { messageFor } from '../helpers/messages.ts';
import { type ClusterWithCtx, type UseClusterOptions, useCluster } from '../helpers/use-cluster.ts';

export const NS = 'metal3';
export const CLUSTER = 'cluster';

export const makeCtx = (client: KubeClient): ReconcileContext =>
  clusterContext(client, { component: 'metal3fn-bad-input' });
export const envelopeFor = messageFor;

/** Runs one message through the same dispatch core every runtime uses. */
export function run(
  ctx: ReconcileContext,
  fn: MessageEnvelope['function'],
  t: Resource,
  name: string,
): Promise<DispatchOutcome> {
  return dispatch(FUNCTIONS, ctx, JSON.stringify(envelopeFor(fn, t, name)));
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** Successful or attempted writes in the request log, optionally only to these resources. */
export function writes(log: RequestLog, resources?: string[]): RequestLogEntry[] {
  return log.entries.filter(
    (e) =>
      WRITE_VERBS.has(e.verb) &&
      (resources === undefined || resources.some((r) => e.resource === r || e.resource.startsWith(`${r}/`))),
  );
}

/** `verb resource/name` of each write, for readable failures. */
export const describeWrites = (es: RequestLogEntry[]): string[] =>
  es.map((e) => `${e.verb} ${e.resource}${e.name ? `/${e.name}` : ''} -> ${e.status}`);

/** Resources a rejected input must never touch: hosts and Secrets (and the data the host would get). */
export const PRECIOUS = ['baremetalhosts', 'secrets', 'metal3datas', 'ipaddresses'];

export function expectNoPreciousWrites(log: RequestLog): void {
  expect(describeWrites(writes(log, PRECIOUS))).toEqual([]);
}

/** Warning Events recorded for an object. */
export async function warningEvents(client: KubeClient, obj: KubeObject): Promise<KubeObject[]> {
  const { items } = await client.list(R.Event, obj.metadata.namespace ?? NS);
  return items.filter(
    (e) =>
      (e as { type?: string }).type === 'Warning' &&
      (e as { involvedObject?: { name?: string; kind?: string } }).involvedObject?.name ===
        obj.metadata.name &&
      (e as { involvedObject?: { kind?: string } }).involvedObject?.kind === obj.kind,
  );
}

/** The 422 the API server answers for an invalid object, with the field path in its message. */
export async function expectRejected(
  client: KubeClient,
  t: Resource,
  obj: KubeObject,
  fieldPath: string,
): Promise<void> {
  let err: unknown;
  try {
    await client.create(t, obj);
  } catch (e) {
    err = e;
  }
  expect(err, `${t.kind} ${obj.metadata.name} should be rejected`).toBeDefined();
  expect((err as { code?: number }).code).toBe(422);
  expect((err as Error).message).toContain(fieldPath);
  expect(await client.get(t, obj.metadata.namespace, obj.metadata.name!)).toBeUndefined();
}

export const statusOf = (o: KubeObject | undefined): Record<string, unknown> =>
  (o?.status ?? {}) as Record<string, unknown>;

/** The file's cluster with this corpus's context (hooks and holder as in useCluster). */
export const useBadInputCluster = (
  opts: Omit<UseClusterOptions<ReconcileContext>, 'makeCtx'> = {},
): ClusterWithCtx<ReconcileContext> => useCluster({ ...opts, makeCtx });
