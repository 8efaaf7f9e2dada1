/**
 * The workload cluster's Nodes a providerID decision looks at (ADR 008). Listing every Node on
 * every pass made this step's cost grow with the cluster (quadratic over a fleet: each machine
 * read all N Nodes, about twice). Instead two label-selected lists, sent together, return the
 * Nodes that can concern this machine:
 *  - `metal3.io/uuid=<host uid>`: its Node (Step 3), and a stale Node of an earlier machine on the
 *    same host (the kubelet template labels it from the host);
 *  - `kubernetes.io/hostname in (<the machine's hostnames>)`: the hostname fallback (Step 4) and
 *    a stale Node under the same hostname.
 * The duplicate checks run over these. With a cloud provider (Step 2) the Node is whichever one
 * the provider gave our ID, so every Node is read, as before.
 */

import type { Node } from '../../shared/api/core.ts';
import { R } from '../../shared/api/index.ts';
import { HOSTNAME_LABEL, NODE_UUID_LABEL } from '../../shared/api/wellknown.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { labelValueProblem } from '../../shared/selectors/labels.ts';

export interface NodeQuery {
  hostUID: string;
  hostnames: readonly string[];
  cloudProvider: boolean;
}

/** The label selectors of the lists to send; undefined means every Node. */
export function nodeSelectors(q: NodeQuery): string[] | undefined {
  if (q.cloudProvider) return undefined;
  const out: string[] = [];
  if (q.hostUID && !labelValueProblem(q.hostUID)) out.push(`${NODE_UUID_LABEL}=${q.hostUID}`);
  // A hostname that is not a valid label value can be no Node's hostname label.
  const names = [...new Set(q.hostnames)].filter((h) => !labelValueProblem(h));
  if (names.length > 0) out.push(`${HOSTNAME_LABEL} in (${names.join(',')})`);
  return out;
}

export async function nodesConcerning(workload: KubeClient, q: NodeQuery): Promise<Node[]> {
  const selectors = nodeSelectors(q);
  if (!selectors) return (await workload.list(R.Node)).items;
  const lists = await Promise.all(
    selectors.map((labelSelector) => workload.list(R.Node, undefined, { labelSelector })),
  );
  const byName = new Map<string, Node>();
  for (const n of lists.flatMap((l) => l.items)) byName.set(n.metadata.name!, n);
  return [...byName.values()];
}
