/**
 * Our engine against Go itself: every case of test/fixtures/gotemplate/cases/*.yaml rendered by
 * renderGoTemplate must give the output (or the error text) that Go's text/template + sprig gave,
 * as recorded in expected.json by the reference program (npm run gen:gotemplate-fixtures).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXPECTED_FILE, type Expected, loadCases } from '../../../scripts/gen-gotemplate-fixtures.ts';
import { decodeValuesJSON, renderGoTemplate, TemplateError } from '../../../shared/gotemplate/index.ts';

// The reference runs Go with TZ=UTC: "Local" dates must mean the same here.
process.env.TZ = 'UTC';

const cases = loadCases();
const expected = JSON.parse(readFileSync(EXPECTED_FILE, 'utf8')) as Record<string, Expected>;

function render(template: string, values: string): { output: string } | { error: string } {
  try {
    return { output: renderGoTemplate('t', template, decodeValuesJSON(values)) };
  } catch (e) {
    if (e instanceof TemplateError) return { error: e.message };
    throw e;
  }
}

describe('Go template fixtures', () => {
  it('has an expected result from Go for every case, and no stale ones', () => {
    expect(Object.keys(expected).sort()).toEqual(cases.map((c) => c.name).sort());
    expect(cases.length).toBeGreaterThan(400);
  });

  for (const c of cases) {
    it(c.name, () => {
      const exp = expected[c.name]!;
      const got = render(c.template, c.values);
      if ('match' in exp) {
        expect(got).toHaveProperty('output');
        expect((got as { output: string }).output).toMatch(new RegExp(exp.match));
      } else {
        expect(got).toEqual(exp);
      }
    });
  }
});
