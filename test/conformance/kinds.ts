/** Built-in kinds the conformance cases use that the product's resource registry does not list. */
import type { ResourceType } from '../../shared/api/resources.ts';

const RBAC = 'rbac.authorization.k8s.io';
const kind = (group: string, kind: string, plural: string): ResourceType =>
  Object.freeze({ group, version: 'v1', kind, plural, namespaced: true, statusSubresource: false });

export const Role = kind(RBAC, 'Role', 'roles');
export const RoleBinding = kind(RBAC, 'RoleBinding', 'rolebindings');
export const ServiceAccount = kind('', 'ServiceAccount', 'serviceaccounts');
