/**
 * ApiServerSource events at the HTTP runtime, routed with bounded reads and remembered state
 * (shared/routing/lookup.ts), against the embedded API server. Reads are counted by the routing
 * client's own request counters:
 *   - a host's status heartbeat seen before routes nothing and reads nothing for selectHost, and
 *     one GET (the consumer machine, no LIST) for deprovision, whose host route has no predicate;
 *   - a change a route reads (a label) routes again;
 *   - a delivery answered 500 (the function must retry) is not remembered: its redelivery routes;
 *   - chained lookups (Metal3Data → its claim → the claim's machine) are GETs, no LIST;
 *   - a route that lists a kind it does not declare in `lists` is refused (the RBAC role is built
 *     from the declarations).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageEnvelope } from '../../../events/envelope.ts';
import { apiVersionOf, envelopeOf, R } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { ReconcileFn } from '../../../shared/reconcile/context.ts';
import { TransientError } from '../../../shared/reconcile/errors.ts';
import { done } from '../../../shared/reconcile/result.ts';
import { ROUTES, type Route } from '../../../shared/routing/index.ts';
import { routeWithApi } from '../../../shared/routing/lookup.ts';
import { createHttpApp } from '../../../shared/runtimes/http.ts';
import { powerHeartbeat, resourceUpdateEvent } from '../../helpers/apiserversource.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { clusterContext } from '../../helpers/context.ts';

const NS = 'metal3';
let tc: TestCluster;
let router: KubeClient;
const calls: MessageEnvelope[] = [];
let failNext = 0;
const recording: ReconcileFn = async (_ctx, msg) => {
  calls.push(msg);
  if (failNext > 0) {
    failNext--;
    throw new TransientError('not yet');
  }
  return done();
};

const m3m = envelopeOf(R.Metal3Machine);
const bmh = envelopeOf(R.BareMetalHost);

beforeAll(async () => {
  tc = await startTestCluster();
  router = KubeClient.fromString(tc.kubeconfig);
  await tc.client.create(m3m, { metadata: { name: 'm-hb', namespace: NS }, spec: {} });
  const h = await tc.client.create(bmh, {
    metadata: { name: 'h-hb', namespace: NS },
    spec: {
      online: true,
      consumerRef: {
        apiVersion: apiVersionOf(R.Metal3Machine),
        kind: 'Metal3Machine',
        name: 'm-hb',
        namespace: NS,
      },
    },
  });
  await tc.client.replaceStatus(bmh, {
    ...h,
    status: { provisioning: { state: 'provisioned' }, poweredOn: true },
  });
});
afterAll(async () => {
  await tc?.stop();
});

const service = (fn: 'selectHost' | 'deprovision') =>
  createHttpApp({
    fns: { [fn]: recording },
    functions: [fn],
    context: clusterContext(router),
    auth: { allowUnauthenticated: true },
  });

/** Delivers the event; the status, the functions run, and what routing read. */
async function deliver(app: ReturnType<typeof service>, object: KubeObject) {
  const before = router.stats.snapshot();
  const since = calls.length;
  const r = await app.request('/', { method: 'POST', ...resourceUpdateEvent(object) });
  const after = router.stats.snapshot();
  return {
    status: r.status,
    ran: calls.slice(since).map((m) => `${m.function} ${m.name}`),
    gets: (after.byVerb.get ?? 0) - (before.byVerb.get ?? 0),
    lists: (after.byVerb.list ?? 0) - (before.byVerb.list ?? 0),
  };
}

const heartbeat = () => powerHeartbeat(tc.client, NS, 'h-hb');

