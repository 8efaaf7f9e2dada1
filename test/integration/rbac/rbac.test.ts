/**
 * Least-privilege RBAC, generated and proven (scripts/gen-rbac.ts, scripts/rbac/rules.ts).
 *
 *   1. The rule builder is a pure function from request log entries to rules (unit cases).
 *   2. The committed role files are exactly what the builder makes of the committed observation
 *      (infra/deploy/rbac-observed.json): nobody edits them by hand. The same holds for the
 *      routing-by-lookup role of the Knative ApiServerSource overlay, rendered from the routing
 *      table (scripts/rbac/routing-role.ts; proven under enforcement in routing.test.ts).
 *   3. The whole system (runDev, as `npm start` runs it) with RBAC ENFORCED: the functions, the
 *      relay and the workload kubeconfig each have exactly the shipped roles; a small sample
 *      reaches Ready and releases cleanly after scale-down, no request of theirs is refused, and
 *      every grant is used: seen in this run, or in the generator's documented extra coverage.
 *   4. A static cross-check of the observation: every direct API call in the code that names its
 *      resource is granted to its identity (a path no scenario reaches would show here).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS_USER, RBAC_FILES, RELAY_USER, readManifests } from '../../../infra/local/dev/rbac.ts';
import { runDev } from '../../../infra/local/dev/run.ts';
import {
  OBSERVATION_FILE,
  readObservation,
  renderRbacFiles,
  SCENARIOS,
  scenarioOptions,
} from '../../../scripts/gen-rbac.ts';
import {
  buildRules,
  emptyObservation,
  extraCoverage,
  type Grant,
  grantKey,
  grantOf,
  grantsFromLog,
  grantsOfRules,
  type Identity,
  type LogEntryLike,
  observedGrants,
  type PolicyRule,
  ROLE_FILES,
  recordScenario,
  renderRoleFile,
} from '../../../scripts/rbac/rules.ts';
import { R } from '../../../shared/api/resources.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;

const entry = (verb: string, path: string, resource: string, status = 200): LogEntryLike => ({
  verb,
  path,
  resource,
  status,
});

describe('rule builder (pure)', () => {
  it('takes the group from the path, keeps subresources, ignores discovery and refusals', () => {
    expect(grantOf(entry('get', '/api/v1/namespaces/metal3/secrets/s?x=1', 'secrets'))).toEqual({
      group: '',
      resource: 'secrets',
      verb: 'get',
    });
    expect(
      grantOf(
        entry(
          'update',
          '/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/metal3/metal3machines/m/status',
          'metal3machines/status',
        ),
      ),
    ).toEqual({
      group: 'infrastructure.cluster.x-k8s.io',
      resource: 'metal3machines/status',
      verb: 'update',
    });
    // A 404 still needed the permission; a 403 is a grant nobody had.
    expect(
      grantOf(entry('get', '/apis/metal3.io/v1alpha1/namespaces/a/baremetalhosts/x', 'baremetalhosts', 404)),
    ).toBeDefined();
    expect(
      grantOf(entry('get', '/apis/metal3.io/v1alpha1/baremetalhosts', 'baremetalhosts', 403)),
    ).toBeUndefined();
    expect(grantOf(entry('get', '/apis', '/apis'))).toBeUndefined();
    expect(grantOf(entry('get', '/version', '/version'))).toBeUndefined();
  });

  it('groups resources with the same verbs and topic, subresources after their resource, core last', () => {
    const grants = grantsFromLog([
      entry('list', '/api/v1/secrets', 'secrets'),
      entry('watch', '/api/v1/secrets?watch=true', 'secrets'),
      entry('list', '/apis/metal3.io/v1alpha1/baremetalhosts', 'baremetalhosts'),
      entry('get', '/apis/cluster.x-k8s.io/v1beta1/namespaces/a/machines/m', 'machines'),
      entry('get', '/apis/cluster.x-k8s.io/v1beta1/namespaces/a/clusters/c', 'clusters'),
      entry('update', '/apis/cluster.x-k8s.io/v1beta1/namespaces/a/clusters/c/status', 'clusters/status'),
      entry('get', '/apis/cluster.x-k8s.io/v1beta1/namespaces/a/clusters/c', 'clusters'), // duplicate
      entry('patch', '/apis/x.example/v1/things/t', 'things'),
    ]);
    expect(grants).toHaveLength(7);
    const rules = buildRules(grants);
    expect(rules).toEqual<PolicyRule[]>([
      { apiGroups: ['metal3.io'], resources: ['baremetalhosts'], verbs: ['list'] },
      { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters', 'machines'], verbs: ['get'] },
      { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters/status'], verbs: ['update'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['list', 'watch'] },
      { apiGroups: ['x.example'], resources: ['things'], verbs: ['patch'] },
    ]);
    // Different topics do not merge.
    expect(
      buildRules(grants, (_g, base) => base).filter((r) => r.apiGroups[0] === 'cluster.x-k8s.io'),
    ).toHaveLength(3);
    expect(grantsOfRules(rules).map(grantKey).sort()).toEqual(grants.map(grantKey).sort());
  });

  it('records which scenario needed what; grants outside the base scenario are the extra coverage', () => {
    const obs = emptyObservation([
      { name: 'base', description: 'b' },
      { name: 'extra', description: 'e' },
    ]);
    recordScenario(obs, 'functions', 'extra', [
      entry('get', '/api/v1/namespaces/a/events/e', 'events'),
      entry('create', '/api/v1/namespaces/a/events', 'events'),
    ]);
    recordScenario(obs, 'functions', 'base', [entry('create', '/api/v1/namespaces/a/events', 'events')]);
    expect(obs.identities.functions['']!.events).toEqual({ get: ['extra'], create: ['base', 'extra'] });
    expect(extraCoverage(obs, 'functions').map(grantKey)).toEqual(['|events|get']);
    const text = renderRoleFile('functions', obs);
    expect(text).toContain('GENERATED by scripts/gen-rbac.ts');
    expect(text).toContain('get core/events: extra');
    expect(text).toContain("  - apiGroups: ['']\n    resources: [events]\n    verbs: [get, create]\n");
  });
});

describe('the committed role files', () => {
  it(`are what the rule builder makes of ${OBSERVATION_FILE} and the routing table (regenerate: npm run gen:rbac)`, () => {
    for (const [path, text] of renderRbacFiles(readObservation()))
      expect(readFileSync(`${ROOT}${path}`, 'utf8'), path).toBe(text);
  });
});

/**
 * A static cross-check of the observation: every direct API call in the code whose resource is
 * named (`client.get(R.Kind, …)`, `optimisticUpdate(client, R.Kind, …)`) and what verb it needs, by
 * identity (functions/relay/ is the relay; Nodes are the workload identity). A call on a path
 * no scenario reaches would show here as an ungranted verb.
 */
