/**
 * Reads YAML manifests (a file or a directory, multi-document) and applies them through the kube
 * client: create, or update an existing object in place (kubectl apply's effect for our needs).
 *
 * Order: Namespaces, then CustomResourceDefinitions (as they must exist before what they define),
 * then everything else in the order given; nothing else depends on the order, because every
 * controller (ours and the simulators) waits for what is not there yet.
 *
 * One thing kubectl cannot do: an ownerReference without a uid (the seed documents write them so).
 * A real API server refuses it. Here it names its owner by API group, kind and name in the
 * object's namespace; the owner is applied first and its uid filled in. An owner that is neither
 * among the objects nor in the cluster is an error before anything is applied.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { KubernetesObjectApi } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { envelopeOf, R, type Resource, type ResourceType, resourceFor } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { isAlreadyExists, isConflict } from '../../shared/kube/errors.ts';
import type { KubeObject, OwnerReference } from '../../shared/kube/types.ts';
import { PROJECT_CRD_DIRS } from './apiserver/crds.ts';

export async function loadManifests(path: string): Promise<KubeObject[]> {
  const info = await stat(path);
  const files = info.isDirectory()
    ? (await readdir(path))
        .filter((f) => /\.ya?ml$/.test(f))
        .sort()
        .map((f) => join(path, f))
    : [path];
  const out: KubeObject[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(file, 'utf8'))) {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0]!.message}`);
      const obj = doc.toJS() as KubeObject | null;
      if (!obj) continue;
      if (!obj.kind || !obj.apiVersion || !obj.metadata?.name)
        throw new Error(
          `${file}: a document is not a Kubernetes object (it lacks apiVersion, kind or metadata.name)`,
        );
      out.push(obj);
    }
  }
  return out;
}

/** The resource of a kind this system knows (no round trip), or undefined. */
export function knownTypeOf(obj: KubeObject): ResourceType | undefined {
  return resourceFor(obj.apiVersion ?? '', obj.kind ?? '');
}

/** client-node's discovery (KubernetesObjectApi caches it per API version). */
class Discovery extends KubernetesObjectApi {
  find(apiVersion: string, kind: string) {
    return this.resource(apiVersion, kind);
  }
}

/** The resource of any kind the server serves (a ClusterRole, another project's CRD), as kubectl finds it. */
export async function typeOf(client: KubeClient, obj: KubeObject): Promise<ResourceType> {
  const known = knownTypeOf(obj);
  if (known) return known;
  const apiVersion = obj.apiVersion ?? '';
  const found = await client.kc
    .makeApiClient(Discovery)
    .find(apiVersion, obj.kind ?? '')
    .catch(() => undefined);
  if (!found)
    throw new Error(`${obj.kind} ${obj.metadata.name}: the server serves no kind ${apiVersion}/${obj.kind}`);
  const slash = apiVersion.indexOf('/');
  return {
    group: slash < 0 ? '' : apiVersion.slice(0, slash),
    version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
    kind: obj.kind!,
    plural: found.name,
    namespaced: found.namespaced,
    statusSubresource: false,
  };
}

const groupOf = (apiVersion: string | undefined) =>
  apiVersion?.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
const ownerKey = (group: string, kind: string, ns: string | undefined, name: string) =>
  `${group}|${kind}|${ns ?? ''}|${name}`;
const keyOfObject = (o: KubeObject, ns: string | undefined) =>
  ownerKey(groupOf(o.apiVersion), o.kind ?? '', ns, o.metadata.name!);
const keyOfRef = (r: OwnerReference, ns: string | undefined) =>
  ownerKey(groupOf(r.apiVersion), r.kind, ns, r.name);
const describeRef = (r: OwnerReference) => `${r.kind} ${r.name}`;

export interface ApplyResult {
  /** The objects as the server returned them, in the order applied. */
  applied: KubeObject[];
  /** ownerReferences whose uid was filled in. */
  ownerUidsFilled: number;
}

/** Creates each object (namespaces first, then CRDs, then the rest in order); updates existing ones. */
export async function applyObjects(
  client: KubeClient,
  objects: KubeObject[],
  defaultNamespace = 'default',
): Promise<KubeObject[]> {
  return (await applyManifests(client, objects, defaultNamespace)).applied;
}

