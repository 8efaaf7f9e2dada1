/**
 * The built CLI bundle runs on its own: built by scripts/build.ts into a temporary folder (no
 * prior `npm run build` needed), then copied elsewhere outside the repository, so no path into
 * the checkout can resolve. `dev` reaches Ready and `apiserver --crds` serves every CRD from the
 * bundle's own assets/. The only thing it finds outside its folder is fauxqs (a devDependency,
 * external to the bundle), through a node_modules beside it, as the README's "Bundles" says.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCrdFiles } from '../../infra/local/apiserver/crds.ts';
import { ASSETS } from '../../infra/local/assets.ts';

const root = new URL('../../', import.meta.url).pathname;

let dir: string;
/** The folder the bundle runs from: cli/ (metal3fn.mjs, assets/) and node_modules/fauxqs. */
let app: string;
let bundle: string;

function env(): NodeJS.ProcessEnv {
  // Always the embedded SQS server, so that loading fauxqs from the bundle is what is tested.
  const e: NodeJS.ProcessEnv = { ...process.env, CI: 'true', SQS_TEST_BACKEND: 'fauxqs' };
  delete e.AWS_ENDPOINT_URL_SQS;
  return e;
}

function collect(child: ChildProcess): { text: () => string } {
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  return { text: () => out };
}

function run(cmd: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, cmd, { cwd, env: env() });
    const out = collect(child);
    child.on('exit', (code) => resolve({ code, out: out.text() }));
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'metal3fn-bundle-'));
  const built = join(dir, 'build');
  const b = await run(['scripts/build.ts', '--out', built, 'cli'], root);
  expect(b.out).not.toContain('build failed');
  expect(b.code).toBe(0);
  // Moved after the build: nothing may depend on where it was built.
  app = join(dir, 'app');
  await cp(join(built, 'cli'), join(app, 'cli'), { recursive: true });
  await rm(built, { recursive: true, force: true });
  await mkdir(join(app, 'node_modules'));
  await symlink(join(root, 'node_modules/fauxqs'), join(app, 'node_modules/fauxqs'), 'dir');
  bundle = join(app, 'cli/metal3fn.mjs');
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the CLI bundle, outside the repository', () => {
  it('carries every data file it reads, as in the repository, and no path into it', async () => {
    for (const a of ASSETS) {
      const copy = join(app, 'cli/assets', a);
      if (/\.ya?ml$/.test(a))
        expect(await readFile(copy, 'utf8'), a).toBe(await readFile(join(root, a), 'utf8'));
      else expect((await readdir(copy)).sort(), a).toEqual((await readdir(join(root, a))).sort());
    }
    expect(await readFile(bundle, 'utf8')).not.toContain(root);
  });

  it('metal3fn dev brings the sample to Ready', async () => {
    const { code, out } = await run([bundle, 'dev', '--machines', '2', '--timeout', '120'], app);
    expect(out).toContain('OK: every machine Ready');
    expect(out).toContain('Ready (host ');
    expect(code).toBe(0);
  }, 150_000);

  it('metal3fn apiserver --crds serves every project CRD, and stops on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [bundle, 'apiserver', '--crds', '--port', '0', '--kubeconfig-out', join(dir, 'kubeconfig')],
      { cwd: app, env: env() },
    );
    const out = collect(child);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not listening after 30 s:\n${out.text()}`)), 30_000);
        const check = () => {
          const m = /API server listening on (\S+)/.exec(out.text());
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        };
        child.stdout!.on('data', check);
        child.on('exit', () => reject(new Error(`exited before listening:\n${out.text()}`)));
      });
      const expected = loadCrdFiles().map((c) => c.metadata.name as string);
      expect(out.text()).toContain(`created ${expected.length} CRDs`);
      const res = await fetch(`${url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`);
      const list = (await res.json()) as { items: { metadata: { name: string } }[] };
      expect(list.items.map((c) => c.metadata.name).sort()).toEqual(expected.sort());
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(out.text()).toContain('API server stopped');
  }, 60_000);

  it('metal3fn dev without fauxqs beside it says how to get an SQS server', async () => {
    const bare = join(dir, 'bare');
    await cp(join(app, 'cli'), join(bare, 'cli'), { recursive: true });
    const { code, out } = await run([join(bare, 'cli/metal3fn.mjs'), 'dev', '--machines', '1'], bare);
    expect(out).toContain('no SQS server');
    expect(out).toContain('--sqs-endpoint');
    expect(code).toBe(1);
  }, 60_000);
});
