/**
 * The deployment manifests render with kustomize (kubectl kustomize), and the relay's RBAC grants
 * list+watch on exactly what the routing table makes it watch. The ApiServerSource overlay ships
 * nothing of the relay, and its function Services' account may do what the HTTP runtime does with
 * the source's events: list what routing reads (Resource mode) and get the event's object back
 * (Reference mode).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { R, resourceFor } from '../../../shared/api/resources.ts';
import { ROUTES, watchedKinds } from '../../../shared/routing/index.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;
const KUBECTL = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find((p) => existsSync(p));

function render(dir: string): any[] {
  const r = spawnSync(KUBECTL!, ['kustomize', dir], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return parseAllDocuments(r.stdout).map((d) => d.toJS());
}

const id = (d: any) => `${d.kind}/${d.metadata.name}`;

/** The ClusterRoleBindings giving a ServiceAccount its cluster-wide rights (events come from every namespace). */
const bindingsOf = (docs: any[], sa: string, namespace: string): any[] =>
  docs.filter(
    (d) =>
      d.kind === 'ClusterRoleBinding' &&
      d.subjects?.some(
        (s: { kind: string; name: string; namespace: string }) =>
          s.kind === 'ServiceAccount' && s.name === sa && s.namespace === namespace,
      ),
  );

/** The rules of the ClusterRoles those bindings name. */
const rulesOf = (
  docs: any[],
  bindings: any[],
): { apiGroups: string[]; resources: string[]; verbs: string[] }[] =>
  bindings.flatMap(
    (b) => docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === b.roleRef.name)?.rules ?? [],
  );

const allows = (rules: ReturnType<typeof rulesOf>, group: string, resource: string, verb: string) =>
  rules.some(
    (r) =>
      (r.apiGroups.includes(group) || r.apiGroups.includes('*')) &&
      (r.resources.includes(resource) || r.resources.includes('*')) &&
      (r.verbs.includes(verb) || r.verbs.includes('*')),
  );

/** Whether one Knative `filters` expression (exact, prefix, suffix, any, all, not) accepts the attributes. */
function accepts(f: any, attrs: Record<string, string>): boolean {
  const each = (m: Record<string, string>, ok: (a: string, v: string) => boolean) =>
    Object.entries(m).every(([k, v]) => attrs[k] !== undefined && ok(attrs[k]!, v));
  if (f.exact) return each(f.exact, (a, v) => a === v);
  if (f.prefix) return each(f.prefix, (a, v) => a.startsWith(v));
  if (f.suffix) return each(f.suffix, (a, v) => a.endsWith(v));
  if (f.any) return f.any.some((g: any) => accepts(g, attrs));
  if (f.all) return f.all.every((g: any) => accepts(g, attrs));
  if (f.not) return !accepts(f.not, attrs);
  throw new Error(`a Trigger filter this test does not evaluate: ${JSON.stringify(f)}`);
}

/** Whether a Trigger delivers an event with these attributes (`filters` wins over `filter`). */
const delivers = (t: any, attrs: Record<string, string>): boolean =>
  t.spec.filters?.length
    ? t.spec.filters.every((f: any) => accepts(f, attrs))
    : Object.entries(t.spec.filter?.attributes ?? {}).every(([k, v]) => attrs[k] === v);

/**
 * Every function Service verifies OIDC tokens for its own audience (Knative's
 * `<group>/<kind>/<namespace>/<name>`, lowercase), none accepts unauthenticated requests, and every
 * Trigger asks the Broker for a token of exactly the audience its subscriber Service verifies.
 */
function expectOidcWiring(docs: any[]): void {
  const services = docs.filter((d) => d.kind === 'Service' && d.apiVersion.startsWith('serving.knative.dev'));
  const audienceOf = new Map<string, string>();
  for (const svc of services) {
    const args: string[] = svc.spec.template.spec.containers[0].args;
    expect(args).not.toContain('--allow-unauthenticated');
    const aud = args[args.indexOf('--oidc-audience') + 1];
    expect(aud).toBe(`serving.knative.dev/service/${svc.metadata.namespace}/${svc.metadata.name}`);
    audienceOf.set(svc.metadata.name, aud!);
  }
  const triggers = docs.filter((d) => d.kind === 'Trigger');
  expect(triggers.length).toBeGreaterThan(0);
  for (const t of triggers)
    expect(t.spec.subscriber.audience).toBe(audienceOf.get(t.spec.subscriber.ref.name));
}

