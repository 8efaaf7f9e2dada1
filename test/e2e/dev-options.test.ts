/**
 * `metal3fn dev` with options that cannot run: exit 2 with one message form, before anything
 * starts (no API server, no queue, no file).
 */
import { expect, it } from 'vitest';
import { runMetal3fn } from '../helpers/cli.ts';

it.each([
  [['--machines', '0'], "metal3fn dev: --machines must be a whole number ≥ 1, not '0'"],
  [['--machines', 'abc'], "metal3fn dev: --machines must be a whole number ≥ 1, not 'abc'"],
  [
    ['--machines', '3', '--hosts', '2'],
    "metal3fn dev: --hosts must be a whole number ≥ --machines (3), not '2'",
  ],
  [['--rbac', 'on'], "metal3fn dev: --rbac must be observe or enforce, not 'on'"],
])('dev %j exits 2 before starting anything', async (args, message) => {
  const { code, out } = await runMetal3fn(['dev', ...args]);
  expect(out.trim()).toBe(message);
  expect(code).toBe(2);
});
