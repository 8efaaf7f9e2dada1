import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, R } from '../../../shared/api/resources.ts';
import { KubeClient } from '../../../shared/kube/client.ts';
import { ForbiddenError, type KubeApiError } from '../../../shared/kube/errors.ts';
import { GROUP, WIDGET_CRD, Widget, widget } from '../../../test/conformance/fixtures.ts';
import { kubectlExit } from '../../../test/helpers/kubectl.ts';
import { type ApiServerHandle, startApiServer } from './index.ts';

async function failure(p: Promise<unknown>): Promise<KubeApiError> {
  try {
    await p;
  } catch (e) {
    return e as KubeApiError;
  }
  throw new Error('expected the request to fail');
}

const rbac = (kind: string, meta: Record<string, unknown>, body: Record<string, unknown>) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind,
  metadata: meta as any,
  ...body,
});
const RBAC = (kind: string, plural: string, namespaced: boolean) =>
  envelopeOf({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind,
    plural,
    namespaced,
    statusSubresource: false,
  });
const Role = RBAC('Role', 'roles', true);
const RoleBinding = RBAC('RoleBinding', 'rolebindings', true);
const ClusterRole = RBAC('ClusterRole', 'clusterroles', false);
const ClusterRoleBinding = RBAC('ClusterRoleBinding', 'clusterrolebindings', false);

