/**
 * Routing by lookup under the functions' identity, with exactly the shipped roles enforced.
 *
 * Without a relay (Knative's ApiServerSource, infra/knative/apiserversource; `replay --event`),
 * each function Service routes raw events itself: `routeWithApi` GETs the objects the routes look
 * up by name and LISTs the kinds a route looks through (`lists`), as the functions' ServiceAccount. The functions' role
 * (infra/deploy/common/rbac-functions.yaml) is generated from relay-mode runs; the overlay adds
 * infra/knative/apiserversource/rbac-functions-routing.yaml, generated from the routing table
 * (scripts/rbac/routing-role.ts). On the embedded API server with RBAC enforced over HTTP:
 *
 *   1. with the functions' role ALONE, routing an event of every routed kind is refused exactly
 *      on the reads the routing role adds (so this test fails when that role is missing);
 *   2. with both roles, nothing is refused, and the routes find their targets;
 *   3. in Reference mode (the source's events name the object), the HTTP runtime reads the
 *      object of every kind the source lists (source.yaml) back as the functions, and nothing is
 *      refused: the shipped roles grant those gets (the functions' own role has them today);
 *   4. the routing role is the union over ROUTES of `reads`, and lists no Secrets (what
 *      docs/security.md says of this mode).
 * That the committed file is what the generator renders is checked with the other generated
 * files in rbac.test.ts (renderRbacFiles).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_NAMES } from '../../../events/envelope.ts';
import { applyRbacFile, FUNCTIONS_USER, RBAC_FILES, readManifests } from '../../../infra/local/dev/rbac.ts';
import { applyObjects, loadManifests } from '../../../infra/local/manifests.ts';
import {
  FUNCTIONS_SERVICE_ACCOUNT,
  ROUTING_ROLE_FILE,
  routingGrants,
} from '../../../scripts/rbac/routing-role.ts';
import { grantKey, grantsOfRules, type PolicyRule } from '../../../scripts/rbac/rules.ts';
import { envelopeOf, type KindName, R, type Resource, resourceFor } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { ReconcileFn } from '../../../shared/reconcile/context.ts';
import { done } from '../../../shared/reconcile/result.ts';
import { ROUTES, type RoutingEvent } from '../../../shared/routing/index.ts';
import { routeWithApi } from '../../../shared/routing/lookup.ts';
import { createHttpApp } from '../../../shared/runtimes/http.ts';
import { startTestCluster, type TestCluster, testClient } from '../../helpers/cluster.ts';
import { CLUSTER, converge, createMachine, makeCtx, NS } from '../../helpers/data.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
/** The overlay's ApiServerSource: the kinds whose events reach the function Services. */
const SOURCE_FILE = 'infra/knative/apiserversource/source.yaml';
const TOKEN = 'functions-routing-token';
let tc: TestCluster;
let fn: KubeClient;

/** Every kind some route listens on (management and workload). */
const ROUTED_KINDS = [...new Set(ROUTES.map((r) => r.on))];

beforeAll(async () => {
  tc = await startTestCluster({ rbac: { tokens: { [TOKEN]: { user: FUNCTIONS_USER } } } });
  await applyRbacFile(tc.client, RBAC_FILES.functions);
  fn = testClient(tc.server.kubeconfig({ token: TOKEN }));
  // The state the routes read: the sample (Cluster, Metal3Cluster, templates, pool, control
  // plane, workers), one machine with its host and claim, and what allocation and rendering make
  // of it (Metal3Data, IPClaim, IPAddress, the rendered Secrets), written by the admin.
  await applyObjects(tc.client, await loadManifests(join(ROOT, 'infra/local/sample')), NS);
  await createMachine(tc.client, 'm0', 'md-0-template');
  await converge(makeCtx(tc.client));
  await createVmetalObjects(tc.client);
});

/**
 * One object of each vMetal kind (ADR 018), as the admin: a provider over the sample's namespace,
 * its type, a claim, an environment and the catalogue kinds claims wait for.
 */
async function createVmetalObjects(client: KubeClient): Promise<void> {
  await client.create(R.NodeProvider, {
    metadata: { name: 'metal' },
    spec: { metal3: { clusterRef: { cluster: 'local', namespace: NS }, nodeTypes: [{ name: 'small' }] } },
  });
  await client.create(R.NodeType, { metadata: { name: 'small' }, spec: { providerRef: 'metal' } });
  await client.create(R.NodeClaim, {
    metadata: { name: 'tenant-small-0', namespace: NS },
    spec: { providerRef: 'metal', typeRef: 'small', vClusterRef: 'tenant' },
  });
  await client.create(R.NodeEnvironment, { metadata: { name: 'net', namespace: NS }, spec: {} });
  await client.create(R.OSImage, { metadata: { name: 'ubuntu' }, spec: {} });
  await client.create(R.SSHKey, {
    metadata: { name: 'admin' },
    spec: { publicKey: 'ssh-ed25519 AAAA admin' },
  });
  await client.create(R.MachineConfigTemplate, { metadata: { name: 'cfg' }, spec: {} });
}
afterAll(async () => {
  await tc?.stop();
});

