/**
 * What the controllers next to a real API server do, as clients see it. Upstream:
 * - apiextensions-apiserver pkg/registry/customresourcedefinition/etcd.go REST.Delete,
 *   pkg/controller/finalizer/crd_finalizer.go (sync, deleteInstances),
 *   pkg/apiserver/customresource_handler.go serveResource (no create while terminating);
 * - kubernetes pkg/controller/garbagecollector/garbagecollector.go attemptToDeleteItem,
 *   classifyReferences, isDangling (owners verified absent by kind and name);
 * - pkg/controller/serviceaccount/serviceaccounts_controller.go (the `default` ServiceAccount),
 *   pkg/controller/certificates/rootcacertpublisher/publisher.go (kube-root-ca.crt);
 * - pkg/controller/namespace/deletion/namespaced_resources_deleter.go and
 *   status_condition_utils.go (a terminating namespace's conditions), plugin/pkg/admission/
 *   namespace/lifecycle (no new content in a terminating namespace).
 */
import { randomUUID, X509Certificate } from 'node:crypto';
import { expect } from 'vitest';
import { R } from '../../../shared/api/resources.ts';
import { kubectl } from '../../helpers/kubectl.ts';
import { createTempCrd, eventually, GROUP, Widget, widget } from '../fixtures.ts';
import { failure } from '../http.ts';
import { ServiceAccount } from '../identity.ts';
import type { ConformanceCase } from '../suite.ts';

const condition = (o: any, type: string) => (o?.status?.conditions ?? []).find((c: any) => c.type === type);

