/**
 * Index allocation, pure (seed 001): indexes start at 0 and step by 1; a claim gets the lowest
 * index no Metal3Data of the template uses.
 *
 * Concurrency without a lock: when several claims of one template are pending at once, each
 * reconcile ranks its claim among the pending claims (sorted by name, as the reference's template
 * controller walks them) and takes the free index of that rank. Every worker that sees the same
 * snapshot computes a different index for a different claim, so creates rarely collide, and once
 * the pending claims are served the used set is exactly the lowest free indexes: dense. With one
 * pending claim (the serialized queue) the rank is 0, i.e. plain "lowest free index". The API
 * server's create-by-name stays the arbiter: a stale view only costs an AlreadyExists and a
 * re-list.
 */

/** The `n`-th (0-based) non-negative integer not in `used`. */
export function nthFreeIndex(used: Iterable<number>, n = 0): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`rank must be a non-negative integer, got ${n}`);
  const taken: ReadonlySet<number> = used instanceof Set ? used : new Set(used);
  let seen = 0;
  for (let i = 0; ; i++) {
    if (taken.has(i)) continue;
    if (seen === n) return i;
    seen++;
  }
}

/** The lowest non-negative integer not in `used`. */
export function lowestFreeIndex(used: Iterable<number>): number {
  return nthFreeIndex(used, 0);
}

/**
 * The rank of `name` among `pending` names (sorted, deduplicated); 0 when it is not among them.
 * Names sort by code unit, which is what the API server's list order gives for DNS names.
 */
export function rankAmong(name: string, pending: Iterable<string>): number {
  const sorted = [...new Set(pending)].sort();
  const at = sorted.indexOf(name);
  return Math.max(at, 0);
}

/**
 * The index a claim should try: the free index of its rank among the pending claims, skipping
 * indexes already tried in this reconcile (each AlreadyExists adds one).
 */
export function candidateIndex(used: Iterable<number>, claimName: string, pending: Iterable<string>): number {
  return nthFreeIndex(used, rankAmong(claimName, pending));
}