/** An event of every routed kind: a live object of that kind (a Node from the workload cluster). */
async function representativeEvents(): Promise<RoutingEvent[]> {
  const events: RoutingEvent[] = [];
  for (const kind of ROUTED_KINDS) {
    if (kind === 'Node') {
      const node: KubeObject = {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'm0', labels: { 'metal3.io/uuid': 'uid-0', 'kubernetes.io/hostname': 'm0' } },
        spec: {},
      };
      events.push({ type: 'ADDED', object: node, cluster: `${NS}/${CLUSTER}` });
      continue;
    }
    const t: Resource = R[kind as KindName];
    const [object] = (await tc.client.list(t, NS)).items;
    expect(object, `a ${kind} to route (the sample, createMachine and converge make one)`).toBeDefined();
    const old = structuredClone(object!);
    old.metadata.resourceVersion = '1';
    old.metadata.labels = { ...old.metadata.labels, changed: 'yes' };
    events.push(
      { type: 'ADDED', object: object! },
      { type: 'MODIFIED', object: object!, old },
      {
        type: 'DELETED',
        object: {
          ...object!,
          metadata: { ...object!.metadata, deletionTimestamp: new Date().toISOString() },
        },
      },
    );
    if (kind === 'Cluster') {
      // The Cluster unpaused: the routes that wake every object of the cluster (issue 17's pause).
      const paused = structuredClone(object!);
      paused.metadata.resourceVersion = '1';
      paused.spec = { ...(paused.spec as Record<string, unknown>), paused: true };
      events.push({ type: 'MODIFIED', object: object!, old: paused });
    }
  }
  return events;
}

/** The API group of a request path (`/api/v1/...` is the core group ''). */
const groupOfPath = (path: string): string => {
  const segs = path.split('?')[0]!.split('/').filter(Boolean);
  return segs[0] === 'apis' ? (segs[1] ?? '') : '';
};

/** Routes every event as the functions; what was refused (from the server's request log). */
async function routeAll(): Promise<{ errors: string[]; refused: string[]; messages: number }> {
  const since = tc.server.log.entries.length;
  const errors: string[] = [];
  let messages = 0;
  for (const ev of await representativeEvents()) {
    try {
      messages += (await routeWithApi(fn, ev)).length;
    } catch (e) {
      errors.push(`${ev.type} ${ev.object.kind}: ${(e as Error).message}`);
    }
  }
  const mine = tc.server.log.entries.slice(since).filter((e) => e.user === FUNCTIONS_USER);
  expect(mine.length, 'routing made requests as the functions').toBeGreaterThan(0);
  const refused = mine
    .filter((e) => e.status === 401 || e.status === 403)
    .map((e) => `${e.verb} ${groupOfPath(e.path)}/${e.resource}`);
  return { errors, refused: [...new Set(refused)].sort(), messages };
}

let routingRoleApplied = false;
/** Binds the routing role to the functions as well (once; the first test runs without it). */
async function withRoutingRole(): Promise<void> {
  if (routingRoleApplied) return;
  await applyRbacFile(tc.client, join(ROOT, ROUTING_ROLE_FILE));
  routingRoleApplied = true;
}

const grantedBy = (file: string) =>
  grantsOfRules(
    readManifests(file)
      .filter((o) => o.kind === 'ClusterRole')
      .flatMap((o) => (o as unknown as { rules?: PolicyRule[] }).rules ?? []),
  );

