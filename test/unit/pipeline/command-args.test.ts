import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseCommandArgs } from '../../../shared/runtimes/options.ts';

const HELP = 'usage: metal3fn x [options]\n';
const OPTIONS = { port: { type: 'string' }, verbose: { type: 'boolean' } } as const;

afterEach(() => vi.restoreAllMocks());

describe('parseCommandArgs', () => {
  it('returns the values', () => {
    expect(parseCommandArgs('x', ['--port', '8080', '--verbose'], OPTIONS, HELP)).toEqual({
      port: '8080',
      verbose: true,
    });
  });

  it('prints the help on --help and -h and says exit 0', () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    expect(parseCommandArgs('x', ['--help'], OPTIONS, HELP)).toBe(0);
    expect(parseCommandArgs('x', ['-h'], OPTIONS, HELP)).toBe(0);
    expect(out).toHaveBeenCalledWith(HELP);
  });

  it('names the command and the bad option, prints the help and says exit 2', () => {
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(parseCommandArgs('x', ['--nope'], OPTIONS, HELP)).toBe(2);
    const text = String(err.mock.calls[0]?.[0]);
    expect(text.startsWith("metal3fn x: Unknown option '--nope'")).toBe(true);
    expect(text.endsWith(HELP)).toBe(true);
  });
});
