/**
 * optimisticUpdate for the data paths, where objects routinely disappear under us (a concurrent
 * release drops the last finalizer between our read and our write): a 404 on the write is
 * reported as `gone`, like a 404 on the read.
 */
import type { ResourceType } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';
import { isNotFound } from '../kube/errors.ts';
import { optimisticUpdate, type SKIP, type UpdateOptions, type UpdateOutcome } from '../kube/optimistic.ts';
import type { KubeObject } from '../kube/types.ts';

export async function updateOrGone<T extends KubeObject>(
  client: KubeClient,
  t: ResourceType,
  namespace: string | undefined,
  name: string,
  // biome-ignore lint/suspicious/noConfusingVoidType: the same mutator type as optimisticUpdate's
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