describe('ApiServerSource routing: bounded reads, remembered state', () => {
  it('a heartbeat seen before routes nothing for selectHost and reads nothing; a label change routes', async () => {
    const app = service('selectHost');
    // First sight (no previous state): the consumer machine is found by one GET; one LIST of the
    // NodeProviders (vMetal: which NodeTypes count this namespace's hosts; none here, so no more).
    expect(await deliver(app, await heartbeat())).toEqual({
      status: 200,
      ran: ['selectHost m-hb'],
      gets: 1,
      lists: 1,
    });
    expect(await deliver(app, await heartbeat())).toEqual({ status: 200, ran: [], gets: 0, lists: 0 });
    const h = (await tc.client.get(bmh, NS, 'h-hb'))!;
    const relabelled = await tc.client.replace(bmh, {
      ...h,
      metadata: { ...h.metadata, labels: { ...h.metadata.labels, rack: 'r2' } },
    });
    // A label may change which hosts a NodeType counts: the NodeProviders are listed again.
    expect(await deliver(app, relabelled)).toMatchObject({ status: 200, ran: ['selectHost m-hb'], lists: 1 });
  });

  it('deprovision’s host route has no predicate: one GET per heartbeat, never a LIST', async () => {
    const app = service('deprovision');
    for (let i = 0; i < 3; i++)
      expect(await deliver(app, await heartbeat())).toEqual({ status: 200, ran: [], gets: 1, lists: 0 });
  });

  it('a delivery answered 500 is not remembered: its redelivery routes again', async () => {
    const app = service('selectHost');
    const h = (await tc.client.get(bmh, NS, 'h-hb'))!;
    const changed = await tc.client.replace(bmh, {
      ...h,
      metadata: { ...h.metadata, labels: { ...h.metadata.labels, rack: 'r3' } },
    });
    await deliver(app, changed); // first sight, remembered
    const again = await tc.client.replace(bmh, {
      ...changed,
      metadata: { ...changed.metadata, labels: { ...changed.metadata.labels, rack: 'r4' } },
    });
    failNext = 1;
    expect(await deliver(app, again)).toMatchObject({ status: 500, ran: ['selectHost m-hb'] });
    expect(await deliver(app, again)).toMatchObject({ status: 200, ran: ['selectHost m-hb'] });
    expect(await deliver(app, again)).toMatchObject({ status: 200, ran: [] });
  });

  it('chained lookups are GETs: a ready Metal3Data reaches its claim’s machine', async () => {
    const machine = await tc.client.get(m3m, NS, 'm-hb');
    const claim = await tc.client.create(envelopeOf(R.Metal3DataClaim), {
      metadata: {
        name: 'm-hb',
        namespace: NS,
        ownerReferences: [
          {
            apiVersion: apiVersionOf(R.Metal3Machine),
            kind: 'Metal3Machine',
            name: 'm-hb',
            uid: machine!.metadata.uid!,
            controller: true,
          },
        ],
      },
      spec: { template: { name: 'tpl' } },
    });
    const data: KubeObject = {
      apiVersion: apiVersionOf(R.Metal3Data),
      kind: 'Metal3Data',
      metadata: { name: 'tpl-0', namespace: NS, uid: 'd-uid', resourceVersion: '3' },
      spec: { index: 0, claim: { name: claim.metadata.name, namespace: NS }, template: { name: 'tpl' } },
      status: { ready: true },
    };
    expect(await deliver(service('selectHost'), data)).toEqual({
      status: 200,
      ran: ['selectHost m-hb'],
      gets: 2,
      lists: 0,
    });
  });

  it('refuses a route that lists a kind it does not declare', async () => {
    const undeclared: Route = {
      name: 'test: lists without declaring',
      on: 'BareMetalHost',
      fn: 'selectHost',
      reads: ['Metal3Machine'],
      targets: (_ev, c) => c.list('Metal3Machine', NS).map((object) => ({ kind: 'Metal3Machine', object })),
    };
    const host = (await tc.client.get(bmh, NS, 'h-hb'))!;
    await expect(routeWithApi(router, { type: 'MODIFIED', object: host }, [undeclared])).rejects.toThrow(
      /lists Metal3Machine without declaring it/,
    );
    // Declared, the same route reads the namespace's machines.
    const declared = { ...undeclared, lists: ['Metal3Machine'] as const };
    const routed = await routeWithApi(router, { type: 'MODIFIED', object: host }, [declared]);
    expect(routed.map((r) => r.msg.name)).toEqual(['m-hb']);
    expect(ROUTES.every((r) => (r.lists ?? []).every((k) => r.reads.includes(k)))).toBe(true);
  });
});