describe('RBAC enforcement', () => {
  let server: ApiServerHandle;
  let admin: KubeClient;
  let alice: KubeClient;
  let bob: KubeClient;

  beforeAll(async () => {
    server = await startApiServer({
      rbac: { tokens: { 'alice-token': { user: 'alice' }, 'bob-token': { user: 'bob', groups: ['team'] } } },
    });
    admin = KubeClient.fromString(server.kubeconfig());
    alice = KubeClient.fromString(server.kubeconfig({ token: 'alice-token' }));
    bob = KubeClient.fromString(server.kubeconfig({ token: 'bob-token' }));
    await admin.create(R.CustomResourceDefinition, WIDGET_CRD);
    for (const ns of ['ns1', 'ns2']) {
      await admin.create(R.Namespace, { metadata: { name: ns } });
      await admin.create(Widget, widget(ns, 'w1'));
    }
    await admin.create(
      Role,
      rbac(
        'Role',
        { name: 'widget-reader', namespace: 'ns1' },
        {
          rules: [
            { apiGroups: [GROUP], resources: ['widgets'], verbs: ['get', 'list', 'watch'] },
            { apiGroups: [GROUP], resources: ['widgets/status'], verbs: ['patch', 'update'] },
          ],
        },
      ),
    );
    await admin.create(
      RoleBinding,
      rbac(
        'RoleBinding',
        { name: 'alice-reads', namespace: 'ns1' },
        {
          subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }],
          roleRef: { kind: 'Role', name: 'widget-reader', apiGroup: 'rbac.authorization.k8s.io' },
        },
      ),
    );
    await admin.create(
      ClusterRole,
      rbac(
        'ClusterRole',
        { name: 'team' },
        {
          rules: [
            { apiGroups: [''], resources: ['nodes'], verbs: ['*'] },
            { apiGroups: [''], resources: ['configmaps'], resourceNames: ['only'], verbs: ['get'] },
            { nonResourceURLs: ['/metrics'], verbs: ['get'] },
          ],
        },
      ),
    );
    await admin.create(
      ClusterRoleBinding,
      rbac(
        'ClusterRoleBinding',
        { name: 'team' },
        {
          subjects: [{ kind: 'Group', name: 'team', apiGroup: 'rbac.authorization.k8s.io' }],
          roleRef: { kind: 'ClusterRole', name: 'team', apiGroup: 'rbac.authorization.k8s.io' },
        },
      ),
    );
    for (const n of ['only', 'other'])
      await admin.create(R.ConfigMap, { metadata: { name: n, namespace: 'ns1' } });
  });
  afterAll(() => server.stop());

  it('401 for an unknown token', async () => {
    const stranger = KubeClient.fromString(server.kubeconfig({ token: 'nope' }));
    const e = await failure(stranger.list(Widget, 'ns1'));
    expect(e.code).toBe(401);
    expect(e.status).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  it('no credentials: system:anonymous, 403 for resources, /version open', async () => {
    const res = await fetch(`${server.url}/api/v1/namespaces`);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toBe(
      'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
    );
    expect((await fetch(`${server.url}/version`)).status).toBe(200);
    expect((await fetch(`${server.url}/apis`)).status).toBe(403);
  });

  it('a RoleBinding grants its Role in its namespace only, with the real 403 message elsewhere', async () => {
    expect((await alice.get<any>(Widget, 'ns1', 'w1'))?.metadata.name).toBe('w1');
    expect((await alice.list(Widget, 'ns1')).items).toHaveLength(1);
    const e = await failure(alice.list(Widget, 'ns2'));
    expect(e).toBeInstanceOf(ForbiddenError);
    expect(e.status.message).toBe(
      `widgets.${GROUP} is forbidden: User "alice" cannot list resource "widgets" in API group "${GROUP}" in the namespace "ns2"`,
    );
    const c = await failure(alice.create(Widget, widget('ns1', 'new')));
    expect(c.status.message).toBe(
      `widgets.${GROUP} is forbidden: User "alice" cannot create resource "widgets" in API group "${GROUP}" in the namespace "ns1"`,
    );
  });

  it('subresource rules: widgets/status is not widgets', async () => {
    const s = await alice.patch<any>(Widget, 'ns1', 'w1', { status: { phase: 'ok' } }, 'merge', {
      status: true,
    });
    expect(s.status.phase).toBe('ok');
    const e = await failure(alice.patch(Widget, 'ns1', 'w1', { spec: { size: 2 } }));
    expect(e.status.message).toBe(
      `widgets.${GROUP} "w1" is forbidden: User "alice" cannot patch resource "widgets" in API group "${GROUP}" in the namespace "ns1"`,
    );
  });

  it('a ClusterRoleBinding to a group grants cluster-wide; resourceNames restrict; nonResourceURLs', async () => {
    await bob.create(R.Node, { metadata: { name: 'n1' } });
    expect((await bob.list(R.Node)).items.map((n) => n.metadata.name)).toEqual(['n1']);
    expect(await bob.get(R.ConfigMap, 'ns1', 'only')).toBeDefined();
    const e = await failure(bob.get(R.ConfigMap, 'ns1', 'other'));
    expect(e.status.message).toBe(
      'configmaps "other" is forbidden: User "bob" cannot get resource "configmaps" in API group "" in the namespace "ns1"',
    );
    const nodesByAlice = await failure(alice.list(R.Node));
    expect(nodesByAlice.status.message).toBe(
      'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
    );
    const metricsBob = await fetch(`${server.url}/metrics`, {
      headers: { authorization: 'Bearer bob-token' },
    });
    expect(metricsBob.status).toBe(200);
    const metricsAlice = await fetch(`${server.url}/metrics`, {
      headers: { authorization: 'Bearer alice-token' },
    });
    expect(metricsAlice.status).toBe(403);
    expect(((await metricsAlice.json()) as { message: string }).message).toBe(
      'forbidden: User "alice" cannot get path "/metrics"',
    );
  });

  it('kubectl with a user token (over https, where kubectl sends tokens): reads allowed, the rest Forbidden', async () => {
    const tls = await startApiServer({ tls: true, rbac: { tokens: { 'alice-token': { user: 'alice' } } } });
    const tlsAdmin = KubeClient.fromString(tls.kubeconfig());
    await tlsAdmin.create(R.CustomResourceDefinition, WIDGET_CRD);
    for (const ns of ['ns1', 'ns2']) {
      await tlsAdmin.create(R.Namespace, { metadata: { name: ns } });
      await tlsAdmin.create(Widget, widget(ns, 'w1'));
    }
    await tlsAdmin.create(
      Role,
      rbac(
        'Role',
        { name: 'r', namespace: 'ns1' },
        { rules: [{ apiGroups: [GROUP], resources: ['widgets'], verbs: ['list'] }] },
      ),
    );
    await tlsAdmin.create(
      RoleBinding,
      rbac(
        'RoleBinding',
        { name: 'r', namespace: 'ns1' },
        {
          subjects: [{ kind: 'User', name: 'alice' }],
          roleRef: { kind: 'Role', name: 'r', apiGroup: 'rbac.authorization.k8s.io' },
        },
      ),
    );
    const kc = join(mkdtempSync(join(tmpdir(), 'm3fn-rbac-')), 'kubeconfig');
    await tls.writeKubeconfig(kc, { token: 'alice-token' });
    try {
      const ok = await kubectlExit(kc, ['get', `widgets.${GROUP}`, '-n', 'ns1', '-o', 'name']);
      expect(ok.stdout).toBe(`widget.${GROUP}/w1\n`);
      expect(
        (await kubectlExit(kc, ['auth', 'can-i', 'list', `widgets.${GROUP}`, '-n', 'ns1'])).stdout.trim(),
      ).toBe('yes');
      const no = await kubectlExit(kc, ['auth', 'can-i', 'list', `widgets.${GROUP}`, '-n', 'ns2']);
      expect(no.stdout.trim()).toBe('no');
      expect(no.code).toBe(1);
      const denied = await kubectlExit(kc, ['get', `widgets.${GROUP}`, '-n', 'ns2']);
      expect(denied.code).toBe(1);
      expect(denied.stderr).toContain(
        `Error from server (Forbidden): widgets.${GROUP} is forbidden: User "alice" cannot list resource "widgets" in API group "${GROUP}" in the namespace "ns2"`,
      );
    } finally {
      await tls.stop();
    }
  });

  it('access reviews answer with the same authorizer (self and for another user)', async () => {
    const SSAR = envelopeOf({
      group: 'authorization.k8s.io',
      version: 'v1',
      kind: 'SelfSubjectAccessReview',
      plural: 'selfsubjectaccessreviews',
      namespaced: false,
      statusSubresource: false,
    });
    const SAR = envelopeOf({ ...SSAR, kind: 'SubjectAccessReview', plural: 'subjectaccessreviews' });
    const ask = async (c: KubeClient, ns: string) =>
      (
        (await c.create<any>(SSAR, {
          metadata: {},
          spec: { resourceAttributes: { namespace: ns, verb: 'list', group: GROUP, resource: 'widgets' } },
        } as any)) as any
      ).status.allowed;
    expect(await ask(alice, 'ns1')).toBe(true);
    expect(await ask(alice, 'ns2')).toBe(false);
    const forBob = await admin.create<any>(SAR, {
      metadata: {},
      spec: {
        user: 'bob',
        groups: ['team'],
        resourceAttributes: { namespace: 'ns1', verb: 'get', resource: 'configmaps', name: 'only' },
      },
    } as any);
    expect(forBob.status.allowed).toBe(true);
    const nonRes = await admin.create<any>(SAR, {
      metadata: {},
      spec: { user: 'alice', nonResourceAttributes: { path: '/metrics', verb: 'get' } },
    } as any);
    expect(nonRes.status.allowed).toBe(false);
    expect(await admin.get(SAR, undefined, 'x').catch((e: KubeApiError) => e.code)).toBe(405);
  });

  it('discovery is open to every authenticated user; the request log records users', async () => {
    const res = await fetch(`${server.url}/apis`, { headers: { authorization: 'Bearer alice-token' } });
    expect(res.status).toBe(200);
    expect(server.log.entries.some((e) => e.user === 'alice' && e.status === 403)).toBe(true);
  });
});
