/**
 * A list-then-watch loop into a map (test and dev only): the progress observer and the platform
 * simulator follow the objects they need with it. Re-lists whenever the watch ends. Objects are kept
 * without their managedFields, as the relay keeps them: neither reads them.
 */
import { envelopeOf, type ResourceType } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { withoutManagedFields } from '../../shared/kube/managed-fields.ts';
import type { KubeObject } from '../../shared/kube/types.ts';

export type Cache = Map<string, KubeObject>;
/** What changed: one watch event's object, or undefined after a (re-)list replaced the whole cache. */
export type Change = { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject } | undefined;
export const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** List, then watch from the list's resourceVersion; re-list whenever the watch ends. */
export function informer(
  client: KubeClient,
  t: ResourceType,
  cache: Cache,
  onChange: (change: Change) => void,
  opts: { labelSelector?: string } = {},
): { stop(): void } {
  let stopped = false;
  let controller: AbortController | undefined;
  const loop = async () => {
    while (!stopped) {
      try {
        const list = await client.list(envelopeOf(t), undefined, { labelSelector: opts.labelSelector });
        cache.clear();
        for (const o of list.items) cache.set(keyOf(o), withoutManagedFields(o));
        onChange(undefined);
        await new Promise<void>((resolve) => {
          client
            .watch(
              t,
              undefined,
              {
                resourceVersion: list.resourceVersion,
                allowWatchBookmarks: true,
                timeoutSeconds: 300,
                labelSelector: opts.labelSelector,
              },
              (ev) => {
                const object = { ...withoutManagedFields(ev.object), kind: t.kind };
                if (ev.type === 'ADDED' || ev.type === 'MODIFIED') cache.set(keyOf(object), object);
                else if (ev.type === 'DELETED') cache.delete(keyOf(object));
                else return;
                onChange({ type: ev.type, object });
              },
              () => resolve(),
            )
            .then(
              (c) => {
                controller = c;
                if (stopped) c.abort();
              },
              () => resolve(),
            );
        });
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  void loop();
  return {
    stop() {
      stopped = true;
      controller?.abort();
    },
  };
}
