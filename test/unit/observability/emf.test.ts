/**
 * One invocation's metrics written as CloudWatch EMF through a real Powertools Metrics: one line per
 * set of dimension values, counts summed, each duration kept, and never more than 99 values of a
 * metric in a line (Powertools would publish at 100 on its own and drop the dimensions).
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it } from 'vitest';
import { EmfBatch } from '../../../shared/observability/emf.ts';
import { type CapturedOutput, captureOutput, emfLines } from '../../helpers/stdout.ts';

let out: CapturedOutput | undefined;
afterEach(() => out?.restore());

function batch(): EmfBatch {
  const metrics = new Metrics({ namespace: 'Test', serviceName: 'svc' });
  metrics.clearDefaultDimensions();
  metrics.setDefaultDimensions({ function: 'selectHost' });
  return new EmfBatch(metrics);
}

describe('EmfBatch', () => {
  it('writes one line per set of dimension values, with counts summed and durations kept', () => {
    out = captureOutput();
    const b = batch();
    b.count('hits_total', { outcome: 'done' });
    b.count('hits_total', { outcome: 'done' });
    b.count('hits_total', { outcome: 'retry' }, 3);
    b.seconds('took_seconds', {}, 0.25);
    b.seconds('took_seconds', {}, 0.5);
    b.flush();
    const lines = emfLines(out.json());
    expect(lines).toHaveLength(3);
    const metricsOf = (l: Record<string, unknown>) =>
      (l._aws as { CloudWatchMetrics: unknown[] }).CloudWatchMetrics;
    expect(lines.map((l) => ({ ...l, _aws: metricsOf(l) }))).toEqual([
      {
        _aws: [
          {
            Namespace: 'Test',
            Dimensions: [['function', 'outcome']],
            Metrics: [{ Name: 'hits_total', Unit: 'Count' }],
          },
        ],
        function: 'selectHost',
        outcome: 'done',
        hits_total: 2,
      },
      {
        _aws: [
          {
            Namespace: 'Test',
            Dimensions: [['function', 'outcome']],
            Metrics: [{ Name: 'hits_total', Unit: 'Count' }],
          },
        ],
        function: 'selectHost',
        outcome: 'retry',
        hits_total: 3,
      },
      {
        _aws: [
          {
            Namespace: 'Test',
            Dimensions: [['function']],
            Metrics: [{ Name: 'took_seconds', Unit: 'Seconds' }],
          },
        ],
        function: 'selectHost',
        took_seconds: [0.25, 0.5],
      },
    ]);
    // Flushed: nothing is written twice, and an empty batch writes nothing.
    b.flush();
    expect(emfLines(out.json())).toHaveLength(3);
  });

  it('splits 150 durations of one set into lines of at most 99 values, each with its dimensions', () => {
    out = captureOutput();
    const b = batch();
    b.count('req_total', { verb: 'get' }, 150);
    for (let i = 0; i < 150; i++) b.seconds('req_seconds', { verb: 'get' }, i / 1000);
    b.flush();
    const lines = emfLines(out.json());
    expect(lines.map((l) => [l.verb, l.req_total, (l.req_seconds as number[]).length])).toEqual([
      ['get', 150, 99],
      ['get', undefined, 51],
    ]);
    expect(lines.flatMap((l) => l.req_seconds as number[])).toEqual(
      Array.from({ length: 150 }, (_, i) => i / 1000),
    );
  });
});
