/**
 * Per-key serialization inside one process, as client-go's workqueue guarantees: two deliveries
 * of the same key never run at the same time here; the second starts when the first has finished
 * (and then finds the work done). Across processes the resourceVersion checks and create-by-name
 * remain the guard; this only spares duplicate deliveries a pointless 409 race with themselves.
 */
const tails = new Map<string, Promise<unknown>>();

export async function serializeByKey<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(key);
  const run = (previous ?? Promise.resolve()).then(fn, fn);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  tails.set(key, tail);
  try {
    return await run;
  } finally {
    // Only the last in line clears the entry, so the map never grows beyond the keys in flight.
    if (tails.get(key) === tail) tails.delete(key);
  }
}

/** Keys currently in flight (for tests). */
export const keysInFlight = (): number => tails.size;
