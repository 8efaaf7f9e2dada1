/**
 * What a process learned about its API server, per client and resource kind: "this server refuses
 * field selectors on it", "this CRD prunes that status field". Remembered so that a process asks
 * once per kind, not once per claim; per client, as each client may talk to another server.
 */
import type { ResourceType } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';

export interface KindsPerClient {
  has(client: KubeClient, kind: ResourceType): boolean;
  add(client: KubeClient, kind: ResourceType): void;
}

export function kindsPerClient(): KindsPerClient {
  const seen = new WeakMap<KubeClient, Set<string>>();
  return {
    has: (client, kind) => seen.get(client)?.has(kind.plural) ?? false,
    add: (client, kind) => void seen.set(client, (seen.get(client) ?? new Set()).add(kind.plural)),
  };
}
