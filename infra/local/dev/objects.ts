/** Reads every object of a cluster for the state dump and the release check. */
import { envelopeOf, K, type ResourceType } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

/** Every kind in the registry that the server serves (a kind without a CRD is skipped). */
export async function listEverything(
  client: KubeClient,
  kinds: ResourceType[] = Object.values(K),
): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const t of kinds) {
    try {
      const { items } = await client.list(envelopeOf(t));
      out.push(...items);
    } catch (e) {
      const code = (e as { code?: number }).code;
      if (code !== 404) throw e;
    }
  }
  return out;
}

export interface StateDump {
  management: KubeObject[];
  workload: Record<string, KubeObject[]>;
}
