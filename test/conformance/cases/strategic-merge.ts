/**
 * Strategic merge patch as the server applies it (k8s.io/apimachinery pkg/util/strategicpatch,
 * StrategicMergeMapPatch): lists merge only where the field's patch strategy says `merge`
 * (x-kubernetes-patch-strategy / the Go struct tags), by x-kubernetes-patch-merge-key; every
 * other list, atomic ones included, is replaced by the patch's.
 */
import { expect } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { kubectl } from '../../helpers/kubectl.ts';
import { rawRequest } from '../http.ts';
import { RoleBinding } from '../identity.ts';
import type { ConformanceCase } from '../suite.ts';

const SMP = 'application/strategic-merge-patch+json';
const RBAC = 'rbac.authorization.k8s.io';

export const STRATEGIC_MERGE_CASES: ConformanceCase[] = [
  {
    // kubectl taint computes CreateTwoWayMergePatch against the Node struct (pkg/cmd/taint/
    // taint.go) and sends a strategic merge patch; NodeSpec.taints has no patch strategy, so the
    // list in the patch replaces the stored one and the removed taint is gone.
    name: 'kubectl taint node <n> k1- removes the taint (spec.taints is replaced, not merged)',
    requires: ['kubectl'],
    async run({ kubeconfigPath, client, ns }) {
      const name = `${ns}-taint`;
      await client.create(R.Node, { metadata: { name } });
      try {
        await kubectl(kubeconfigPath, ['taint', 'node', name, 'k1=v1:NoSchedule', 'k2=v2:NoExecute']);
        const out = await kubectl(kubeconfigPath, ['taint', 'node', name, 'k1-']);
        expect(out).toContain(`node/${name} untainted`);
        const node = await client.get<any>(R.Node, undefined, name);
        expect(node.spec.taints).toEqual([{ key: 'k2', value: 'v2', effect: 'NoExecute' }]);
        await kubectl(kubeconfigPath, ['taint', 'node', name, 'k2:NoExecute-']);
        expect((await client.get<any>(R.Node, undefined, name)).spec?.taints).toBeUndefined();
      } finally {
        await client.delete(R.Node, undefined, name);
      }
    },
  },
  {
    // RoleBinding.subjects has no patch strategy either: a patch listing the subjects to keep
    // takes the others' access away.
    name: 'removing a RoleBinding subject by strategic merge patch removes it (kubectl patch)',
    requires: ['kubectl'],
    async run({ kubeconfigPath, client, ns }) {
      const user = (name: string) => ({ kind: 'User', apiGroup: RBAC, name });
      await client.create(RoleBinding, {
        metadata: { name: 'rb', namespace: ns },
        roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'view' },
        subjects: [user('alice'), user('bob')],
      });
      await kubectl(kubeconfigPath, [
        'patch',
        'rolebinding',
        'rb',
        '-n',
        ns,
        '--type',
        'strategic',
        '-p',
        JSON.stringify({ subjects: [user('alice')] }),
      ]);
      expect((await client.get<any>(RoleBinding, ns, 'rb')).subjects).toEqual([user('alice')]);
    },
  },
  {
    // metadata.ownerReferences: patchStrategy merge, merge key uid; `$patch: delete` removes an
    // item by key, `$setElementOrder/<field>` orders the result; metadata.finalizers merges as a
    // set and `$deleteFromPrimitiveList/finalizers` removes items (strategicpatch mergeSlice,
    // mergePatchIntoOriginal).
    name: 'merge keys and directives: ownerReferences merge by uid, $patch: delete, $setElementOrder, finalizers as a set',
    async run({ client, ns }) {
      const owner = async (name: string) =>
        (await client.create<any>(R.ConfigMap, { metadata: { name, namespace: ns } })).metadata.uid as string;
      const ref = (name: string, uid: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid });
      const [a, b, c] = [await owner('a'), await owner('b'), await owner('c')];
      await client.create(R.ConfigMap, {
        metadata: {
          name: 'dep',
          namespace: ns,
          ownerReferences: [ref('a', a), ref('b', b)],
          finalizers: ['x.io/one'],
        },
      });
      const path = client.path(R.ConfigMap, ns, 'dep');
      const patch = async (body: unknown) => {
        const r = await rawRequest(client.kc, 'PATCH', path, { body, contentType: SMP });
        expect(r.status).toBe(200);
        return r.body;
      };
      const merged = await patch({
        metadata: {
          '$setElementOrder/ownerReferences': [{ uid: c }, { uid: a }, { uid: b }],
          ownerReferences: [ref('c', c)],
          finalizers: ['x.io/two'],
        },
      });
      expect(merged.metadata.ownerReferences.map((o: any) => o.name)).toEqual(['c', 'a', 'b']);
      // New items go before the live ones their position cannot be compared with (mergeSortedSlice).
      expect(merged.metadata.finalizers).toEqual(['x.io/two', 'x.io/one']);
      const pruned = await patch({
        metadata: {
          ownerReferences: [{ uid: a, $patch: 'delete' }],
          '$deleteFromPrimitiveList/finalizers': ['x.io/one', 'x.io/two'],
        },
      });
      expect(pruned.metadata.ownerReferences.map((o: any) => o.name)).toEqual(['c', 'b']);
      expect(pruned.metadata.finalizers).toBeUndefined();
    },
  },
];