describe.skipIf(!KUBECTL)(`kustomize${KUBECTL ? '' : ' (SKIPPED: kubectl not found)'}`, () => {
  it('infra/deploy renders the relay and worker Deployments with their own ServiceAccounts', () => {
    const docs = render('infra/deploy');
    const deployments = docs.filter((d) => d.kind === 'Deployment');
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['metal3fn-relay', 'metal3fn-worker']);
    for (const d of docs)
      if (d.kind !== 'Namespace' && !d.kind.startsWith('Cluster'))
        expect(d.metadata.namespace).toBe('metal3fn-system');
    const relay = deployments.find((d) => d.metadata.name === 'metal3fn-relay');
    expect(relay.spec.template.spec.serviceAccountName).toBe('metal3fn-relay');
    expect(relay.spec.template.spec.containers[0].args[0]).toBe('relay');
    const worker = deployments.find((d) => d.metadata.name === 'metal3fn-worker');
    expect(worker.spec.template.spec.serviceAccountName).toBe('metal3fn-functions');
    expect(worker.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(45);

    // The relay may list and watch exactly the kinds it watches, and write nothing.
    const role = docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'metal3fn-relay');
    const granted = new Set<string>();
    for (const rule of role.rules) {
      expect(rule.verbs.filter((v: string) => !['get', 'list', 'watch'].includes(v))).toEqual([]);
      for (const g of rule.apiGroups)
        for (const r of rule.resources) if (rule.verbs.includes('watch')) granted.add(`${g}/${r}`);
    }
    const needed = watchedKinds().management.map((k) => `${R[k].group}/${R[k].plural}`);
    expect([...granted].sort()).toEqual([...new Set(needed)].sort());
  });

  it('infra/knative renders a Service and a Trigger per function behind a Broker', () => {
    const docs = render('infra/knative');
    expect(
      docs.filter((d) => d.kind === 'Service' && d.apiVersion.startsWith('serving.knative.dev')),
    ).toHaveLength(6);
    const triggers = docs.filter((d) => d.kind === 'Trigger');
    expect(triggers).toHaveLength(6);
    expect(triggers.every((t) => t.spec.filter.attributes.type === 'io.metal3fn.message')).toBe(true);
    expect(docs.some((d) => d.kind === 'Broker' && d.metadata.name === 'metal3fn')).toBe(true);
    // Our relay feeds the Broker.
    const relay = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'metal3fn-relay');
    expect(relay.spec.template.spec.containers[0].args).toContain('--sink');
    expect(docs.some((d) => d.kind === 'NetworkPolicy')).toBe(true);
    expectOidcWiring(docs);
    // The relay sends a projected token for the Broker's audience (Knative's format), from the file it reads.
    const container = relay.spec.template.spec.containers[0];
    const file = container.args[container.args.indexOf('--sink-token-file') + 1] as string;
    const mount = container.volumeMounts.find((m: { mountPath: string }) =>
      file.startsWith(`${m.mountPath}/`),
    );
    const volume = relay.spec.template.spec.volumes.find((v: { name: string }) => v.name === mount.name);
    expect(volume.projected.sources).toEqual([
      {
        serviceAccountToken: {
          path: file.slice(mount.mountPath.length + 1),
          audience: 'eventing.knative.dev/broker/metal3fn-system/metal3fn',
          expirationSeconds: 3600,
        },
      },
    ]);
  });

  it('infra/knative/apiserversource adds the ApiServerSource, its RBAC and resource-event Triggers', () => {
    const docs = render('infra/knative/apiserversource');
    const source = docs.find((d) => d.kind === 'ApiServerSource');
    expect(source.spec.mode).toBe('Resource');
    expect(source.spec.resources.map((r: { kind: string }) => r.kind)).not.toContain('Secret');
    expect(docs.filter((d) => d.kind === 'Trigger')).toHaveLength(12);
    expect(docs.filter((d) => d.kind === 'Deployment')).toEqual([]); // the source replaces our relay
    expectOidcWiring(docs);

    // No relay: the function Services route the source's events themselves (routeWithApi), as
    // the functions' ServiceAccount: a GET of what the routes on each delivered kind read, a LIST
    // of what they list. The ClusterRoles bound to that account (its own + the generated routing
    // role) must allow it.
    const bindings = bindingsOf(docs, 'metal3fn-functions', 'metal3fn-system');
    expect(bindings.map((b) => b.roleRef.name).sort()).toEqual([
      'metal3fn-functions',
      'metal3fn-functions-routing',
    ]);
    const rules = rulesOf(docs, bindings);
    const missing: string[] = [];
    for (const res of source.spec.resources as { apiVersion: string; kind: string }[]) {
      expect(resourceFor(res.apiVersion, res.kind), `${res.kind} is a kind we know`).toBeDefined();
      for (const r of ROUTES.filter((r) => r.on === res.kind && r.scope !== 'workload')) {
        const needs = [
          ...r.reads.map((k) => [k, 'get'] as const),
          ...(r.lists ?? []).map((k) => [k, 'list'] as const),
        ];
        for (const [k, verb] of needs)
          if (!allows(rules, R[k].group, R[k].plural, verb))
            missing.push(`${res.kind} -> ${verb} ${R[k].plural}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('infra/knative/apiserversource ships none of the relay, and all else of the relay mode', () => {
    const relayMode = render('infra/knative');
    const docs = render('infra/knative/apiserversource');
    // The relay's parts in relay mode: its Deployment, the ServiceAccount it runs as, what binds
    // that account and the roles bound to it only.
    const relay = relayMode.find((d) => d.kind === 'Deployment' && d.metadata.name === 'metal3fn-relay');
    const sa = relay.spec.template.spec.serviceAccountName as string;
    const ns = relay.metadata.namespace as string;
    const subjectIsRelay = (s: { kind: string; name: string; namespace?: string }) =>
      s.kind === 'ServiceAccount' && s.name === sa && (s.namespace ?? ns) === ns;
    const relayBindings = relayMode.filter(
      (d) => d.kind.endsWith('RoleBinding') && d.subjects?.some(subjectIsRelay),
    );
    const otherBindings = relayMode.filter(
      (d) => d.kind.endsWith('RoleBinding') && !relayBindings.includes(d),
    );
    const relayRoles = relayMode.filter(
      (d) =>
        (d.kind === 'ClusterRole' || d.kind === 'Role') &&
        relayBindings.some((b) => b.roleRef.kind === d.kind && b.roleRef.name === d.metadata.name) &&
        !otherBindings.some((b) => b.roleRef.kind === d.kind && b.roleRef.name === d.metadata.name),
    );
    const account = relayMode.filter((d) => d.kind === 'ServiceAccount' && d.metadata.name === sa);
    const relayParts = new Set([relay, ...account, ...relayBindings, ...relayRoles].map(id));
    expect([...relayParts].sort()).toEqual([
      'ClusterRole/metal3fn-relay',
      'ClusterRoleBinding/metal3fn-relay',
      'Deployment/metal3fn-relay',
      'ServiceAccount/metal3fn-relay',
    ]);

    // None of them here, and nothing else binds or runs as the relay's account.
    expect(docs.map(id).filter((i) => relayParts.has(i))).toEqual([]);
    expect(docs.filter((d) => d.subjects?.some(subjectIsRelay)).map(id)).toEqual([]);
    expect(docs.filter((d) => JSON.stringify(d.spec ?? {}).includes(`"serviceAccountName":"${sa}"`))).toEqual(
      [],
    );

    // Everything else: the relay mode's other objects, unchanged, and the overlay's own files.
    const overlay = 'infra/knative/apiserversource';
    const own = (parse(readFileSync(`${ROOT}${overlay}/kustomization.yaml`, 'utf8')).resources as string[])
      .filter((r) => !r.startsWith('..'))
      .flatMap((f) => parseAllDocuments(readFileSync(`${ROOT}${overlay}/${f}`, 'utf8')).map((d) => d.toJS()))
      .filter(Boolean);
    const kept = relayMode.filter((d) => !relayParts.has(id(d)));
    expect(docs.map(id).sort()).toEqual([...kept, ...own].map(id).sort());
    for (const d of kept)
      expect(
        docs.find((o) => id(o) === id(d)),
        id(d),
      ).toEqual(d);
  });

  it('Reference mode: every function Service may get each kind the source can deliver to it', () => {
    const docs = render('infra/knative/apiserversource');
    const source = docs.find((d) => d.kind === 'ApiServerSource');
    const broker = source.spec.sink.ref.name as string;
    const resources = source.spec.resources as { apiVersion: string; kind: string }[];
    const services = docs.filter(
      (d) => d.kind === 'Service' && d.apiVersion.startsWith('serving.knative.dev'),
    );
    expect(services).toHaveLength(6);
    // In Reference mode the event names the object (dev.knative.apiserver.ref.<verb>); on add and
    // update the HTTP runtime GETs it back, as the Service's account, BEFORE routing
    // (shared/runtimes/http.ts): so a Service needs get on every kind delivered to it, whatever
    // its own function's routes. Delivered: the source's kinds, through a Trigger on its Broker
    // subscribing this Service and accepting the type.
    const missing: string[] = [];
    for (const svc of services) {
      const args = svc.spec.template.spec.containers[0].args as string[];
      const fn = args[args.indexOf('--functions') + 1];
      const sa = (svc.spec.template.spec.serviceAccountName as string | undefined) ?? 'default';
      const triggers = docs.filter(
        (t) =>
          t.kind === 'Trigger' &&
          t.spec.broker === broker &&
          t.spec.subscriber.ref.kind === 'Service' &&
          t.spec.subscriber.ref.name === svc.metadata.name,
      );
      const reads = ['add', 'update'].filter((verb) =>
        triggers.some((t) => delivers(t, { type: `dev.knative.apiserver.ref.${verb}` })),
      );
      expect(reads, `${fn}: Reference-mode events that read the object reach its Service`).toEqual([
        'add',
        'update',
      ]);
      const rules = rulesOf(docs, bindingsOf(docs, sa, svc.metadata.namespace));
      for (const res of resources) {
        const t = resourceFor(res.apiVersion, res.kind);
        expect(t, `${res.kind} is a kind we know`).toBeDefined();
        if (!allows(rules, t!.group, t!.plural, 'get'))
          missing.push(`${fn} (${sa}): get ${t!.group}/${t!.plural}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
