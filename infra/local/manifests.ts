/**
 * Reads YAML manifests (a file or a directory, multi-document) and applies them through the kube
 * client: create, or update an existing object in place (kubectl apply's effect for our needs).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { envelopeOf, R, type Resource, type ResourceType, resourceFor } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { isAlreadyExists, isConflict } from '../../shared/kube/errors.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
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
        throw new Error(`${file}: a document lacks apiVersion, kind or metadata.name`);
      out.push(obj);
    }
  }
  return out;
}

export function typeOf(obj: KubeObject): ResourceType {
  const t = resourceFor(obj.apiVersion ?? '', obj.kind ?? '');
  if (!t)
    throw new Error(
      `${obj.kind} ${obj.metadata.name}: kind ${obj.apiVersion}/${obj.kind} is not one this system knows`,
    );
  return t;
}

/** Creates each object (namespaces first, then CRDs, then the rest in file order); updates existing ones. */
export async function applyObjects(
  client: KubeClient,
  objects: KubeObject[],
  defaultNamespace = 'default',
): Promise<KubeObject[]> {
  const rank = (o: KubeObject) =>
    o.kind === 'Namespace' ? 0 : o.kind === 'CustomResourceDefinition' ? 1 : 2;
  const ordered = [...objects].sort((a, b) => rank(a) - rank(b));
  const applied: KubeObject[] = [];
  for (const obj of ordered) {
    const t = envelopeOf(typeOf(obj));
    const body = structuredClone(obj);
    if (t.namespaced) body.metadata.namespace ??= defaultNamespace;
    if (t.namespaced) await ensureNamespace(client, body.metadata.namespace!);
    try {
      applied.push(await client.create(t, body));
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      applied.push(await replaceLatest(client, t, body));
    }
  }
  return applied;
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
