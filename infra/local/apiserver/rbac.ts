/**
 * Optional RBAC enforcement: bearer tokens name users (401 for an unknown token), and Roles,
 * ClusterRoles, RoleBindings and ClusterRoleBindings (served objects, so tests write them like
 * on a real cluster) decide, with Kubernetes semantics: apiGroups, resources with
 * subresources (`metal3machines/status`, `*`, `*\/status`), resourceNames, verbs (`*`),
 * nonResourceURLs (exact or `prefix*`). `system:masters` may do anything. Every authenticated
 * user may read discovery, as the default `system:discovery` binding allows; anyone may read
 * /version and the health endpoints. Requests without credentials are `system:anonymous`.
 */
import { RBAC_GROUP } from './kinds.ts';
import type { Rest } from './rest.ts';
import type { RequestInfo, UserInfo } from './server.ts';
import { qualified } from './status.ts';

export interface RbacOptions {
  /** bearer token → identity. */
  tokens: Record<string, { user: string; groups?: string[] }>;
  /** The token that authenticates as an admin (group system:masters); default "metal3fn-admin". */
  adminToken?: string;
}

interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const DISCOVERY = /^\/(api|apis|openapi)(\/.*)?$/;
const PUBLIC = /^\/(version|healthz|livez|readyz)$/;

export class Rbac {
  readonly adminToken: string;
  private readonly opts: RbacOptions;
  private readonly rest: Rest;

  constructor(rest: Rest, opts: RbacOptions) {
    this.rest = rest;
    this.opts = opts;
    this.adminToken = opts.adminToken ?? 'metal3fn-admin';
  }

  /**
   * The user of a request: no credentials → system:anonymous (then usually 403), as with the
   * real server's anonymous auth; a token we do not know → undefined (401).
   */
  authenticate(header: string | undefined): UserInfo | undefined {
    if (!header) return { user: 'system:anonymous', groups: ['system:unauthenticated'] };
    const m = /^Bearer\s+(.+)$/i.exec(header);
    if (!m) return undefined;
    const tok = m[1]!.trim();
    if (tok === this.adminToken) return { user: 'admin', groups: ['system:masters', 'system:authenticated'] };
    const u = this.opts.tokens[tok];
    return u ? { user: u.user, groups: [...(u.groups ?? []), 'system:authenticated'] } : undefined;
  }

  private subjectMatches(subjects: any[] | undefined, u: UserInfo): boolean {
    for (const s of subjects ?? []) {
      if (s.kind === 'User' && s.name === u.user) return true;
      if (s.kind === 'Group' && u.groups.includes(s.name)) return true;
      if (s.kind === 'ServiceAccount' && u.user === `system:serviceaccount:${s.namespace}:${s.name}`)
        return true;
    }
    return false;
  }

  private roleRules(roleRef: any, namespace: string | undefined): PolicyRule[] {
    if (roleRef?.apiGroup && roleRef.apiGroup !== RBAC_GROUP) return [];
    if (roleRef?.kind === 'ClusterRole')
      return this.rest.store.get(`${RBAC_GROUP}/clusterroles`, undefined, roleRef.name)?.rules ?? [];
    if (roleRef?.kind === 'Role' && namespace)
      return this.rest.store.get(`${RBAC_GROUP}/roles`, namespace, roleRef.name)?.rules ?? [];
    return [];
  }

  /** The rules that apply to a user for a request in `namespace` (cluster-wide ones included). */
  private rulesFor(u: UserInfo, namespace: string | undefined): PolicyRule[] {
    const rules: PolicyRule[] = [];
    for (const b of this.rest.store.list(`${RBAC_GROUP}/clusterrolebindings`)) {
      if (this.subjectMatches(b.subjects, u)) rules.push(...this.roleRules(b.roleRef, undefined));
    }
    if (namespace) {
      for (const b of this.rest.store.list(`${RBAC_GROUP}/rolebindings`, namespace)) {
        if (this.subjectMatches(b.subjects, u)) rules.push(...this.roleRules(b.roleRef, namespace));
      }
    }
    return rules;
  }

  /** Undefined when allowed; otherwise the Forbidden message the real server would send. */
  authorize(u: UserInfo, info: RequestInfo): string | undefined {
    if (u.groups.includes('system:masters')) return undefined;
    if (!info.kind) {
      // system:public-info-viewer (everyone) and system:discovery (authenticated users).
      if (PUBLIC.test(info.path) && info.verb === 'get') return undefined;
      if (DISCOVERY.test(info.path) && info.verb === 'get' && u.groups.includes('system:authenticated'))
        return undefined;
      const ok = this.rulesFor(u, undefined).some(
        (r) =>
          matchVerb(r, info.verb) &&
          (r.nonResourceURLs ?? []).some(
            (p) => p === '*' || p === info.path || (p.endsWith('*') && info.path.startsWith(p.slice(0, -1))),
          ),
      );
      return ok ? undefined : `forbidden: User "${u.user}" cannot ${info.verb} path "${info.path}"`;
    }
    // system:basic-user: every authenticated user may ask what it may do.
    if (
      info.group === 'authorization.k8s.io' &&
      info.resource === 'selfsubjectaccessreviews' &&
      info.verb === 'create'
    ) {
      if (u.groups.includes('system:authenticated')) return undefined;
    }
    const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
    const ok = this.rulesFor(u, info.namespace).some(
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
    return `${subject} is forbidden: User "${u.user}" cannot ${info.verb} resource "${resource}" in API group "${info.group}" ${scope}`;
  }
}

const matchVerb = (r: PolicyRule, verb: string): boolean =>
  (r.verbs ?? []).some((v) => v === '*' || v === verb);
