/**
 * The built-in kinds' own validation (kubernetes pkg/apis/core/validation/validation.go,
 * events.go; pkg/apis/rbac/validation; pkg/apis/coordination/validation), with the real
 * server's 422 causes.
 */
import { expect } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { failure } from '../http.ts';
import { Role, RoleBinding } from '../identity.ts';
import type { ConformanceCase } from '../suite.ts';

const MiB = 1024 * 1024;
const RBAC = 'rbac.authorization.k8s.io';

export const BUILTIN_VALIDATION_CASES: ConformanceCase[] = [
  {
    // ValidateSecret: field.TooLong(data, MaxSecretSize) over the decoded data; ValidateConfigMap:
    // the same limit over data and binaryData, on field.NewPath("") (printed "[]").
    name: 'a Secret or ConfigMap with more than 1 MiB of data is refused; exactly 1 MiB is accepted',
    async run({ client, ns }) {
      const big = Buffer.alloc(MiB + 1, 7).toString('base64');
      const s = await failure(
        client.create(R.Secret, { metadata: { name: 'big', namespace: ns }, data: { k: big } }),
      );
      expect(s.code).toBe(422);
      expect(s.status.message).toBe(
        'Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes',
      );
      expect(s.status.details?.causes).toEqual([
        {
          reason: 'FieldValueTooLong',
          message: 'Too long: may not be more than 1048576 bytes',
          field: 'data',
        },
      ]);
      const c = await failure(
        client.create(R.ConfigMap, {
          metadata: { name: 'big', namespace: ns },
          data: { a: 'x'.repeat(MiB), b: 'y' },
        }),
      );
      expect(c.code).toBe(422);
      expect(c.status.message).toBe(
        'ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes',
      );
      const ok = await client.create<any>(R.ConfigMap, {
        metadata: { name: 'full', namespace: ns },
        data: { a: 'x'.repeat(MiB) },
      });
      expect(ok.data.a).toHaveLength(MiB);
    },
  },
  {
    // ValidateSecret's switch on the type: kubernetes.io/tls needs tls.crt and tls.key,
    // kubernetes.io/basic-auth username or password.
    name: 'typed Secrets need their keys: kubernetes.io/tls without tls.crt and tls.key, basic-auth without credentials',
    async run({ client, ns }) {
      const tls = await failure(
        client.create(R.Secret, {
          metadata: { name: 'tls', namespace: ns },
          type: 'kubernetes.io/tls',
          data: {},
        }),
      );
      expect(tls.code).toBe(422);
      expect(tls.status.details?.causes).toEqual([
        { reason: 'FieldValueRequired', message: 'Required value', field: 'data[tls.crt]' },
        { reason: 'FieldValueRequired', message: 'Required value', field: 'data[tls.key]' },
      ]);
      const half = await failure(
        client.create(R.Secret, {
          metadata: { name: 'tls', namespace: ns },
          type: 'kubernetes.io/tls',
          stringData: { 'tls.crt': 'c' },
        }),
      );
      expect(half.status.message).toBe('Secret "tls" is invalid: data[tls.key]: Required value');
      const auth = await failure(
        client.create(R.Secret, {
          metadata: { name: 'auth', namespace: ns },
          type: 'kubernetes.io/basic-auth',
        }),
      );
      expect((auth.status.details?.causes ?? []).map((c) => c.field)).toEqual([
        'data[username]',
        'data[password]',
      ]);
      const good = await client.create<any>(R.Secret, {
        metadata: { name: 'tls', namespace: ns },
        type: 'kubernetes.io/tls',
        stringData: { 'tls.crt': 'c', 'tls.key': 'k' },
      });
      expect(Object.keys(good.data).sort()).toEqual(['tls.crt', 'tls.key']);
    },
  },
  {
    // events.go legacyValidateEvent: without eventTime, the Event's namespace must be its
    // involved object's (or, for a cluster-scoped object, empty or "default").
    name: 'an Event in another namespace than its involved object is refused',
    async run({ client, ns }) {
      const event = (name: string, namespace: string, involvedNs?: string) => ({
        metadata: { name, namespace },
        involvedObject: { kind: 'ConfigMap', name: 'x', ...(involvedNs ? { namespace: involvedNs } : {}) },
        reason: 'Test',
        message: 'm',
        type: 'Normal',
      });
      const e = await failure(client.create(R.Event, event('other', ns, 'kube-system')));
      expect(e.code).toBe(422);
      expect(e.status.message).toBe(
        'Event "other" is invalid: involvedObject.namespace: Invalid value: "kube-system": does not match event.namespace',
      );
      const cluster = await failure(client.create(R.Event, event('node', ns)));
      expect(cluster.status.details?.causes?.[0]?.field).toBe('involvedObject.namespace');
      const ok = await client.create<any>(R.Event, event('same', ns, ns));
      expect(ok.involvedObject.namespace).toBe(ns);
    },
  },
  {
    // validateNodeTaints: the effect is one of three, and a key/effect pair appears once.
    name: 'Node taints: an unsupported effect and a duplicate key and effect are refused',
    async run({ client, ns }) {
      const name = `${ns}-taints`;
      const e = await failure(
        client.create(R.Node, {
          metadata: { name },
          spec: {
            taints: [
              { key: 'a', effect: 'Sometimes' },
              { key: 'b', effect: 'NoSchedule' },
              { key: 'b', value: 'v', effect: 'NoSchedule' },
            ],
          },
        }),
      );
      expect(e.code).toBe(422);
      const causes = e.status.details?.causes ?? [];
      expect(causes.map((c) => [c.reason, c.field])).toEqual([
        ['FieldValueNotSupported', 'spec.taints[0].effect'],
        ['FieldValueDuplicate', 'spec.taints[2]'],
      ]);
      expect(causes[0]!.message).toBe(
        'Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      );
      expect(causes[1]!.message).toMatch(/taints must be unique by key and effect pair$/);
      expect(await client.get(R.Node, undefined, name)).toBeUndefined();
    },
  },
  {
    // rbac validation: ValidatePolicyRule (verbs required), ValidateRoleBindingUpdate (roleRef
    // immutable); rbac/v1 SetDefaults_Subject and SetDefaults_RoleBinding fill apiGroup.
    name: 'RBAC: a rule needs verbs, a binding defaults its apiGroups and its roleRef cannot change',
    async run({ client, ns }) {
      const role = await failure(
        client.create(Role, {
          metadata: { name: 'r', namespace: ns },
          rules: [{ apiGroups: [''], resources: ['configmaps'] }],
        }),
      );
      expect(role.code).toBe(422);
      expect(role.status.message).toBe(
        'Role.rbac.authorization.k8s.io "r" is invalid: rules[0].verbs: Required value: verbs must contain at least one value',
      );
      const rb = await client.create<any>(RoleBinding, {
        metadata: { name: 'rb', namespace: ns },
        roleRef: { kind: 'Role', name: 'r' },
        subjects: [{ kind: 'User', name: 'alice' }],
      });
      expect(rb.roleRef.apiGroup).toBe(RBAC);
      expect(rb.subjects).toEqual([{ kind: 'User', apiGroup: RBAC, name: 'alice' }]);
      const e = await failure(client.patch(RoleBinding, ns, 'rb', { roleRef: { name: 'other' } }));
      expect(e.code).toBe(422);
      expect(e.status.details?.causes?.[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'roleRef' });
      expect(e.status.message).toMatch(/roleRef: Invalid value: .*: cannot change roleRef$/);
      const kind = await failure(
        client.create(RoleBinding, {
          metadata: { name: 'bad', namespace: ns },
          roleRef: { apiGroup: RBAC, kind: 'Secret', name: 'r' },
        }),
      );
      expect(kind.status.details?.causes?.[0]).toMatchObject({
        reason: 'FieldValueNotSupported',
        field: 'roleRef.kind',
        message: 'Unsupported value: "Secret": supported values: "Role", "ClusterRole"',
      });
    },
  },
  {
    // ValidateConfigMapUpdate: once immutable, data and the flag itself cannot change.
    name: 'an immutable ConfigMap keeps its data and stays immutable',
    async run({ client, ns }) {
      await client.create(R.ConfigMap, {
        metadata: { name: 'frozen', namespace: ns },
        data: { a: '1' },
        immutable: true,
      });
      const e = await failure(
        client.patch(R.ConfigMap, ns, 'frozen', { data: { a: '2' }, immutable: false }),
      );
      expect(e.code).toBe(422);
      expect(e.status.details?.causes).toEqual([
        {
          reason: 'FieldValueForbidden',
          message: 'Forbidden: field is immutable when `immutable` is set',
          field: 'immutable',
        },
        {
          reason: 'FieldValueForbidden',
          message: 'Forbidden: field is immutable when `immutable` is set',
          field: 'data',
        },
      ]);
    },
  },
];
