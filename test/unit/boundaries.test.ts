/**
 * The import boundaries of ADR 013 are enforced by .dependency-cruiser.cjs (run by `npm run lint`).
 * These tests prove the rule set bites: a fixture tree with one forbidden import of each kind is
 * reported exactly, the allowed exception is not; and the build's bundle check names local modules.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { localModulesIn } from '../../scripts/build.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../fixtures/boundaries/', import.meta.url));
const CLI = `${ROOT}node_modules/dependency-cruiser/bin/dependency-cruiser.mjs`;

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

function cruise(cwd: string): Violation[] {
  const args = [CLI, '--config', `${ROOT}.dependency-cruiser.cjs`, '--output-type', 'json'];
  let out: string;
  try {
    out = execFileSync(process.execPath, [...args, 'functions', 'shared', 'events', 'bin'], {
      cwd,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (e) {
    // depcruise exits non-zero when it finds violations; the report is still on stdout.
    out = (e as { stdout: string }).stdout;
  }
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

describe('import boundaries (ADR 013)', () => {
  it('report each forbidden import of the fixture, and nothing else', () => {
    const found = cruise(FIXTURE)
      .map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)
      .sort();
    expect(found).toEqual([
      'function-imports-another-function: functions/a/core.ts -> functions/b/core.ts',
      'function-imports-outside-shared-and-events: functions/a/core.ts -> bin/x.ts',
      'product-imports-local-or-test: bin/x.ts -> infra/local/sim.ts',
      'product-imports-local-or-test: shared/u.ts -> test/t.ts',
      'shared-imports-upward: events/e.ts -> bin/x.ts',
      'shared-imports-upward: shared/s.ts -> functions/b/core.ts',
      'shared-imports-upward: shared/u.ts -> test/t.ts',
    ]);
  });

  it('hold on the repository itself', () => {
    expect(cruise(ROOT)).toEqual([]);
  });

  it('the build names the infra/local and test modules a deployed bundle would carry', () => {
    expect(
      localModulesIn({
        'shared/kube/client.ts': {},
        'infra/local/apiserver/index.ts': {},
        'node_modules/zod/index.js': {},
        'test/helpers/cluster.ts': {},
        'infra/crds/x.yaml': {},
      }),
    ).toEqual(['infra/local/apiserver/index.ts', 'test/helpers/cluster.ts']);
  });
});
