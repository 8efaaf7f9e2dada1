/** `metal3fn apiserver`'s memory flags: the history window's sizing as a real server takes it, and the heap's growth. */
import { describe, expect, it } from 'vitest';
import { heapGrowthPercent, historyOptions, run } from '../../../bin/commands/apiserver.ts';
import { parseDuration } from '../../../shared/gotemplate/gotime.ts';

describe('metal3fn apiserver history flags', () => {
  it('reads bytes as a quantity, events as a count and the interval as a Go duration', () => {
    expect(
      historyOptions(
        { 'history-bytes': '64Mi', 'history-size': '5000', 'compaction-interval': '90s' },
        parseDuration,
      ),
    ).toEqual({
      historyBytes: 64 * 1024 * 1024,
      historySize: 5000,
      compactionIntervalMs: 90_000,
    });
    expect(historyOptions({ 'history-bytes': '1G', 'compaction-interval': '0' }, parseDuration)).toEqual({
      historyBytes: 1_000_000_000,
      compactionIntervalMs: 0,
    });
    expect(historyOptions({ 'compaction-interval': '1h30m' }, parseDuration)).toEqual({
      compactionIntervalMs: 5_400_000,
    });
    // Unset flags leave the server's defaults.
    expect(historyOptions({})).toEqual({});
  });

  it.each([
    [{ 'history-bytes': '0' }, /--history-bytes 0/],
    [{ 'history-bytes': '-5Mi' }, /--history-bytes -5Mi/],
    [{ 'history-bytes': 'lots' }, /--history-bytes lots/],
    [{ 'history-bytes': '500m' }, /--history-bytes 500m/],
    [{ 'history-size': '0' }, /--history-size 0/],
    [{ 'history-size': '1.5' }, /--history-size 1.5/],
    [{ 'compaction-interval': '5' }, /--compaction-interval 5/],
    [{ 'compaction-interval': '-1m' }, /--compaction-interval -1m/],
  ])('refuses %o', (flags, message) => {
    expect(() => historyOptions(flags, parseDuration)).toThrow(message);
  });

  it('exits 2 with the flag named before starting anything', async () => {
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((s: string) => {
      written.push(s);
      return true;
    }) as typeof process.stderr.write;
    try {
      expect(await run(['--port', '0', '--history-bytes', 'lots'])).toBe(2);
    } finally {
      process.stderr.write = write;
    }
    expect(written.join('')).toMatch(/^metal3fn apiserver: invalid --history-bytes lots/);
  });
});

describe('metal3fn apiserver --heap-growth-percent', () => {
  it("defaults to 20 (ADR 036); 0 leaves V8's heuristics", () => {
    expect(heapGrowthPercent(undefined)).toBe(20);
    expect(heapGrowthPercent('100')).toBe(100);
    expect(heapGrowthPercent('0')).toBe(0);
  });

  it.each(['-1', '1.5', 'half', ''])('refuses %j', (v) => {
    expect(() => heapGrowthPercent(v)).toThrow(`invalid --heap-growth-percent ${v}`);
  });
});
