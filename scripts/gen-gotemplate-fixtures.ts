/**
 * Expected outputs of the Go template fixtures, produced by Go itself:
 * test/fixtures/gotemplate/cases/*.yaml → the reference program (Go's text/template + sprig, run
 * in GOPATH mode with Debian's golang-go and golang-github-masterminds-sprig-dev) →
 * test/fixtures/gotemplate/expected.json.
 *
 *   npm run gen:gotemplate-fixtures            regenerate expected.json
 *   npm run gen:gotemplate-fixtures -- --check exit 1 when the committed file is not current
 *
 * A case is {n: name, t: template, v: values JSON (default {}), match: regex (optional)}. With
 * `match`, the output is random (uuidv4, randAlpha…): Go's output must match the regex and the
 * fixture records the regex instead of the output.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const FIXTURES = join(ROOT, 'test/fixtures/gotemplate');
export const EXPECTED_FILE = join(FIXTURES, 'expected.json');
const SPRIG = '/usr/share/gocode/src/github.com/Masterminds/sprig';

export interface Case {
  name: string;
  template: string;
  values: string;
  match?: string;
}

export type Expected = { output: string } | { error: string } | { match: string };

/** Every case of cases/*.yaml, named `<file>/<n>`. */
export function loadCases(): Case[] {
  const dir = join(FIXTURES, 'cases');
  const out: Case[] = [];
  const seen = new Set<string>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const group = file.replace(/\.yaml$/, '');
    const items = parse(readFileSync(join(dir, file), 'utf8')) as {
      n: string;
      t: string;
      v?: string;
      match?: string;
    }[];
    for (const it of items) {
      const name = `${group}/${it.n}`;
      if (seen.has(name)) throw new Error(`duplicate case ${name}`);
      seen.add(name);
      out.push({
        name,
        template: String(it.t),
        values: it.v ?? '{}',
        ...(it.match ? { match: it.match } : {}),
      });
    }
  }
  return out;
}

/** Whether Go and sprig (Debian's packages) are on this machine. */
export function goAvailable(): boolean {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  return go.status === 0 && existsSync(SPRIG);
}

/** Runs the reference program on the cases. */
export function runReference(cases: Case[]): Record<string, Expected> {
  const stdout = execFileSync('go', ['run', join(FIXTURES, 'reference/main.go')], {
    cwd: ROOT,
    input: JSON.stringify(cases.map(({ name, template, values }) => ({ name, template, values }))),
    env: { ...process.env, GOPATH: '/usr/share/gocode', GO111MODULE: 'off', TZ: 'UTC' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const results = JSON.parse(stdout) as { name: string; output?: string; error?: string }[];
  const expected: Record<string, Expected> = {};
  results.forEach((r, i) => {
    const c = cases[i]!;
    if (c.match !== undefined) {
      if (r.output === undefined || !new RegExp(c.match).test(r.output)) {
        throw new Error(
          `case ${c.name}: Go's output ${JSON.stringify(r.output ?? r.error)} does not match ${c.match}`,
        );
      }
      expected[r.name] = { match: c.match };
    } else expected[r.name] = r.error !== undefined ? { error: r.error } : { output: r.output ?? '' };
  });
  return expected;
}

export const serialize = (e: Record<string, Expected>) => `${JSON.stringify(e, null, 1)}\n`;

function main(argv: string[]): number {
  if (!goAvailable()) {
    process.stderr.write(
      'gen:gotemplate-fixtures needs Go and sprig: apt-get install golang-go golang-github-masterminds-sprig-dev\n',
    );
    return 2;
  }
  const text = serialize(runReference(loadCases()));
  if (argv.includes('--check')) {
    const current = existsSync(EXPECTED_FILE) ? readFileSync(EXPECTED_FILE, 'utf8') : '';
    if (current !== text) {
      process.stderr.write(
        'test/fixtures/gotemplate/expected.json is not current: run npm run gen:gotemplate-fixtures\n',
      );
      return 1;
    }
    return 0;
  }
  writeFileSync(EXPECTED_FILE, text);
  process.stderr.write(`wrote ${EXPECTED_FILE}\n`);
  return 0;
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2));
