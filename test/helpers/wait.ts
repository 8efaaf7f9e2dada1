/** Polling for a state a test waits on (re-reading it, never sleeping a guessed time). */

/** What a check returns while its state is not reached (`cond && value` gives '', 0 or null too). */
type NotYet = undefined | null | false | '' | 0;

/** Polls `check` until it returns a truthy value; throws naming `what` after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T> | T,
  what = 'condition',
  timeoutMs = 20_000,
): Promise<Exclude<T, NotYet>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as Exclude<T, NotYet>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** eventually() without a description, 10 s by default. */
export const until = <T>(check: () => Promise<T> | T, timeoutMs = 10_000): Promise<Exclude<T, NotYet>> =>
  eventually(check, 'condition', timeoutMs);
