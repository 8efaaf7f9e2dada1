/**
 * The JSON lines a piece of code writes to stdout and stderr (Lambda's runtime sends both to
 * CloudWatch Logs, which takes EMF from them), captured while it runs. Powertools writes through a
 * Console of its own on process.stdout / process.stderr (warnings and errors on stderr).
 */
import { vi } from 'vitest';

export interface CapturedOutput {
  /** Every line written so far, on either stream, that parses as a JSON object, in order. */
  json(): Record<string, unknown>[];
  /** Everything written so far. */
  text(): string;
  restore(): void;
}

export function captureOutput(): CapturedOutput {
  let text = '';
  const write = (chunk: string | Uint8Array) => {
    text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  };
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation(write),
    vi.spyOn(process.stderr, 'write').mockImplementation(write),
  ];
  return {
    json: () =>
      text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    text: () => text,
    restore: () => {
      for (const s of spies) s.mockRestore();
    },
  };
}

/** The EMF lines among them (those with an `_aws` blob). */
export const emfLines = (lines: Record<string, unknown>[]) => lines.filter((l) => '_aws' in l);
