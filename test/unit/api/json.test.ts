/** jsonEqual: equality as JSON says it, whatever the order of object keys. */
import { describe, expect, it } from 'vitest';
import { jsonEqual } from '../../../shared/api/json.ts';

describe('jsonEqual', () => {
  it.each<[string, unknown, unknown, boolean]>([
    [
      'same keys in another order',
      { a: 1, b: { c: [1, { d: 2, e: 3 }] } },
      { b: { c: [1, { e: 3, d: 2 }] }, a: 1 },
      true,
    ],
    ['a key whose value is undefined is absent', { a: 1, b: undefined }, { a: 1 }, true],
    ['null is not absent inside an object', { a: 1, b: null }, { a: 1 }, false],
    ['undefined and null alone (as JSON.stringify writes them)', undefined, null, true],
    ['arrays keep their order', [1, 2], [2, 1], false],
    ['array against object', [], {}, false],
    ['another value', { a: '1' }, { a: 1 }, false],
    ['an extra key', { a: 1 }, { a: 1, b: 2 }, false],
    ['an extra key on the left', { a: 1, b: 2 }, { a: 1 }, false],
    ['nested difference', { a: { b: { c: 1 } } }, { a: { b: { c: 2 } } }, false],
  ])('%s', (_what, a, b, equal) => {
    expect(jsonEqual(a, b)).toBe(equal);
    expect(jsonEqual(b, a)).toBe(equal);
  });
});