export const CONTROLLER_CASES: ConformanceCase[] = [
  {
    name: 'deleting a CRD whose instances have finalizers keeps it Terminating (instances marked deleted, no new ones) until they are gone',
    requires: ['kubectl'],
    async run({ client, kubeconfigPath, ns }) {
      const group = `${ns}.example.com`;
      const Temp = await createTempCrd(client, group);
      const crdName = `temps.${group}`;
      await eventually(
        async () =>
          client.create(Temp, {
            metadata: { name: 'held', namespace: ns, finalizers: ['example.com/hold'] },
            spec: { a: 1 },
          }),
        'kind served',
        30_000,
      );
      await client.create(Temp, { metadata: { name: 'free', namespace: ns }, spec: { a: 2 } });
      expect(await kubectl(kubeconfigPath, ['delete', 'crd', crdName, '--wait=false'])).toContain(
        `customresourcedefinition.apiextensions.k8s.io "${crdName}" deleted`,
      );
      const terminating = await eventually(
        async () => {
          const c = await client.get<any>(R.CustomResourceDefinition, undefined, crdName);
          return condition(c, 'Terminating')?.reason === 'InstanceDeletionInProgress' ? c : undefined;
        },
        'CRD terminating, deleting its instances',
        30_000,
      );
      expect(terminating.metadata.deletionTimestamp).toBeTruthy();
      expect(terminating.metadata.finalizers).toContain('customresourcecleanup.apiextensions.k8s.io');
      expect(condition(terminating, 'Terminating')).toMatchObject({
        status: 'True',
        message: 'CustomResource deletion is in progress',
      });
      await eventually(
        async () => !(await client.get(Temp, ns, 'free')),
        'instance without finalizers gone',
        30_000,
      );
      const held = await client.get<any>(Temp, ns, 'held');
      expect(held.metadata.deletionTimestamp).toBeTruthy();
      const e = await failure(client.create(Temp, { metadata: { name: 'new', namespace: ns }, spec: {} }));
      expect(e.code).toBe(405);
      expect(e.status.reason).toBe('MethodNotAllowed');
      expect(e.status.message).toBe('create not allowed while custom resource definition is terminating');
      // The CRD stays while the instance waits for its finalizer.
      expect(await client.get(R.CustomResourceDefinition, undefined, crdName)).toBeTruthy();
      await client.patch(Temp, ns, 'held', { metadata: { finalizers: null } });
      await eventually(
        async () => !(await client.get(R.CustomResourceDefinition, undefined, crdName)),
        'CRD gone once its instances are',
        60_000,
      );
      const gone = await failure(client.list(Temp, ns));
      expect(gone.code).toBe(404);
    },
  },
  {
    name: 'an object whose owner never existed is collected; a dangling reference next to a live owner is removed; an unverifiable owner keeps it',
    async run({ client, ns }) {
      const owner = await client.create<any>(R.ConfigMap, { metadata: { name: 'owner', namespace: ns } });
      const ghost = { apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: randomUUID() };
      const live = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid };
      const unknownKind = { apiVersion: 'example.invalid/v1', kind: 'Nothing', name: 'x', uid: randomUUID() };
      await client.create(R.ConfigMap, {
        metadata: { name: 'unverifiable', namespace: ns, ownerReferences: [unknownKind] },
      });
      await client.create(R.ConfigMap, {
        metadata: { name: 'half', namespace: ns, ownerReferences: [live, ghost] },
      });
      await client.create(R.ConfigMap, {
        metadata: { name: 'orphaned', namespace: ns, ownerReferences: [ghost] },
      });
      await eventually(
        async () => !(await client.get(R.ConfigMap, ns, 'orphaned')),
        'orphaned dependent collected',
        60_000,
      );
      const half = await eventually(
        async () => {
          const o = await client.get<any>(R.ConfigMap, ns, 'half');
          return o?.metadata.ownerReferences?.length === 1 ? o : undefined;
        },
        'dangling reference removed',
        60_000,
      );
      expect(half.metadata.ownerReferences).toEqual([live]);
      expect(await client.get(R.ConfigMap, ns, 'unverifiable')).toBeTruthy();
    },
  },
  {
    name: 'a new namespace gets the default ServiceAccount and the kube-root-ca.crt ConfigMap (a CA bundle); both come back when deleted or edited',
    async run({ client, ns }) {
      const sa = await eventually(
        () => client.get<any>(ServiceAccount, ns, 'default'),
        'default ServiceAccount',
        30_000,
      );
      const cm = await eventually(
        () => client.get<any>(R.ConfigMap, ns, 'kube-root-ca.crt'),
        'kube-root-ca.crt',
        30_000,
      );
      expect(Object.keys(cm.data)).toEqual(['ca.crt']);
      const ca = new X509Certificate(cm.data['ca.crt']);
      expect(ca.ca).toBe(true);
      expect(cm.metadata.annotations['kubernetes.io/description']).toBe(
        'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.',
      );
      expect(cm.metadata.managedFields.map((m: any) => [m.manager, m.operation])).toEqual([
        ['kube-controller-manager', 'Update'],
      ]);
      await client.delete(ServiceAccount, ns, 'default');
      const again = await eventually(
        async () => {
          const o = await client.get<any>(ServiceAccount, ns, 'default');
          return o && o.metadata.uid !== sa.metadata.uid ? o : undefined;
        },
        'default ServiceAccount recreated',
        30_000,
      );
      expect(again.metadata.name).toBe('default');
      await client.patch(R.ConfigMap, ns, 'kube-root-ca.crt', { data: { 'ca.crt': 'tampered' } });
      await eventually(
        async () =>
          (await client.get<any>(R.ConfigMap, ns, 'kube-root-ca.crt'))?.data['ca.crt'] === cm.data['ca.crt'],
        'kube-root-ca.crt reset',
        30_000,
      );
      await client.delete(R.ConfigMap, ns, 'kube-root-ca.crt');
      await eventually(
        async () =>
          (await client.get<any>(R.ConfigMap, ns, 'kube-root-ca.crt'))?.data['ca.crt'] === cm.data['ca.crt'],
        'kube-root-ca.crt recreated',
        30_000,
      );
    },
  },
  {
    name: 'a terminating namespace: phase Terminating, the deleter’s conditions naming what remains and which finalizers hold it, no new content; gone once empty',
    async run({ client, ns }) {
      const sub = `${ns}-t`;
      await client.create(R.Namespace, { metadata: { name: sub } });
      try {
        await eventually(() => client.get(ServiceAccount, sub, 'default'), 'namespace set up', 30_000);
        await client.create(Widget, widget(sub, 'held', { size: 1 }, { finalizers: ['example.com/hold'] }));
        await client.delete(R.Namespace, undefined, sub);
        const t = await eventually(
          async () => {
            const o = await client.get<any>(R.Namespace, undefined, sub);
            return condition(o, 'NamespaceFinalizersRemaining')?.status === 'True' ? o : undefined;
          },
          'namespace conditions',
          60_000,
        );
        expect(t.status.phase).toBe('Terminating');
        expect(
          t.status.conditions.map((c: any) => ({
            type: c.type,
            status: c.status,
            reason: c.reason,
            message: c.message,
          })),
        ).toEqual([
          {
            type: 'NamespaceDeletionDiscoveryFailure',
            status: 'False',
            reason: 'ResourcesDiscovered',
            message: 'All resources successfully discovered',
          },
          {
            type: 'NamespaceDeletionGroupVersionParsingFailure',
            status: 'False',
            reason: 'ParsedGroupVersions',
            message: 'All legacy kube types successfully parsed',
          },
          {
            type: 'NamespaceDeletionContentFailure',
            status: 'False',
            reason: 'ContentDeleted',
            message: 'All content successfully deleted, may be waiting on finalization',
          },
          {
            type: 'NamespaceContentRemaining',
            status: 'True',
            reason: 'SomeResourcesRemain',
            message: `Some resources are remaining: widgets.${GROUP} has 1 resource instances`,
          },
          {
            type: 'NamespaceFinalizersRemaining',
            status: 'True',
            reason: 'SomeFinalizersRemain',
            message:
              'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
          },
        ]);
        for (const c of t.status.conditions) expect(c.lastTransitionTime).toMatch(/Z$/);
        const e = await failure(client.create(R.ConfigMap, { metadata: { name: 'late', namespace: sub } }));
        expect(e.code).toBe(403);
        expect(e.status.message).toBe(
          `configmaps "late" is forbidden: unable to create new content in namespace ${sub} because it is being terminated`,
        );
        expect(e.status.details?.causes).toEqual([
          {
            reason: 'NamespaceTerminating',
            message: `namespace ${sub} is being terminated`,
            field: 'metadata.namespace',
          },
        ]);
        await client.patch(Widget, sub, 'held', { metadata: { finalizers: null } });
        await eventually(
          async () => !(await client.get(R.Namespace, undefined, sub)),
          'namespace gone',
          60_000,
        );
      } finally {
        const left = await client.get<any>(Widget, sub, 'held').catch(() => undefined);
        if (left)
          await client.patch(Widget, sub, 'held', { metadata: { finalizers: null } }).catch(() => undefined);
      }
    },
  },
];