function codeCalls(): { identity: Identity; kind: string; verb: string; where: string }[] {
  const VERB: Record<string, string> = {
    get: 'get',
    list: 'list',
    create: 'create',
    patch: 'patch',
    delete: 'delete',
    replace: 'update',
    replaceStatus: 'update',
    optimisticUpdate: 'update',
  };
  const calls: { identity: Identity; kind: string; verb: string; where: string }[] = [];
  for (const dir of ['functions', 'shared']) {
    for (const file of readdirSync(`${ROOT}${dir}`, { recursive: true }) as string[]) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
      const text = readFileSync(`${ROOT}${dir}/${file}`, 'utf8');
      const re =
        /(?:\.(get|list|create|patch|delete|replace|replaceStatus)\s*(?:<[^>()]*>)?\(\s*R\.(\w+)|(optimisticUpdate)\(\s*[\w.]+,\s*R\.(\w+))/g;
      for (const m of text.matchAll(re)) {
        const method = m[1] ?? m[3]!;
        const kind = m[2] ?? m[4]!;
        const where = `${dir}/${file}`;
        // A call on a tenant's or workload cluster's client (`tenant.list(R.Pod…)`) is the workload
        // identity's, as Nodes always are.
        const receiver = text.slice(Math.max(0, (m.index ?? 0) - 24), m.index);
        const identity: Identity =
          kind === 'Node' || /(tenant|workload)\w*\(?\)?\)?$/i.test(receiver)
            ? 'workload'
            : file.startsWith('relay/')
              ? 'relay'
              : 'functions';
        calls.push({ identity, kind, verb: VERB[method]!, where });
      }
    }
  }
  return calls;
}

