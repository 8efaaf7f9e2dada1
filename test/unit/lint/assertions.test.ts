/**
 * The type-aware lint (eslint.config.js, ADR 016) reports every assertion that bypasses a schema:
 * the fixture carries one line per forbidden form, each marked with the rule that must report it,
 * and the allowed forms, which must not be reported. Linted with the project's own configuration.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const FIXTURE = join(ROOT, 'test/fixtures/lint/forbidden-assertions.ts');

/** line -> rule the fixture expects there; an inline disable comment is refused itself (noInlineConfig). */
function expected(): Map<number, string> {
  const out = new Map<number, string>();
  readFileSync(FIXTURE, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      const m = /\/\/ expect: ([a-z-]+)$/.exec(line);
      if (m) out.set(i + 1, `@typescript-eslint/${m[1]}`);
      if (line.startsWith('// eslint-disable')) out.set(i + 1, 'noInlineConfig');
    });
  return out;
}

describe('no assertion that bypasses a schema (npm run lint)', () => {
  it('reports each forbidden form on its line, and nothing else', { timeout: 120_000 }, async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const [result] = await eslint.lintFiles([FIXTURE]);
    const reported = new Map<number, string[]>();
    for (const m of result!.messages) {
      const what = m.ruleId ?? (/noInlineConfig/.test(m.message) ? 'noInlineConfig' : m.message);
      reported.set(m.line, [...(reported.get(m.line) ?? []), what]);
    }
    const want = expected();
    expect(want.size).toBeGreaterThanOrEqual(11);
    for (const [line, rule] of want) expect(reported.get(line), `line ${line}`).toContain(rule);
    const unexpected = [...reported.keys()].filter((line) => !want.has(line));
    expect(unexpected, 'lines reported that the fixture allows').toEqual([]);
  });

  it('lints functions/ and shared/ with those rules (the configuration applies there)', async () => {
    const eslint = new ESLint({ cwd: ROOT });
    for (const file of ['functions/select-host/machine.ts', 'shared/kube/client.ts']) {
      const config = await eslint.calculateConfigForFile(join(ROOT, file));
      expect(config.rules['@typescript-eslint/no-unsafe-type-assertion'], file).toEqual([2]);
      expect(config.rules['@typescript-eslint/no-explicit-any'], file).toEqual([2]);
    }
  });
});
