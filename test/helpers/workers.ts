/** A fixed number of concurrent workers over a list (contention tests and benchmarks). */

/** Runs `fn` over `items` with `workers` concurrent workers; returns the results in delivery order. */
export async function runWorkers<T, R>(
  items: T[],
  workers: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i]!);
    }),
  );
  return results;
}
