import { describe, expect, it } from 'vitest';
import { REQUIRED_HEADLINES, withHeadlines } from '../../bench/headline.ts';

/** Every headline figure under the name a bench reports it by. */
const complete = (): Record<string, number> => ({
  requestsPerMachine: 108,
  writesPerMachine: 22.4,
  writeFloorPerMachine: 22,
  pipelineVsDirectRatio: 0.54,
  addedLatencyP50Ms: 252,
  addedLatencyP99Ms: 268,
  indexConflictsPerAllocation: 0.026,
  claimConflictsPerMachine: 0,
  relay_vs_raw_send_ratio: 0.85,
  coldStartRatioMax: 4.1,
  bundleBytesMax: 892212,
});

describe('withHeadlines', () => {
  it('adds the aliases and finds nothing missing in a complete run', () => {
    const { results, missing } = withHeadlines(complete());
    expect(missing).toEqual([]);
    expect(results.allocationConflictsPerAllocation).toBe(0.026);
    expect(results.hostClaimConflictsPerMachine).toBe(0);
    expect(results.relayVsRawSqsRatio).toBe(0.85);
    // The bench's own names stay.
    expect(results.indexConflictsPerAllocation).toBe(0.026);
    for (const k of REQUIRED_HEADLINES) expect(typeof results[k]).toBe('number');
  });

  it.each([
    ['a bench that failed (its figure absent)', 'coldStartRatioMax', undefined],
    ['a figure that is NaN', 'pipelineVsDirectRatio', Number.NaN],
    ['a figure that is infinite', 'addedLatencyP99Ms', Number.POSITIVE_INFINITY],
    ['an aliased figure absent under its bench name', 'relay_vs_raw_send_ratio', undefined],
  ])('names %s', (_what, key, value) => {
    const r = complete();
    if (value === undefined) delete r[key];
    else r[key] = value;
    const want = key === 'relay_vs_raw_send_ratio' ? 'relayVsRawSqsRatio' : key;
    expect(withHeadlines(r).missing).toEqual([want]);
  });

  it('names every figure of an empty run, in the documented order', () => {
    expect(withHeadlines({}).missing).toEqual([...REQUIRED_HEADLINES]);
  });
});
