/**
 * The redelivery rule of docs/adr/017-retry-backoff.md, as numbers: the schedule, the wait of a
 * failed group, and why 12 receives outlast an API outage of 15 minutes.
 */
import { describe, expect, it } from 'vitest';
import {
  groupBackoffSeconds,
  MAX_RECEIVE_COUNT,
  receiveCountOf,
  retryBackoffSeconds,
  secondsBeforeReceive,
} from '../../../shared/queue/redelivery.ts';

describe('retry backoff', () => {
  it('waits 1, 2, 4 … seconds by receive count, at most 300', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 20].map(retryBackoffSeconds)).toEqual([
      1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300,
    ]);
  });

  it('a failed group waits by the highest receive count among its held messages', () => {
    expect(groupBackoffSeconds([1])).toBe(1);
    expect(groupBackoffSeconds([1, 3, 2])).toBe(4);
    expect(groupBackoffSeconds([])).toBe(1);
  });

  it('reads the receive count attribute, a missing or odd one as the first', () => {
    expect(receiveCountOf('7')).toBe(7);
    expect(receiveCountOf(undefined)).toBe(1);
    expect(receiveCountOf('x')).toBe(1);
  });
});

describe('the receive limit against an outage (ADR 017)', () => {
  it('a message reaches its n-th receive no sooner than the backoffs before it add up to', () => {
    expect([1, 2, 3, 10, 11, 12, 13].map((n) => secondsBeforeReceive(n))).toEqual([
      0, 1, 3, 511, 811, 1111, 1411,
    ]);
  });

  it('12 receives: the last comes no sooner than 1,111 s after the first, so 15 minutes of failures dead-letter nothing', () => {
    expect(MAX_RECEIVE_COUNT).toBe(12);
    // Every receive within a 900 s outage that began at (or after) the first receive fails:
    const failing = Array.from({ length: 20 }, (_, i) => i + 1).filter((n) => secondsBeforeReceive(n) < 900);
    expect(failing).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    // … fewer than the limit: the 12th receive, at ≥ 1,111 s, finds the API back.
    expect(failing.length).toBeLessThan(MAX_RECEIVE_COUNT);
    expect(secondsBeforeReceive(MAX_RECEIVE_COUNT) - 900).toBe(211);
  });
});
