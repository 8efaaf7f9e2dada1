/**
 * Optional RBAC enforcement (the RBAC authorizer of plugin/pkg/auth/authorizer/rbac with the
 * default rule resolver of .../rbac/validation/rule.go): Roles, ClusterRoles, RoleBindings and
 * ClusterRoleBindings (served objects, so tests write them like on a real cluster) decide, with
 * Kubernetes semantics: apiGroups, resources with subresources (`metal3machines/status`, `*`,
 * `*\/status`), resourceNames, verbs (`*`), nonResourceURLs (exact or `prefix*`); a binding to a
 * missing role is reported as the real server reports it. `system:masters` may do anything (the
 * privileged-group authorizer). What everybody may do comes from the default roles and bindings
 * (auth/bootstrap-policy.ts), not from code. Who the user is: auth/authenticate.ts.
 */
import { aggregate, type UserInfo } from './auth/identity.ts';
import { RBAC_GROUP } from './kinds.ts';
import type { Rest } from './rest.ts';
import type { RequestInfo } from './server.ts';
import { qualified } from './status.ts';

export interface RbacOptions {
  /** bearer token → identity (a static token file). */
  tokens: Record<string, { user: string; groups?: string[] }>;
  /** The token that authenticates as an admin (group system:masters); default "metal3fn-admin". */
  adminToken?: string;
}

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export class Rbac {
  private readonly rest: Rest;

  constructor(rest: Rest) {
    this.rest = rest;
  }

  /** appliesTo: does a binding's subject list name this user (a ServiceAccount defaults to the binding's namespace)? */
  private subjectMatches(subjects: any[] | undefined, u: UserInfo, bindingNs: string | undefined): boolean {
    for (const s of subjects ?? []) {
      if (s.kind === 'User' && s.name === u.user) return true;
      if (s.kind === 'Group' && u.groups.includes(s.name)) return true;
      const saNs = s.namespace || bindingNs;
      if (s.kind === 'ServiceAccount' && saNs && u.user === `system:serviceaccount:${saNs}:${s.name}`)
        return true;
    }
    return false;
  }

  /** GetRoleReferenceRules: the referenced role's rules, or the error the real server reports. */
  private roleRules(roleRef: any, namespace: string | undefined): PolicyRule[] | string {
    const kind = roleRef?.kind;
    if ((roleRef?.apiGroup ?? RBAC_GROUP) !== RBAC_GROUP || (kind !== 'ClusterRole' && kind !== 'Role'))
      return `unsupported role reference kind: ${JSON.stringify(kind ?? '')}`;
    const role =
      kind === 'ClusterRole'
        ? this.rest.store.get(`${RBAC_GROUP}/clusterroles`, undefined, roleRef.name)
        : namespace
          ? this.rest.store.get(`${RBAC_GROUP}/roles`, namespace, roleRef.name)
          : undefined;
    if (!role) return `${kind.toLowerCase()}.${RBAC_GROUP} "${roleRef.name}" not found`;
    return role.rules ?? [];
  }

  /**
   * DefaultRuleResolver.RulesFor: the rules of every ClusterRoleBinding and (with a namespace)
   * RoleBinding naming the user, in store order, and the errors of bindings to missing roles.
   */
  rulesFor(u: UserInfo, namespace: string | undefined): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    const visit = (b: any, ns: string | undefined) => {
      if (!this.subjectMatches(b.subjects, u, ns)) return;
      const r = this.roleRules(b.roleRef, ns);
      if (typeof r === 'string') errors.push(r);
      else rules.push(...r);
    };
    for (const b of this.rest.store.list(`${RBAC_GROUP}/clusterrolebindings`)) visit(b, undefined);
    if (namespace)
      for (const b of this.rest.store.list(`${RBAC_GROUP}/rolebindings`, namespace)) visit(b, namespace);
    return { rules, errors };
  }

  /** Undefined when allowed; otherwise the Forbidden message the real server would send. */
  authorize(u: UserInfo, info: RequestInfo): string | undefined {
    if (u.groups.includes('system:masters')) return undefined;
    const { rules, errors } = this.rulesFor(u, info.kind ? info.namespace : undefined);
    // RBACAuthorizer.Authorize: the reason lists the errors met on the way to "no".
    const reason = errors.length ? `: RBAC: ${aggregate(errors)}` : '';
    if (!info.kind) {
      const ok = rules.some(
        (r) =>
          matchVerb(r, info.verb) &&
          (r.nonResourceURLs ?? []).some(
            (p) => p === '*' || p === info.path || (p.endsWith('*') && info.path.startsWith(p.slice(0, -1))),
          ),
      );
      return ok ? undefined : `forbidden: User "${u.user}" cannot ${info.verb} path "${info.path}"${reason}`;
    }
    const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
    const ok = rules.some(
      (r) =>
        matchVerb(r, info.verb) &&
        (r.apiGroups ?? []).some((g) => g === '*' || g === info.group) &&
        (r.resources ?? []).some(
          (x) => x === '*' || x === resource || (info.subresource && x === `*/${info.subresource}`),
        ) &&
        (!r.resourceNames?.length || (info.name !== undefined && r.resourceNames.includes(info.name))),
    );
    if (ok) return undefined;
    const subject = `${qualified(info.kind)}${info.name ? ` "${info.name}"` : ''}`;
    const scope = info.namespace ? `in the namespace "${info.namespace}"` : 'at the cluster scope';
    return `${subject} is forbidden: User "${u.user}" cannot ${info.verb} resource "${resource}" in API group "${info.group}" ${scope}${reason}`;
  }
}

const matchVerb = (r: PolicyRule, verb: string): boolean =>
  (r.verbs ?? []).some((v) => v === '*' || v === verb);