/**
 * Calls no scenario can make on the embedded API servers, so no role can be observed for them:
 * the tenant's Pods (the drain lists them; the embedded server serves no Pods, ADR 001) and its
 * `kube-system/kube-root-ca.crt` (read only when the tenant kubeconfig carries no CA; the embedded
 * tenants' always does). A real tenant needs them granted by hand (ADR 018, vm-dev section).
 */
const NOT_OBSERVABLE = new Set([
  'functions/deprovision/drain.ts: list Pod (workload)',
  'shared/vmetal/jointoken.ts: get ConfigMap (workload)',
]);

describe('the code calls nothing the roles refuse (static)', () => {
  it('every named direct call is granted to its identity (on the resource or its /status)', () => {
    const granted = new Set(
      (['functions', 'relay', 'workload'] as const).flatMap((id) =>
        grantedBy(RBAC_FILES[id]).map((g) => `${id}|${grantKey(g)}`),
      ),
    );
    const calls = codeCalls();
    expect(calls.length).toBeGreaterThan(50);
    const refused = calls
      .filter(({ identity, kind, verb }) => {
        const t = R[kind as keyof typeof R];
        if (!t) return false;
        const base = `${identity}|${t.group}|${t.plural}`;
        return !granted.has(`${base}|${verb}`) && !granted.has(`${base}/status|${verb}`);
      })
      .map((c) => `${c.where}: ${c.verb} ${c.kind} (${c.identity})`)
      .filter((c) => !NOT_OBSERVABLE.has(c));
    expect([...new Set(refused)]).toEqual([]);
  });
});

/** The grants of the ClusterRoles in a shipped file. */
function grantedBy(file: string): Grant[] {
  return grantsOfRules(
    readManifests(file)
      .filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')
      .flatMap((o) => (o as unknown as { rules?: PolicyRule[] }).rules ?? []),
  );
}

describe('runDev with RBAC enforced (the shipped roles, exactly)', () => {
  it('reaches Ready, releases cleanly, nothing refused, every grant used', { timeout: 120_000 }, async () => {
    // The generator's base scenario (the sample with scale-down), with the shipped roles enforced.
    const result = await runDev({
      ...scenarioOptions(SCENARIOS[0]!),
      rbac: 'enforce',
    });
    const log = result.rbacLog!;
    const refused = [...log.management, ...log.workload]
      .filter((e) => e.status === 401 || e.status === 403)
      .map((e) => `${e.user}: ${e.verb} ${e.resource} ${e.namespace ?? ''}/${e.name ?? ''} -> ${e.status}`);
    expect(refused).toEqual([]);
    expect(result.message).toBe('every machine Ready');
    expect(result.release).toEqual([]);
    expect(result.ok).toBe(true);

    const byIdentity: Record<Identity, LogEntryLike[]> = {
      functions: log.management.filter((e) => e.user === FUNCTIONS_USER),
      relay: log.management.filter((e) => e.user === RELAY_USER),
      workload: log.workload,
    };
    const obs = readObservation();
    const unused: string[] = [];
    for (const id of ['functions', 'relay', 'workload'] as const) {
      expect(byIdentity[id].length, `${id} made requests under its own identity`).toBeGreaterThan(0);
      const seen = new Set(grantsFromLog(byIdentity[id]).map(grantKey));
      // Covered by a scenario besides the base one: a grant the base run needs only sometimes (its
      // timing decides, e.g. whether a claim lists its pool's waiting claims) must have one too.
      const base = obs.scenarios[0]?.name;
      const extra = new Set(
        observedGrants(obs, id)
          .filter((g) => g.scenarios.some((s) => s !== base))
          .map(grantKey),
      );
      for (const g of grantedBy(RBAC_FILES[id]))
        if (!seen.has(grantKey(g)) && !extra.has(grantKey(g)))
          unused.push(`${ROLE_FILES[id]}: ${g.verb} ${g.group || 'core'}/${g.resource}`);
    }
    expect(unused, 'granted, but neither used in this run nor in the documented extra coverage').toEqual([]);
  });
});
