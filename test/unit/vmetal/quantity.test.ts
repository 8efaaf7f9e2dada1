import { describe, expect, it } from 'vitest';
import { compareQuantity, parseQuantity, quantityOf } from '../../../shared/vmetal/quantity.ts';

/** num/den reduced by hand-written expectations: [text, numerator, denominator]. */
describe('parseQuantity', () => {
  it.each([
    ['4', 4n, 1n],
    ['0', 0n, 1n],
    ['500m', 500n, 1000n],
    ['1.5', 15n, 10n],
    ['.5', 5n, 10n],
    ['2.', 2n, 1n],
    ['-3', -3n, 1n],
    ['+3', 3n, 1n],
    ['16Gi', 17179869184n, 1n],
    ['1.5Gi', 16106127360n, 10n],
    ['1Ki', 1024n, 1n],
    ['1Ei', 1152921504606846976n, 1n],
    ['1k', 1000n, 1n],
    ['2M', 2000000n, 1n],
    ['1G', 1000000000n, 1n],
    ['1E', 1000000000000000000n, 1n],
    ['100n', 100n, 1000000000n],
    ['7u', 7n, 1000000n],
    ['1e3', 1000n, 1n],
    ['1E3', 1000n, 1n],
    ['12e-1', 12n, 10n],
  ])('%s', (text, num, den) => {
    expect(parseQuantity(text)).toEqual({ num, den });
  });

  it.each([
    [''],
    ['Gi'],
    ['1 Gi'],
    [' 1'],
    ['1gi'],
    ['1.2.3'],
    ['abc'],
    ['1Ki1'],
    ['1e'],
    ['1e1000'],
    ['0x10'],
  ])('refuses %j', (text) => {
    expect(parseQuantity(text)).toBeUndefined();
  });
});

describe('compareQuantity', () => {
  it.each([
    ['1', '1000m', 0],
    ['999m', '1', -1],
    ['1Gi', '1073741824', 0],
    ['1G', '1Gi', -1],
    ['1.5Gi', '1536Mi', 0],
    ['2', '1500m', 1],
  ])('%s vs %s -> %i', (a, b, expected) => {
    expect(compareQuantity(parseQuantity(a)!, parseQuantity(b)!)).toBe(expected);
  });

  it('compares with integers', () => {
    expect(compareQuantity(quantityOf(16), parseQuantity('16')!)).toBe(0);
    expect(compareQuantity(quantityOf(15n), parseQuantity('15500m')!)).toBe(-1);
  });
});
