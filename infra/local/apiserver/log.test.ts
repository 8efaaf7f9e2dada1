/** The request log keeps the most recent entries, oldest first, within its bound; counters count all. */
import { describe, expect, it } from 'vitest';
import { RequestLog, type RequestLogEntry } from './log.ts';

const entry = (i: number): RequestLogEntry => ({
  verb: i % 2 ? 'get' : 'list',
  resource: 'configmaps',
  name: `c${i}`,
  method: 'GET',
  path: '/api/v1/configmaps',
  user: 'u',
  status: 200,
  ms: 1,
});

describe('RequestLog', () => {
  it('keeps the last `max` entries in order whatever the number recorded', () => {
    const log = new RequestLog(3);
    for (let n = 1; n <= 10; n++) {
      log.record(entry(n));
      const names = log.entries.map((e) => e.name);
      expect(names).toEqual(
        Array.from({ length: Math.min(n, 3) }, (_, i) => `c${n - Math.min(n, 3) + i + 1}`),
      );
    }
  });

  it('after many bulk trims, still the last entries, and every request counted', () => {
    const log = new RequestLog(4);
    for (let i = 0; i < 1001; i++) log.record(entry(i));
    expect(log.count('get') + log.count('list')).toBe(1001);
    expect(log.entries.map((e) => e.name)).toEqual(['c997', 'c998', 'c999', 'c1000']);
  });
});
