/**
 * Which state a LIST reads, as the real server decides it from `resourceVersion`,
 * `resourceVersionMatch`, `limit` and `continue` (metainternalversion/validation
 * ValidateListOptions, storage/cacher shouldDelegateList, storage/etcd3 store.GetList and
 * resolveGetListRev, storage/continue.go), and the errors it answers when it cannot:
 *
 * - no resourceVersion, or "0": the current state ("0" also ignores `limit`, as the watch cache does);
 * - `Exact`, or a non-zero resourceVersion with `limit` and no match (the legacy exact case): the
 *   state at that revision, rebuilt from the history; 410 "too old" outside the window;
 * - `NotOlderThan`, or a non-zero resourceVersion without `limit`: the current state once the
 *   server has reached that revision (the caller waits up to 3 s first), else 504;
 * - `continue`: the state at the first page's revision (a consistent snapshot); outside the window
 *   410 with a token that continues at the current state, as etcd3's handleCompactedErrorForPaging.
 */
import { ApiError, badRequest, expired, fieldError, invalid, type StatusCause } from './status.ts';
import type { Store } from './store.ts';

export interface ListRvQuery {
  resourceVersion?: string | null | undefined;
  resourceVersionMatch?: string | null | undefined;
  limit?: number | undefined;
  continue?: string | null | undefined;
  sendInitialEvents?: string | null | undefined;
}

export type ListRead =
  /** The current state. */
  | { mode: 'current'; from?: string | undefined; minRv?: number; ignoreLimit?: boolean }
  /** The state at `rv` (from the history). */
  | { mode: 'exact'; rv: number; from?: string | undefined; continued: boolean };

/** How long a "not older than" read waits for the server to catch up (cacher's blockTimeout). */
export const FRESHNESS_WAIT_MS = 3000;

const LIST_OPTIONS = { kind: 'ListOptions', group: 'meta.k8s.io' };

