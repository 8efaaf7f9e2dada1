/** `metal3fn apiserver`'s history-window flags: quantities and durations as a real server takes them. */
import { describe, expect, it } from 'vitest';
import { historyOptions, run } from '../../../bin/commands/apiserver.ts';

describe('metal3fn apiserver history flags', () => {
  it('reads bytes as a quantity, events as a count and the interval as a Go duration', () => {
    expect(
      historyOptions({ 'history-bytes': '64Mi', 'history-size': '5000', 'compaction-interval': '90s' }),
    ).toEqual({
      historyBytes: 64 * 1024 * 1024,
      historySize: 5000,
      compactionIntervalMs: 90_000,
    });
    expect(historyOptions({ 'history-bytes': '1G', 'compaction-interval': '0' })).toEqual({
      historyBytes: 1_000_000_000,
      compactionIntervalMs: 0,
    });
    expect(historyOptions({ 'compaction-interval': '1h30m' })).toEqual({ compactionIntervalMs: 5_400_000 });
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
    expect(() => historyOptions(flags)).toThrow(message);
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