describe('routing by lookup as the functions, with the shipped roles enforced', () => {
  it('the functions’ role alone is refused exactly the reads the routing role adds', async () => {
    const functions = new Set(grantedBy(RBAC_FILES.functions).map(grantKey));
    const missing = routingGrants()
      .filter((g) => !functions.has(grantKey(g)))
      .map((g) => `${g.verb} ${g.group}/${g.resource}`)
      .sort();
    expect(
      missing.length,
      'the functions’ role covers routing alone: the routing role is redundant',
    ).toBeGreaterThan(0);
    const { errors, refused } = await routeAll();
    expect(refused).toEqual(missing);
    expect(errors.length).toBeGreaterThan(0);
  });

  it('with the routing role as well: nothing refused, and events reach their targets', async () => {
    await withRoutingRole();
    const { errors, refused, messages } = await routeAll();
    expect(refused).toEqual([]);
    expect(errors).toEqual([]);
    expect(messages).toBeGreaterThan(0);
  });

  it('Reference mode (HTTP runtime): the object of every kind the source delivers is read back, nothing refused', async () => {
    await withRoutingRole();
    const source = readManifests(join(ROOT, SOURCE_FILE)).find(
      (o) => o.kind === 'ApiServerSource',
    ) as unknown as {
      spec: { resources: { apiVersion: string; kind: string }[] };
    };
    // Every function, as one Service runs them (a no-op each: what is under test is what the
    // runtime reads as the functions before it dispatches, not the functions' own calls).
    const noop: ReconcileFn = async () => done();
    const app = createHttpApp({
      fns: Object.fromEntries(FUNCTION_NAMES.map((f) => [f, noop])),
      context: makeCtx(fn),
      auth: { allowUnauthenticated: true },
    });
    const since = tc.server.log.entries.length;
    const reads: string[] = [];
    let results = 0;
    for (const res of source.spec.resources) {
      const t = resourceFor(res.apiVersion, res.kind);
      expect(t, `${res.kind} is a kind we know`).toBeDefined();
      const [object] = (await tc.client.list(envelopeOf(t!), NS)).items;
      expect(object, `a ${res.kind} to name (the sample, createMachine and converge make one)`).toBeDefined();
      reads.push(`get ${t!.group}/${t!.plural}`);
      // add and update read the object back (delete routes a stub, reading nothing).
      for (const verb of ['add', 'update']) {
        const r = await app.request('/', {
          method: 'POST',
          headers: { 'content-type': 'application/cloudevents+json' },
          body: JSON.stringify({
            specversion: '1.0',
            type: `dev.knative.apiserver.ref.${verb}`,
            id: `${res.kind}-${verb}`,
            source: 'apiserversource',
            data: {
              apiVersion: res.apiVersion,
              kind: res.kind,
              name: object!.metadata.name,
              namespace: object!.metadata.namespace,
            },
          }),
        });
        const body = (await r.json()) as { results?: unknown[]; error?: string };
        expect(r.status, `ref.${verb} ${res.kind}: ${JSON.stringify(body)}`).toBe(200);
        results += body.results?.length ?? 0;
      }
    }
    const mine = tc.server.log.entries.slice(since).filter((e) => e.user === FUNCTIONS_USER);
    const refused = mine
      .filter((e) => e.status === 401 || e.status === 403)
      .map((e) => `${e.verb} ${groupOfPath(e.path)}/${e.resource}`);
    expect([...new Set(refused)].sort()).toEqual([]);
    const got = new Set(
      mine
        .filter((e) => e.verb === 'get' && e.status === 200)
        .map((e) => `get ${groupOfPath(e.path)}/${e.resource}`),
    );
    expect(reads.filter((g) => !got.has(g))).toEqual([]);
    expect(results, 'the objects read back were routed to functions').toBeGreaterThan(0);
  });
});

describe('the routing role (infra/knative/apiserversource/rbac-functions-routing.yaml)', () => {
  const file = join(ROOT, ROUTING_ROLE_FILE);

  it('grants get on the union over ROUTES of `reads`, list on that of `lists`, nothing else, to the functions’ ServiceAccount', () => {
    const grants = new Set([
      ...ROUTES.flatMap((r) => r.reads).map((k) =>
        grantKey({ group: R[k].group, resource: R[k].plural, verb: 'get' }),
      ),
      ...ROUTES.flatMap((r) => r.lists ?? []).map((k) =>
        grantKey({ group: R[k].group, resource: R[k].plural, verb: 'list' }),
      ),
    ]);
    expect(grantedBy(file).map(grantKey).sort()).toEqual([...grants].sort());
    const binding = readManifests(file).find((o) => o.kind === 'ClusterRoleBinding') as unknown as {
      subjects: { kind: string; name: string; namespace: string }[];
    };
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', ...FUNCTIONS_SERVICE_ACCOUNT }]);
    // The functions' ServiceAccount, as the shipped role and the Knative Services name it.
    expect(FUNCTIONS_USER).toBe(
      `system:serviceaccount:${FUNCTIONS_SERVICE_ACCOUNT.namespace}:${FUNCTIONS_SERVICE_ACCOUNT.name}`,
    );
  });

  it('lists no Secrets (docs/security.md: no route reads Secrets; update it if one must)', () => {
    expect(routingGrants().filter((g) => g.resource === 'secrets')).toEqual([]);
  });
});
