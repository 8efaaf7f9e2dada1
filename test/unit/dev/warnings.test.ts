/** bin/warnings.ts: the SQLite ExperimentalWarning is dropped by name; every other warning still reaches stderr. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isSqliteExperimentalWarning } from '../../../bin/warnings.ts';

const module = new URL('../../../bin/warnings.ts', import.meta.url).pathname;

describe('isSqliteExperimentalWarning', () => {
  it.each([
    ['SQLite is an experimental feature and might change at any time', 'ExperimentalWarning', true],
    ['SQLite is an experimental feature and might change at any time', { type: 'ExperimentalWarning' }, true],
    ['SQLite is an experimental feature and might change at any time', 'DeprecationWarning', false],
    ['WebSocket is an experimental feature', 'ExperimentalWarning', false],
    ['SQLite is an experimental feature', undefined, false],
  ])('%s (%j) -> %s', (message, type, dropped) => {
    expect(isSqliteExperimentalWarning(message, type)).toBe(dropped);
  });

  it('matches an Error by its name', () => {
    const e = new Error('SQLite is an experimental feature and might change at any time');
    e.name = 'ExperimentalWarning';
    expect(isSqliteExperimentalWarning(e, undefined)).toBe(true);
  });
});

describe('filterSqliteExperimentalWarning in a Node process', () => {
  it('loads node:sqlite silently and still prints the other warnings', () => {
    const script = `
      const { filterSqliteExperimentalWarning } = await import(${JSON.stringify(module)});
      filterSqliteExperimentalWarning();
      await import('node:sqlite');
      process.emitWarning('an unrelated deprecation', 'DeprecationWarning');
      process.emitWarning('Another feature is an experimental feature', 'ExperimentalWarning');
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).not.toContain('SQLite');
    expect(r.stderr).toContain('DeprecationWarning: an unrelated deprecation');
    expect(r.stderr).toContain('ExperimentalWarning: Another feature is an experimental feature');
  });
});
