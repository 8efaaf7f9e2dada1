/**
 * Who a request is and what it may do, as kubectl asks: `--as/--as-group/--as-uid`
 * (impersonation, and raw Impersonate-* headers as client-go sends them), `auth whoami`
 * (SelfSubjectReview), `auth can-i --list` (SelfSubjectRulesReview) and the discovery entries
 * kubectl finds them by. The acting identity is a ServiceAccount with a TokenRequest token, so
 * the cases run the same on a real cluster.
 */
import { expect } from 'vitest';
import { kubectl, kubectlExit } from '../../helpers/kubectl.ts';
import { eventually } from '../fixtures.ts';
import {
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
  raw,
  serviceAccountWithToken,
  tokenKubeconfig,
} from '../identity.ts';
import type { ConformanceCase } from '../suite.ts';

const RBAC = 'rbac.authorization.k8s.io';
/** Grants propagate through the real server's informers: poll rather than assume. */
const PROPAGATION_MS = 20_000;
const SSR_PATH = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const SSR = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };

export const AUTH_IDENTITY_CASES: ConformanceCase[] = [
  {
    // staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go WithImpersonation,
    // endpoints/handlers/responsewriters Forbidden; pkg/registry/authentication/selfsubjectreview.
    name: 'kubectl --as/--as-group/--as-uid: refused with the real 403 until the impersonate verb is granted, then honoured',
    requires: ['kubectl'],
    async run({ client, ns }) {
      const { token } = await serviceAccountWithToken(client, ns, 'imp');
      const me = `system:serviceaccount:${ns}:imp`;
      const kc = tokenKubeconfig(client.kc, token, ns);
      const whoami = (args: string[]) => kubectlExit(kc, ['auth', 'whoami', '-o', 'json', ...args]);
      // auth whoami words a 403 its own way; can-i on a path (no discovery) prints the server's message.
      const canI = (args: string[]) => kubectlExit(kc, ['auth', 'can-i', 'get', '/healthz', ...args]);

      const refused = await canI(['--as', 'bob']);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr.trim()).toBe(
        `Error from server (Forbidden): users "bob" is forbidden: User "${me}" cannot impersonate resource "users" in API group "" at the cluster scope`,
      );

      const name = `${ns}-impersonator`;
      await client.create(ClusterRole, {
        metadata: { name },
        rules: [
          { apiGroups: [''], resources: ['users'], resourceNames: ['bob'], verbs: ['impersonate'] },
          { apiGroups: [''], resources: ['groups'], resourceNames: ['team-a'], verbs: ['impersonate'] },
          {
            apiGroups: ['authentication.k8s.io'],
            resources: ['uids'],
            resourceNames: ['u-1'],
            verbs: ['impersonate'],
          },
          {
            apiGroups: ['authentication.k8s.io'],
            resources: ['userextras/scopes'],
            resourceNames: ['read'],
            verbs: ['impersonate'],
          },
        ],
      });
      await client.create(Role, {
        metadata: { name: 'sa-impersonator', namespace: ns },
        rules: [
          {
            apiGroups: [''],
            resources: ['serviceaccounts'],
            resourceNames: ['target'],
            verbs: ['impersonate'],
          },
        ],
      });
      const subjects = [{ kind: 'ServiceAccount', name: 'imp', namespace: ns }];
      await client.create(RoleBinding, {
        metadata: { name: 'sa-impersonator', namespace: ns },
        roleRef: { apiGroup: RBAC, kind: 'Role', name: 'sa-impersonator' },
        subjects,
      });
      await client.create(ClusterRoleBinding, {
        metadata: { name },
        roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name },
        subjects,
      });
      try {
        const user = async (args: string[]) => {
          const r = await whoami(args);
          if (r.code !== 0) throw new Error(r.stderr);
          return JSON.parse(r.stdout).status.userInfo;
        };
        expect(
          await eventually(() => user(['--as', 'bob']), 'impersonation granted', PROPAGATION_MS),
        ).toEqual({
          username: 'bob',
          groups: ['system:authenticated'],
        });
        expect(await user(['--as', 'bob', '--as-group', 'team-a'])).toEqual({
          username: 'bob',
          groups: ['team-a', 'system:authenticated'],
        });
        expect(await user(['--as', 'bob', '--as-uid', 'u-1'])).toEqual({
          username: 'bob',
          uid: 'u-1',
          groups: ['system:authenticated'],
        });
        expect(await user(['--as', `system:serviceaccount:${ns}:target`])).toEqual({
          username: `system:serviceaccount:${ns}:target`,
          groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
        });
        const group = await canI(['--as', 'bob', '--as-group', 'team-b']);
        expect(group.stderr.trim()).toBe(
          `Error from server (Forbidden): groups "team-b" is forbidden: User "${me}" cannot impersonate resource "groups" in API group "" at the cluster scope`,
        );
        const sa = await canI(['--as', 'system:serviceaccount:elsewhere:target']);
        expect(sa.stderr.trim()).toBe(
          `Error from server (Forbidden): serviceaccounts "target" is forbidden: User "${me}" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "elsewhere"`,
        );
        // The request runs as bob: bob's (absent) rights decide, not the impersonator's.
        const list = await kubectlExit(kc, ['get', 'configmaps', '-n', ns, '--as', 'bob']);
        expect(list.stderr).toContain(
          `Error from server (Forbidden): configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "${ns}"`,
        );

        // Raw headers as client-go sends them: extras (percent-encoded keys), and their checks.
        const post = (headers: Record<string, string | string[]>) =>
          raw(client.kc, { method: 'POST', path: SSR_PATH, as: { token }, headers, body: SSR });
        const extra = await post({ 'Impersonate-User': 'bob', 'Impersonate-Extra-Scopes': 'read' });
        expect(extra.status).toBe(201);
        expect(extra.json().status.userInfo).toEqual({
          username: 'bob',
          groups: ['system:authenticated'],
          extra: { scopes: ['read'] },
        });
        const badExtra = await post({ 'Impersonate-User': 'bob', 'Impersonate-Extra-Scopes': 'write' });
        expect(badExtra.status).toBe(403);
        expect(badExtra.json()).toMatchObject({
          reason: 'Forbidden',
          message: `userextras.authentication.k8s.io "write" is forbidden: User "${me}" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope`,
          details: { name: 'write', group: 'authentication.k8s.io', kind: 'userextras' },
        });
        const noUser = await post({ 'Impersonate-Group': 'team-a' });
        expect(noUser.status).toBe(500);
        expect(noUser.headers['content-type']).toBe('text/plain; charset=utf-8');
        expect(noUser.text).toBe(
          `Internal Server Error: "${SSR_PATH}": requested [{Group  team-a    }] without impersonating a user\n`,
        );
      } finally {
        await client.delete(ClusterRoleBinding, undefined, name).catch(() => undefined);
        await client.delete(ClusterRole, undefined, name).catch(() => undefined);
      }
    },
  },
  {
    // pkg/registry/authentication/selfsubjectreview/rest.go; the system:basic-user binding of
    // bootstrappolicy (system:authenticated only); anonymous auth (no credentials).
    name: 'kubectl auth whoami (SelfSubjectReview); anonymous requests are system:anonymous, refused the review',
    requires: ['kubectl'],
    async run({ client, ns }) {
      const { token, uid } = await serviceAccountWithToken(client, ns, 'who');
      const out = await kubectl(tokenKubeconfig(client.kc, token, ns), ['auth', 'whoami']);
      const rows = out
        .trim()
        .split('\n')
        .map((l) => l.split(/\s{2,}/));
      expect(rows.slice(0, 4)).toEqual([
        ['ATTRIBUTE', 'VALUE'],
        ['Username', `system:serviceaccount:${ns}:who`],
        ['UID', uid],
        ['Groups', `[system:serviceaccounts system:serviceaccounts:${ns} system:authenticated]`],
      ]);
      const anon = await raw(client.kc, { method: 'POST', path: SSR_PATH, as: 'anonymous', body: SSR });
      expect(anon.status).toBe(403);
      expect(anon.json().message).toBe(
        'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope',
      );
    },
  },
  {
    // pkg/registry/authorization/selfsubjectrulesreview/rest.go; RBACAuthorizer.RulesFor over
    // rbac/validation DefaultRuleResolver; kubectl's auth can-i --list table.
    name: 'kubectl auth can-i --list (SelfSubjectRulesReview): the default rules and a Role, for the namespace asked',
    requires: ['kubectl'],
    async run({ client, ns }) {
      const { token } = await serviceAccountWithToken(client, ns, 'lister');
      await client.create(Role, {
        metadata: { name: 'reader', namespace: ns },
        rules: [
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
          { apiGroups: [''], resources: ['secrets'], resourceNames: ['s1'], verbs: ['get'] },
        ],
      });
      await client.create(RoleBinding, {
        metadata: { name: 'reader', namespace: ns },
        roleRef: { apiGroup: RBAC, kind: 'Role', name: 'reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'lister', namespace: ns }],
      });
      const kc = tokenKubeconfig(client.kc, token, ns);
      const rows = async (namespace: string) =>
        (await kubectl(kc, ['auth', 'can-i', '--list', '-n', namespace]))
          .trim()
          .split('\n')
          .map((l) => l.trim().split(/\s{2,}/));
      const here = (await eventually(
        async () => {
          const r = await rows(ns);
          return r.some((x) => x[0] === 'configmaps') ? r : undefined;
        },
        'the Role listed',
        PROPAGATION_MS,
      ))!;
      expect(here[0]).toEqual(['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs']);
      expect(here).toContainEqual(['configmaps', '[]', '[]', '[get list]']);
      expect(here).toContainEqual(['secrets', '[]', '[s1]', '[get]']);
      expect(here).toContainEqual(['selfsubjectreviews.authentication.k8s.io', '[]', '[]', '[create]']);
      expect(here).toContainEqual(['selfsubjectaccessreviews.authorization.k8s.io', '[]', '[]', '[create]']);
      expect(here).toContainEqual(['selfsubjectrulesreviews.authorization.k8s.io', '[]', '[]', '[create]']);
      expect(here).toContainEqual(['[/.well-known/openid-configuration]', '[]', '[get]']);
      expect(here).toContainEqual(['[/api/*]', '[]', '[get]']);
      expect(here).toContainEqual(['[/version]', '[]', '[get]']);
      const elsewhere = await rows('default');
      expect(elsewhere.some((x) => x[0] === 'configmaps' || x[0] === 'secrets')).toBe(false);

      const review = await raw(client.kc, {
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
        as: { token },
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectRulesReview',
          spec: { namespace: ns },
        },
      });
      expect(review.status).toBe(201);
      const status = review.json().status;
      expect(status.incomplete).toBe(false);
      expect(status.resourceRules).toContainEqual({
        verbs: ['get', 'list'],
        apiGroups: [''],
        resources: ['configmaps'],
      });
      expect(status.nonResourceRules).toContainEqual({
        verbs: ['get'],
        nonResourceURLs: [
          '/.well-known/openid-configuration',
          '/.well-known/openid-configuration/',
          '/openid/v1/jwks',
          '/openid/v1/jwks/',
        ],
      });
      const noNs = await raw(client.kc, {
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
        as: { token },
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: {} },
      });
      expect(noNs.status).toBe(400);
      expect(noNs.json().message).toBe('no namespace on request');
    },
  },
  {
    // The APIResourceList of /api/v1 and /apis/authentication.k8s.io/v1 (the discovery kubectl reads).
    name: 'discovery lists serviceaccounts/token (TokenRequest), selfsubjectreviews, tokenreviews, selfsubjectrulesreviews',
    requires: ['kubectl'],
    async run({ kubeconfigPath }) {
      const core = JSON.parse(await kubectl(kubeconfigPath, ['get', '--raw', '/api/v1']));
      expect(core.resources.find((r: any) => r.name === 'serviceaccounts/token')).toMatchObject({
        namespaced: true,
        group: 'authentication.k8s.io',
        version: 'v1',
        kind: 'TokenRequest',
        verbs: ['create'],
      });
      const names = (
        await kubectl(kubeconfigPath, ['api-resources', '-o', 'name', '--api-group', 'authentication.k8s.io'])
      )
        .trim()
        .split('\n');
      expect(names).toEqual(
        expect.arrayContaining([
          'selfsubjectreviews.authentication.k8s.io',
          'tokenreviews.authentication.k8s.io',
        ]),
      );
      const authz = (
        await kubectl(kubeconfigPath, ['api-resources', '-o', 'name', '--api-group', 'authorization.k8s.io'])
      )
        .trim()
        .split('\n');
      expect(authz).toContain('selfsubjectrulesreviews.authorization.k8s.io');
    },
  },
];
