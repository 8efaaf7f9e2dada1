/** Polling for a state a test waits on (re-reading it, never sleeping a guessed time). */

/** Polls `check` until it returns a value (not undefined or false); throws naming `what` after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T> | T,
  what = 'condition',
  timeoutMs = 20_000,
): Promise<Exclude<T, undefined | false>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v as Exclude<T, undefined | false>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** eventually() without a description, 10 s by default. */
export const until = <T>(
  check: () => Promise<T> | T,
  timeoutMs = 10_000,
): Promise<Exclude<T, undefined | false>> => eventually(check, 'condition', timeoutMs);
