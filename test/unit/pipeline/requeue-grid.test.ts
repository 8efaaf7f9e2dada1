/**
 * ADR 037: a requeue-after's due time lies on a grid of a quarter of its delay (at most 15 s), and
 * a requeue's deduplication id is its key, function and due time: the requeues that several passes
 * of one key decide close together are one message, whichever version or attempt decided them.
 */
import { describe, expect, it } from 'vitest';
import { deduplicationId } from '../../../events/envelope.ts';
import { MAX_REQUEUE_GRID_MS, requeueDue, requeueEnvelope } from '../../../shared/queue/requeue.ts';
import { envelope } from '../../helpers/messages.ts';

/** A time on the 15 s grid (and so on every finer one used below). */
const T = Date.parse('2026-12-07T10:00:00Z');

describe('requeueDue', () => {
  it.each([
    // afterSeconds, decided at, due
    [60, T, T + 60_000],
    [60, T + 1, T + 75_000],
    [60, T + 14_999, T + 75_000],
    [60, T + 15_000, T + 75_000],
    [60, T + 15_001, T + 90_000],
    [600, T + 1, T + 615_000], // the step stays 15 s for long delays
    [20, T + 1, T + 25_000], // 5 s step
    [1, T + 1, T + 1_250], // 250 ms step
    [0, T + 7, T + 7], // no delay, no grid
  ])('after %s s decided at T+%#: due as the grid says', (after, now, due) => {
    expect(requeueDue(after, now)).toBe(due);
  });

  it('never earlier than asked, later by less than one step', () => {
    for (const after of [0.5, 1, 7, 60, 61, 900])
      for (let now = T; now < T + 40_000; now += 997) {
        const due = requeueDue(after, now);
        const step = Math.min(MAX_REQUEUE_GRID_MS, Math.floor((after * 1000) / 4));
        expect(due).toBeGreaterThanOrEqual(now + after * 1000);
        expect(due - (now + after * 1000)).toBeLessThan(Math.max(step, 1));
      }
  });
});

describe('a requeue’s deduplication id', () => {
  it('is one for passes of one key within a grid step, whatever version, attempt or cause decided them', () => {
    const a = requeueEnvelope(envelope({ resourceVersion: '5', reason: 'added' }), 60, T + 1_000);
    const b = requeueEnvelope(
      envelope({ resourceVersion: '9', reason: 'related', cause: 'BareMetalHost/metal3/h-1@4', attempt: 2 }),
      60,
      T + 9_000,
    );
    expect(a.notBefore).toBe(b.notBefore);
    expect(deduplicationId(a)).toBe(deduplicationId(b));
  });

  it('differs for another due time, function, object (uid) or kind', () => {
    const base = requeueEnvelope(envelope(), 60, T + 1_000);
    const others = [
      requeueEnvelope(envelope(), 60, T + 16_000),
      requeueEnvelope(envelope({ function: 'resolveProviderID' }), 60, T + 1_000),
      requeueEnvelope(envelope({ uid: 'uid-other' }), 60, T + 1_000),
      requeueEnvelope(envelope({ uid: undefined, kind: 'NodeClaim' }), 60, T + 1_000),
    ];
    const ids = new Set([base, ...others].map(deduplicationId));
    expect(ids.size).toBe(5);
  });
});