/** 422 for contradictory list options, as ValidateListOptions words them. */
export function validateListOptions(q: ListRvQuery): void {
  const causes: StatusCause[] = [];
  const match = q.resourceVersionMatch ?? '';
  if (match) {
    if (!q.resourceVersion) {
      causes.push(
        fieldError(
          'Forbidden',
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
      );
    }
    if (q.continue) {
      causes.push(
        fieldError(
          'Forbidden',
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden when continue is provided',
        ),
      );
    }
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      causes.push(
        fieldError(
          'NotSupported',
          'resourceVersionMatch',
          'supported values: "Exact", "NotOlderThan", ""',
          match,
        ),
      );
    }
    if (match === 'Exact' && q.resourceVersion === '0') {
      causes.push(
        fieldError(
          'Forbidden',
          'resourceVersionMatch',
          'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
      );
    }
  }
  if (q.sendInitialEvents !== null && q.sendInitialEvents !== undefined) {
    causes.push(fieldError('Forbidden', 'sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  if (causes.length) throw invalid(LIST_OPTIONS, '', causes);
}

function parseRv(v: string): number {
  if (!/^\d+$/.test(v))
    throw badRequest(`invalid resource version: strconv.ParseUint: parsing "${v}": invalid syntax`);
  return Number(v);
}

/** Decides what to read; `prefix` is the listing's key prefix (`ns/` or '' for all namespaces). */
export function resolveListRead(q: ListRvQuery, prefix: string): ListRead {
  validateListOptions(q);
  const rvParam = q.resourceVersion ?? '';
  if (q.continue) {
    const tok = decodeContinue(q.continue, prefix);
    if (rvParam !== '' && rvParam !== '0') {
      throw badRequest('specifying resource version is not allowed when using continue');
    }
    // rv -1: a token handed out with a 410, continuing at the current state.
    if (tok.rv < 0) return { mode: 'current', from: tok.from };
    return { mode: 'exact', rv: tok.rv, from: tok.from, continued: true };
  }
  if (rvParam === '') return { mode: 'current' };
  const rv = parseRv(rvParam);
  const match = q.resourceVersionMatch ?? '';
  if (rv === 0) return { mode: 'current', ignoreLimit: true };
  if (match === 'Exact' || (match === '' && q.limit !== undefined && q.limit > 0)) {
    return { mode: 'exact', rv, continued: false };
  }
  return { mode: 'current', minRv: rv };
}

/** 410 for an exact read the window no longer covers (etcd3 interpretListError). */
export function tooOldForList(read: Extract<ListRead, { mode: 'exact' }>, prefix: string): ApiError {
  if (!read.continued) return expired('The resourceVersion for the provided list is too old.');
  const err = expired(
    'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
  );
  (err.body as { metadata: Record<string, unknown> }).metadata = {
    continue: encodeContinue(read.from ?? prefix, prefix, -1),
  };
  return err;
}

/** An exact read of a revision the server has not reached: etcd's error, passed through as the real server does. */
export const futureRevision = (): ApiError =>
  new ApiError(500, '', 'etcdserver: mvcc: required revision is a future revision');

/** 504 for a "not older than" read the server did not catch up with (storage.NewTooLargeResourceVersionError). */
export const tooLargeResourceVersion = (wanted: number, current: number): ApiError =>
  new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${wanted}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });

/** The token format of storage/continue.go: base64url (no padding) of {"v","rv","start"}; start is inclusive. */
export function encodeContinue(startKey: string, prefix: string, rv: number): string {
  const start = startKey.startsWith(prefix) ? startKey.slice(prefix.length) : startKey;
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64url');
}

/** The continue token after `lastKey`: the next key in order is `lastKey` + NUL. */
export const continueAfter = (lastKey: string, prefix: string, rv: number): string =>
  encodeContinue(`${lastKey}\u0000`, prefix, rv);

function decodeContinue(token: string, prefix: string): { rv: number; from: string } {
  const bad = (why: string) => badRequest(`invalid continue token: continue key is not valid${why}`);
  let t: any;
  try {
    if (!/^[A-Za-z0-9_-]*$/.test(token)) throw new Error('illegal base64 data');
    t = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch (e) {
    throw bad(`: ${(e as Error).message}`);
  }
  if (!t || typeof t !== 'object' || t.v !== 'meta.k8s.io/v1') {
    throw bad(`: server does not recognize this encoded version ${t?.v ?? ''}`);
  }
  if (!Number.isInteger(t.rv) || t.rv === 0)
    throw bad(': incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof t.start !== 'string' || t.start === '')
    throw bad(': encoded start key empty (version meta.k8s.io/v1)');
  // path.Clean must leave the key unchanged (no "..", "//", "./").
  const key = `/${t.start}`;
  if (/\/\.\.?(\/|$)|\/\/|(.)\/$/.test(key)) throw bad(`: ${t.start}`);
  return { rv: t.rv, from: `${prefix}${t.start}` };
}

/**
 * A "not older than" read of a revision the server has not reached waits up to 3 s for it, as
 * the watch cache does (waitUntilFreshAndBlock), then answers 504. Used by GET and LIST.
 */
export async function awaitFreshness(store: Store, minRvParam: string | null | undefined): Promise<void> {
  if (!minRvParam || minRvParam === '0' || !/^\d+$/.test(minRvParam)) return;
  const wanted = Number(minRvParam);
  if (wanted <= store.rv) return;
  if (!(await store.waitForRv(wanted, FRESHNESS_WAIT_MS))) throw tooLargeResourceVersion(wanted, store.rv);
}

/** The revision a LIST must wait for before it is answered (undefined: none). */
export function listFreshnessTarget(q: ListRvQuery): string | undefined {
  if (q.continue || !q.resourceVersion || q.resourceVersion === '0') return undefined;
  const match = q.resourceVersionMatch ?? '';
  if (match === 'Exact' || (match === '' && q.limit !== undefined && q.limit > 0)) return undefined;
  return q.resourceVersion;
}
