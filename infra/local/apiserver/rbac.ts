/** Placeholder, replaced by the RBAC authorizer. */
import type { Rest } from './rest.ts';
import type { RequestInfo, UserInfo } from './server.ts';
export interface RbacOptions {
  tokens: Record<string, { user: string; groups?: string[] }>;
}
export class Rbac {
  readonly adminToken = 'metal3fn-admin';
  private readonly opts: RbacOptions;
  constructor(_rest: Rest, opts: RbacOptions) {
    this.opts = opts;
  }
  authenticate(header: string | undefined): UserInfo | undefined {
    const tok = header?.replace(/^Bearer\s+/i, '');
    if (tok === this.adminToken) return { user: 'admin', groups: ['system:masters'] };
    const u = tok ? this.opts.tokens[tok] : undefined;
    return u ? { user: u.user, groups: u.groups ?? [] } : undefined;
  }
  authorize(_u: UserInfo, _i: RequestInfo): string | undefined {
    return undefined;
  }
}
