/**
 * A list narrowed by a field selector on a CRD's `selectableFields` (Kubernetes 1.31+), or
 * undefined when the server refuses that field label (400: a server before 1.31, or a CRD installed
 * without the selectable fields — the IPAM CRDs of another project, say). A refusal is remembered
 * per client and resource, so a process sends one refused request per kind, not one per claim;
 * the caller then lists the namespace, as the reference does.
 */
import type { Resource, ResourceType } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';
import { InvalidError } from '../kube/errors.ts';
import type { KubeObject } from '../kube/types.ts';
import { kindsPerClient } from './kinds-per-client.ts';

/** Per client, the kinds whose field selectors its server refused. */
const refused = kindsPerClient();

const isRefusedSelector = (e: unknown) => e instanceof InvalidError && e.code === 400;

/** Has this client's server refused field selectors on `kind`? */
export const selectorsRefused = (client: KubeClient, kind: ResourceType): boolean =>
  refused.has(client, kind);

export async function fieldSelected<T extends KubeObject>(
  client: KubeClient,
  kind: Resource<T>,
  namespace: string,
  fieldSelector: string,
): Promise<T[] | undefined> {
  return (await fieldSelectedPage(client, kind, namespace, fieldSelector))?.items;
}

/**
 * The first `limit` objects `fieldSelector` selects (every one without a limit), and whether that
 * is all of them; undefined when the server refuses the selector.
 */
export async function fieldSelectedPage<T extends KubeObject>(
  client: KubeClient,
  kind: Resource<T>,
  namespace: string,
  fieldSelector: string,
  limit?: number,
): Promise<{ items: T[]; complete: boolean } | undefined> {
  if (selectorsRefused(client, kind)) return undefined;
  try {
    const page = await client.list(kind, namespace, {
      fieldSelector,
      ...(limit !== undefined ? { limit, maxPages: 1 } : {}),
    });
    return { items: page.items, complete: !page.continue };
  } catch (e) {
    if (!isRefusedSelector(e)) throw e;
    refused.add(client, kind);
    return undefined;
  }
}

/** The objects `fieldSelector` selects, or (a server that refuses it) every one of the namespace. */
export async function fieldSelectedOrAll<T extends KubeObject>(
  client: KubeClient,
  kind: Resource<T>,
  namespace: string,
  fieldSelector: string,
): Promise<T[]> {
  return (
    (await fieldSelected(client, kind, namespace, fieldSelector)) ??
    (await client.list(kind, namespace)).items
  );
}
