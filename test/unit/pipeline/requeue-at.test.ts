/**
 * requeueAt (ADR 025): a due time the core computed from what it read, carried as is, so passes
 * that decide the same requeue at different moments send messages with one deduplication id.
 */
import { describe, expect, it } from 'vitest';
import { deduplicationId } from '../../../events/envelope.ts';
import { requeueEnvelope } from '../../../shared/queue/requeue.ts';
import { requeueAt } from '../../../shared/reconcile/result.ts';
import { envelope } from '../../helpers/messages.ts';

const DUE = Date.parse('2026-12-07T00:00:30Z');

describe('requeueAt', () => {
  it('names its due time; the delay is what is left of it', () => {
    expect(requeueAt(DUE, DUE - 12_500, 'window')).toEqual({
      kind: 'requeue',
      afterSeconds: 12.5,
      reason: 'window',
      notBefore: DUE,
    });
    expect(requeueAt(DUE, DUE + 1_000, 'late')).toMatchObject({ afterSeconds: 0, notBefore: DUE });
  });

  it('two passes at different moments requeue with one deduplication id; a requeueAfter due at another time does not', () => {
    const related = (cause: string) => envelope({ kind: 'NodeType', reason: 'related', cause });
    const a = requeueEnvelope(related('BareMetalHost/metal3/h-1@5'), 20, DUE - 20_000, DUE);
    const b = requeueEnvelope(related('BareMetalHost/metal3/h-2@9'), 7.25, DUE - 7_250 + 3, DUE);
    expect(a.notBefore).toBe(DUE);
    expect(deduplicationId(a)).toBe(deduplicationId(b));
    const c = requeueEnvelope(related('BareMetalHost/metal3/h-1@5'), 20, DUE - 20_000 + 3);
    expect(deduplicationId(c)).not.toBe(deduplicationId(a));
  });
});
