/**
 * optimisticUpdate, with an object deleted between its read and its write (a 404 on the PUT, e.g.
 * a duplicate invocation dropped the last finalizer) reported as `gone` like a 404 on the read.
 */
import type { ResourceType } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { isNotFound } from '../../shared/kube/errors.ts';
import {
  optimisticUpdate,
  type SKIP,
  type UpdateOptions,
  type UpdateOutcome,
} from '../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../shared/kube/types.ts';

export async function updateOrGone<T extends KubeObject>(
  client: KubeClient,
  t: ResourceType,
  namespace: string | undefined,
  name: string,
  mutate: (obj: T) => void | typeof SKIP,
  opts: UpdateOptions = {},
): Promise<UpdateOutcome<T>> {
  try {
    return await optimisticUpdate<T>(client, t, namespace, name, mutate, opts);
  } catch (e) {
    if (isNotFound(e)) return { outcome: 'gone' };
    throw e;
  }
}
