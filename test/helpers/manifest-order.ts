/**
 * The same manifests in another order, as files: one document per file, named so that a directory
 * listing (kubectl's order, and `metal3fn dev --manifests`') applies them in that order.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { seededRandom } from '../../infra/local/apiserver/clock.ts';
import type { KubeObject } from '../../shared/kube/types.ts';

export type Order = { kind: 'as-given' } | { kind: 'reverse' } | { kind: 'shuffle'; seed: number };

export function ordered<T>(items: readonly T[], order: Order): T[] {
  if (order.kind === 'as-given') return [...items];
  if (order.kind === 'reverse') return [...items].reverse();
  const random = seededRandom(order.seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Writes the documents into `dir` in `order`; returns the file names in the order they sort. */
export async function writeInOrder(
  docs: readonly KubeObject[],
  dir: string,
  order: Order,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const names: string[] = [];
  for (const [i, doc] of ordered(docs, order).entries()) {
    const name = `${String(i).padStart(3, '0')}-${doc.kind}-${doc.metadata.namespace ?? 'cluster'}-${doc.metadata.name}.yaml`;
    await writeFile(join(dir, name), stringify(doc));
    names.push(name);
  }
  return names;
}
