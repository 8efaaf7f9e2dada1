/** What the vMetal decision tests share: catching the error a call throws. */
import { VMetalInputError, VMetalWait } from '../../../shared/vmetal/errors.ts';

/** The error `fn` throws (fails the test when it returns). */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

/** The VMetalInputError `fn` throws (anything else fails the test). */
export function inputError(fn: () => unknown): VMetalInputError {
  const e = thrown(fn);
  if (e instanceof VMetalInputError) return e;
  throw e;
}

/** The VMetalWait `fn` throws (anything else fails the test). */
export function waitError(fn: () => unknown): VMetalWait {
  const e = thrown(fn);
  if (e instanceof VMetalWait) return e;
  throw e;
}
