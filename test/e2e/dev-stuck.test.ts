/**
 * When the run cannot reach its goal, `metal3fn dev` says what is stuck and why and exits non-zero.
 * Here: the user's manifests bring machines but no BareMetalHost, so no machine can get a host.
 */
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runMetal3fn } from '../helpers/cli.ts';

const root = new URL('../../', import.meta.url).pathname;

it('exits 1 naming the stuck machines and their conditions', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'metal3fn-stuck-'));
  await cp(join(root, 'infra/local/sample'), dir, { recursive: true });
  const cp10 = join(dir, '10-controlplane.yaml');
  await writeFile(cp10, (await readFile(cp10, 'utf8')).replace('replicas: 3', 'replicas: 1'));
  const md = join(dir, '20-workers.yaml');
  await writeFile(md, (await readFile(md, 'utf8')).replace('replicas: 2', 'replicas: 0'));

  const { code, out } = await runMetal3fn(['dev', '--manifests', dir, '--timeout', '6']);
  expect(code).toBe(1);
  expect(out).toContain('Not every machine reached Ready in time (0 of 1). Stuck:');
  expect(out).toMatch(/metal3\/m3cluster-controlplane-\w+ \(waiting for host\): .*no available host/i);
  expect(out).toContain('FAILED: machines not Ready within 6s');
}, 60_000);
