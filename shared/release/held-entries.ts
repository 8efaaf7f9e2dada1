/**
 * A released claim's entries in a status map (a Metal3DataTemplate's indexes and dataNames, an
 * IPPool's indexes) removed by one JSON patch whose `test`s check each still holds what the
 * release held (ADR 035), and the removals of one map object coalesced (ADR 038): while a patch of
 * the object is in flight, the removals asked for meanwhile wait and go together in the next one.
 * Every write of such an object costs the API server, the relay's watch and the writer's answer
 * the whole object, which has an entry per machine; a scale-down of concurrent releases made one
 * write per release (quadratic in the fleet).
 *
 * A combined patch is atomic: when one of its tests fails (422) nothing is written and each
 * removal is tried again alone, so one drifted entry costs only its own release the general way.
 * Nothing is kept between calls: a lane lives while its object has a patch in flight.
 */
import type { Resource } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';
import { InvalidError, NotFoundError } from '../kube/errors.ts';
import { type JsonPatchOp, jsonPointer } from '../kube/json-patch.ts';
import type { KubeObject } from '../kube/types.ts';

/** One entry a release held: its path under `status` and the value it must still have. */
export interface HeldEntry {
  path: string[];
  value: string;
}

/** Removals per patch at most (the patch's size stays small beside the object's). */
export const MAX_REMOVALS_PER_PATCH = 64;

interface Waiter {
  held: HeldEntry[];
  settle(removed: boolean): void;
  fail(e: unknown): void;
}

interface Lane {
  waiting: Waiter[];
}

/** Per client (one process's functions share one), per object: the removals waiting for a patch. */
const lanes = new WeakMap<KubeClient, Map<string, Lane>>();

/**
 * Removes `held` from the status of `namespace/name` while each entry still has its value: true
 * when removed, false (nothing written) when there is nothing to expect, the object is gone or an
 * entry is not as held; the caller then goes the general way.
 */
export function removeHeldEntries(
  client: KubeClient,
  resource: Resource<KubeObject>,
  namespace: string,
  name: string,
  held: HeldEntry[],
): Promise<boolean> {
  if (!held.length) return Promise.resolve(false);
  let byObject = lanes.get(client);
  if (!byObject) {
    byObject = new Map();
    lanes.set(client, byObject);
  }
  const key = `${resource.group}/${resource.plural}/${namespace}/${name}`;
  return new Promise<boolean>((settle, fail) => {
    const lane = byObject.get(key);
    if (lane) {
      lane.waiting.push({ held, settle, fail });
      return;
    }
    const fresh: Lane = { waiting: [{ held, settle, fail }] };
    byObject.set(key, fresh);
    void drain(client, resource, namespace, name, fresh, () => byObject.delete(key));
  });
}

async function drain(
  client: KubeClient,
  resource: Resource<KubeObject>,
  namespace: string,
  name: string,
  lane: Lane,
  close: () => void,
): Promise<void> {
  const patch = (held: HeldEntry[]) => patchHeld(client, resource, namespace, name, held);
  while (lane.waiting.length > 0) {
    const batch = lane.waiting.splice(0, MAX_REMOVALS_PER_PATCH);
    try {
      const together = await patch(batch.flatMap((w) => w.held));
      if (together !== 'refused' || batch.length === 1) {
        for (const w of batch) w.settle(together === 'removed');
        continue;
      }
      // One test failed and nothing was written: each alone, so the others still go by patch.
      for (const w of batch) {
        try {
          w.settle((await patch(w.held)) === 'removed');
        } catch (e) {
          w.fail(e);
        }
      }
    } catch (e) {
      for (const w of batch) w.fail(e);
    }
  }
  // In the same turn as the last check: a removal asked for after it starts a lane of its own.
  close();
}

async function patchHeld(
  client: KubeClient,
  resource: Resource<KubeObject>,
  namespace: string,
  name: string,
  held: HeldEntry[],
): Promise<'removed' | 'refused' | 'gone'> {
  // Every test before any removal: the same entry held twice (a release delivered twice at once)
  // is tested twice and removed once.
  const ops: JsonPatchOp[] = [];
  const paths = new Set<string>();
  for (const { path, value } of held) {
    const at = jsonPointer('status', ...path);
    ops.push({ op: 'test', path: at, value });
    paths.add(at);
  }
  for (const at of paths) ops.push({ op: 'remove', path: at });
  try {
    await client.patch(resource, namespace, name, ops, 'json', { status: true });
    return 'removed';
  } catch (e) {
    if (e instanceof InvalidError) return 'refused';
    if (e instanceof NotFoundError) return 'gone';
    throw e;
  }
}
