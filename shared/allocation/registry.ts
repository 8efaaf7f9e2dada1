/**
 * The burst registry (ADR 012): while more claims wait on one template than a page holds, each
 * claim being allocated joins `status.allocating` of its template (claim name -> when it joined)
 * with one merge patch, and leaves it in the same patch that records its index. Its rank is the
 * number of claims still unserved that had joined before it — read from its own join's response,
 * which the API server orders: two concurrent claims never both see the other ahead. The rank
 * spreads concurrent creates over distinct free indexes as the name rank did, but without listing
 * the backlog, so a burst costs each claim a bounded read instead of one that grows with the burst.
 *
 * Merge patches of distinct keys commute: joining and leaving never conflict. An entry that stays
 * (a claim deleted or failed before it left, a crash) only makes later ranks larger, never gives
 * an index twice; stale entries are checked and removed by the claims that see them.
 */
import type { Resource } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';
import { KubeApiError } from '../kube/errors.ts';
import { kindsPerClient } from './kinds-per-client.ts';
import type { PoolView } from './views.ts';

/** A template or pool as the registry reads it: its status maps (views.ts). */
type Owner = PoolView;

/** Waiting claims read per attempt; more than this is a burst, ranked through the registry. */
export const PENDING_PAGE = 16;

/** An entry older than this is checked against its claim by the next claim that sees it. */
export const STALE_ENTRY_MS = 60_000;

export const allocatingOf = (o: Owner | undefined): Record<string, string> => o?.status?.allocating ?? {};

/**
 * The registry's entries older than STALE_ENTRY_MS: the ones worth checking against their claim.
 * An entry whose time does not parse (written by hand or by another tool) counts as old: it is
 * checked like any other instead of inflating ranks for ever.
 */
export const oldEntries = (owner: Owner, now: Date): string[] =>
  Object.entries(allocatingOf(owner))
    .filter(([, at]) => !(now.getTime() - Date.parse(at) <= STALE_ENTRY_MS))
    .map(([n]) => n);

/** The names that joined before `name` in `registry` (by join time, then name). Pure. */
export function joinedBefore(registry: Readonly<Record<string, string>>, name: string): string[] {
  const mine = registry[name];
  if (mine === undefined) return Object.keys(registry).filter((n) => n !== name);
  return Object.entries(registry)
    .filter(([n, at]) => n !== name && (at < mine || (at === mine && n < name)))
    .map(([n]) => n);
}

export interface Joined {
  /** The owner (template or pool) as the join left it, or as read when the claim had joined already. */
  owner: Owner;
  /** Claims that joined before this one and are not stale (the join's response: the server's order). */
  ahead: string[];
}

/** Per client, the kinds whose schema has no registry (it prunes status.allocating). */
const unsupported = kindsPerClient();

/**
 * Joins `claimName` to the registry of `owner` (a template or pool, status subresource) with one
 * merge patch, unless it is there already (an earlier delivery joined, then crashed); then removes
 * the stale entries it sees (`waits` tells whether a claim still waits). Undefined when the
 * owner's CRD has no such field (ip-address-manager's own IPPool CRD prunes it): remembered per
 * client and kind, so a process sends one such patch per kind; the caller ranks by its page then.
 */
export async function join(
  client: KubeClient,
  kind: Resource<Owner>,
  owner: Owner,
  claimName: string,
  now: Date,
  waits: (name: string) => Promise<boolean>,
): Promise<Joined | undefined> {
  if (unsupported.has(client, kind)) return undefined;
  let joined: Joined;
  const registry = allocatingOf(owner);
  if (registry[claimName] !== undefined) {
    joined = { owner, ahead: joinedBefore(registry, claimName) };
  } else {
    const after = await patchRegistry(client, kind, owner, { [claimName]: now.toISOString() });
    if (allocatingOf(after)[claimName] === undefined) {
      unsupported.add(client, kind);
      return undefined;
    }
    // Everyone else in the response joined before us: the server applied their patches first.
    joined = { owner: after, ahead: Object.keys(allocatingOf(after)).filter((n) => n !== claimName) };
  }
  const stale = await dropStaleEntries(client, kind, joined.owner, claimName, now, waits);
  return { owner: joined.owner, ahead: joined.ahead.filter((n) => !stale.includes(n)) };
}

