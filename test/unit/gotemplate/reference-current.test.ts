/**
 * The committed expected.json is what Go produces today: the reference program is run on the cases
 * when Go and sprig are installed. Without them it skips saying so, except under CI=true, where
 * .ci/run installs them and a skip would hide stale fixtures.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  EXPECTED_FILE,
  goAvailable,
  loadCases,
  runReference,
  serialize,
} from '../../../scripts/gen-gotemplate-fixtures.ts';

const haveGo = goAvailable();
const inCI = process.env.CI === 'true';

describe('Go reference fixtures', () => {
  it.runIf(!haveGo && inCI)(
    'CI has Go and sprig (.ci/run installs golang-go golang-github-masterminds-sprig-dev)',
    () => {
      expect.fail('go or /usr/share/gocode/src/github.com/Masterminds/sprig missing under CI=true');
    },
  );

  it.skipIf(!haveGo)(
    `expected.json is current with Go's output${haveGo ? '' : ' (skipped: Go and sprig are not installed; apt-get install golang-go golang-github-masterminds-sprig-dev)'}`,
    () => {
      const fresh = serialize(runReference(loadCases()));
      expect(readFileSync(EXPECTED_FILE, 'utf8')).toBe(fresh);
    },
    120_000,
  );
});
