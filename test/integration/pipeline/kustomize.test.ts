/**
 * The deployment manifests render with kustomize (kubectl kustomize), and the relay's RBAC grants
 * list+watch on exactly what the routing table makes it watch.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { kindsReadFor, watchedKinds } from '../../../functions/relay/routing.ts';
import { R, resourceFor } from '../../../shared/api/resources.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;
const KUBECTL = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find((p) => existsSync(p));

function render(dir: string): any[] {
  const r = spawnSync(KUBECTL!, ['kustomize', dir], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return parseAllDocuments(r.stdout).map((d) => d.toJS());
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
    // Broker deliveries carry no Authorization header: the network is the boundary.
    expect(docs.some((d) => d.kind === 'NetworkPolicy')).toBe(true);
  });

  it('infra/knative/apiserversource adds the ApiServerSource, its RBAC and resource-event Triggers', () => {
    const docs = render('infra/knative/apiserversource');
    const source = docs.find((d) => d.kind === 'ApiServerSource');
    expect(source.spec.mode).toBe('Resource');
    expect(source.spec.resources.map((r: { kind: string }) => r.kind)).not.toContain('Secret');
    expect(docs.filter((d) => d.kind === 'Trigger')).toHaveLength(12);
    expect(docs.filter((d) => d.kind === 'Deployment')).toEqual([]); // the source replaces our relay

    // No relay: the function Services route the source's events themselves (routeWithApi), as
    // the functions' ServiceAccount, listing what the routes on each delivered kind read. The
    // ClusterRoles bound to that account (its own + the generated routing role) must allow it.
    const bindings = docs.filter(
      (d) =>
        d.kind === 'ClusterRoleBinding' &&
        d.subjects?.some(
          (s: { kind: string; name: string; namespace: string }) =>
            s.kind === 'ServiceAccount' &&
            s.name === 'metal3fn-functions' &&
            s.namespace === 'metal3fn-system',
        ),
    );
    expect(bindings.map((b) => b.roleRef.name).sort()).toEqual([
      'metal3fn-functions',
      'metal3fn-functions-routing',
    ]);
    const lists = new Set<string>();
    for (const b of bindings)
      for (const rule of docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === b.roleRef.name)
        .rules)
        if (rule.verbs.includes('list'))
          for (const g of rule.apiGroups) for (const r of rule.resources) lists.add(`${g}/${r}`);
    const missing: string[] = [];
    for (const res of source.spec.resources as { apiVersion: string; kind: string }[]) {
      expect(resourceFor(res.apiVersion, res.kind), `${res.kind} is a kind we know`).toBeDefined();
      for (const k of kindsReadFor(res.kind))
        if (!lists.has(`${R[k].group}/${R[k].plural}`)) missing.push(`${res.kind} -> list ${R[k].plural}`);
    }
    expect(missing).toEqual([]);
  });
});