export async function applyManifests(
  client: KubeClient,
  objects: KubeObject[],
  defaultNamespace = 'default',
): Promise<ApplyResult> {
  const rank = (o: KubeObject) =>
    o.kind === 'Namespace' ? 0 : o.kind === 'CustomResourceDefinition' ? 1 : 2;
  const pending = [...objects]
    .map((o, i) => ({ o, i }))
    .sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i)
    .map(({ o }) => o);
  const nsOf = (o: KubeObject) => {
    const known = knownTypeOf(o);
    return known && !known.namespaced ? undefined : (o.metadata.namespace ?? defaultNamespace);
  };
  const needsUid = (o: KubeObject) => (o.metadata.ownerReferences ?? []).filter((r) => !r.uid);

  // Every uid-less owner must be among the objects or in the cluster: checked before any write.
  const among = new Set(objects.map((o) => keyOfObject(o, nsOf(o))));
  const inCluster = new Map<string, string>();
  for (const o of objects)
    for (const r of needsUid(o)) {
      const key = keyOfRef(r, nsOf(o));
      if (among.has(key) || inCluster.has(key)) continue;
      const t = envelopeOf(
        await typeOf(client, { apiVersion: r.apiVersion, kind: r.kind, metadata: { name: r.name } }),
      );
      const owner = await client.get(t, nsOf(o), r.name);
      if (!owner?.metadata.uid)
        throw new Error(
          `${o.kind} ${nsOf(o) ?? ''}/${o.metadata.name}: its ownerReference ${describeRef(r)} has no uid, and no such object is in the manifests or the cluster`,
        );
      inCluster.set(key, owner.metadata.uid);
    }

  const uids = new Map(inCluster);
  const applied: KubeObject[] = [];
  let filled = 0;
  while (pending.length) {
    const next = pending.findIndex((o) => needsUid(o).every((r) => uids.has(keyOfRef(r, nsOf(o)))));
    if (next < 0)
      throw new Error(
        `ownerReferences without uid form a cycle: ${pending.map((o) => `${o.kind} ${o.metadata.name}`).join(', ')}`,
      );
    const obj = pending.splice(next, 1)[0]!;
    const t = envelopeOf(await typeOf(client, obj));
    const body = structuredClone(obj);
    if (t.namespaced) body.metadata.namespace ??= defaultNamespace;
    if (body.metadata.ownerReferences)
      body.metadata.ownerReferences = body.metadata.ownerReferences.map((r) => {
        if (r.uid) return r;
        filled++;
        return { ...r, uid: uids.get(keyOfRef(r, nsOf(obj)))! };
      });
    if (t.namespaced) await ensureNamespace(client, body.metadata.namespace!);
    let result: KubeObject;
    try {
      result = await client.create(t, body);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      result = await replaceLatest(client, t, body);
    }
    result.apiVersion ??= body.apiVersion;
    result.kind ??= body.kind;
    applied.push(result);
    if (result.metadata.uid)
      uids.set(keyOfObject(body, t.namespaced ? body.metadata.namespace : undefined), result.metadata.uid);
  }
  return { applied, ownerUidsFilled: filled };
}

async function replaceLatest(client: KubeClient, t: Resource, body: KubeObject): Promise<KubeObject> {
  for (let attempt = 0; ; attempt++) {
    const current = await client.get(t, body.metadata.namespace, body.metadata.name!);
    if (!current) return client.create(t, body);
    try {
      return await client.replace(t, {
        ...current,
        ...body,
        metadata: {
          ...current.metadata,
          ...body.metadata,
          resourceVersion: current.metadata.resourceVersion,
        },
      });
    } catch (e) {
      if (!isConflict(e) || attempt >= 5) throw e;
    }
  }
}

const knownNamespaces = new WeakMap<KubeClient, Set<string>>();
export async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  const known = knownNamespaces.get(client) ?? new Set<string>();
  knownNamespaces.set(client, known);
  if (known.has(name)) return;
  try {
    await client.create(R.Namespace, { metadata: { name } });
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
  known.add(name);
}

/** The CRDs the local system serves: ours (infra/crds) and those of the projects we work with (infra/local/crds). */
export const CRD_DIRS = PROJECT_CRD_DIRS;

export async function installCrds(client: KubeClient, dirs: string[] = CRD_DIRS): Promise<number> {
  let n = 0;
  for (const dir of dirs) {
    // A missing folder is an error, not "no CRDs": skipping it hid a bundle without its assets.
    const objs = await loadManifests(dir);
    await applyObjects(
      client,
      objs.filter((o) => o.kind === 'CustomResourceDefinition'),
    );
    n += objs.length;
  }
  return n;
}