/**
 * Removes `names` from the registry of `owner`. Only the names `owner` shows are removed, unless
 * `known` (the caller joined after `owner` was read); nothing to remove, no write.
 */
export async function leave(
  client: KubeClient,
  kind: Resource<Owner>,
  owner: Owner,
  names: readonly string[],
  opts: { known?: boolean } = {},
): Promise<void> {
  const registry = allocatingOf(owner);
  const present = opts.known ? names : names.filter((n) => registry[n] !== undefined);
  if (present.length === 0) return;
  await patchRegistry(client, kind, owner, Object.fromEntries(present.map((n) => [n, null])));
}

/** Attempts of one registry patch before its error goes to the queue. */
const PATCH_ATTEMPTS = 3;

/**
 * A merge patch of registry keys, retried at once on a transient answer (409, 429, 5xx): it sets
 * or removes only its own keys, so sending it again is harmless. Without this a passing error
 * would fail the allocation, and the queue's redelivery backoff would hold back every later
 * claim of the same template or pool (their message group) for seconds.
 */
async function patchRegistry(
  client: KubeClient,
  kind: Resource<Owner>,
  owner: Owner,
  entries: Record<string, string | null>,
): Promise<Owner> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.patch(
        kind,
        owner.metadata.namespace!,
        owner.metadata.name!,
        { status: { allocating: entries } },
        'merge',
        { status: true },
      );
    } catch (e) {
      if (!(e instanceof KubeApiError && e.transient) || attempt >= PATCH_ATTEMPTS) throw e;
    }
  }
}

/**
 * Entries older than STALE_ENTRY_MS whose claim no longer waits (gone, deleting, served, failed:
 * `waits` says) — removed so that they stop inflating ranks. Reads one claim per old entry.
 */
async function dropStaleEntries(
  client: KubeClient,
  kind: Resource<Owner>,
  owner: Owner,
  except: string,
  now: Date,
  waits: (name: string) => Promise<boolean>,
): Promise<string[]> {
  const old = oldEntries(owner, now).filter((n) => n !== except);
  const stale: string[] = [];
  for (const n of old) if (!(await waits(n))) stale.push(n);
  await leave(client, kind, owner, stale);
  return stale;
}

/**
 * One reconcile's view of the registry: the owner (template or pool) as it last read it, and
 * whether the claim joined (then it leaves in the patch that records its allocation).
 */
export interface RegistryState {
  kind: Resource<Owner>;
  owner: Owner;
  joined: boolean;
}

/**
 * Are claims of an earlier burst still in the registry? Then a claim joins even when the backlog
 * fits a page again: ranked by the page, it could aim at the index one of them is creating.
 */
export const burstUnderWay = (state: RegistryState): boolean =>
  Object.keys(allocatingOf(state.owner)).length > 0;

/** Is `claimName` in the registry, as far as this reconcile knows? */
export const inRegistry = (state: RegistryState, claimName: string): boolean =>
  state.joined || allocatingOf(state.owner)[claimName] !== undefined;

/** Leaves the registry on a path that records no allocation (an error, a deleted claim). */
export async function leaveRegistry(client: KubeClient, state: RegistryState, claimName: string) {
  if (inRegistry(state, claimName))
    await leave(client, state.kind, state.owner, [claimName], { known: true });
}

/** `join`, recorded in `state` (undefined when the owner's CRD has no registry). */
export async function joinRegistry(
  client: KubeClient,
  state: RegistryState,
  claimName: string,
  now: Date,
  waits: (owner: Owner, name: string) => Promise<boolean>,
): Promise<string[] | undefined> {
  const owner = state.owner;
  const joined = await join(client, state.kind, owner, claimName, now, (n) => waits(owner, n));
  if (!joined) return undefined;
  state.owner = joined.owner;
  state.joined = true;
  return joined.ahead;
}
