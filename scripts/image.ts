/**
 * `npm run image`: the container image, as an OCI image layout in dist/image/ (tag = the package
 * version), without a container daemon; push it with skopeo, crane or oras (README, "Container
 * image"). linux/amd64, three layers so that a release changes only the last one:
 *
 *   base  Debian packages pinned in infra/image/debian-packages.json (glibc, libstdc++, libgcc,
 *         CA certificates, tzdata) and the files their maintainer scripts would make (base.ts)
 *   node  the Node 22 binary of the `node` devDependency (its version is the lock file's)
 *   app   the production CLI bundle (bin/metal3fn-prod.ts: no embedded servers or simulators)
 *
 * Reproducible: the same commit gives the same digest (test/e2e/image.test.ts builds twice). Every
 * byte comes from pinned inputs; times are the packages' own, 0, or the last commit's
 * (SOURCE_DATE_EPOCH overrides it) for the config. docs/adr/015-container-image.md says why it is
 * built this way.
 *
 *   node scripts/image.ts [--out DIR] [--cache DIR] [--metafile FILE]
 *       build (default dist/image, node_modules/.cache/metal3fn-image); --metafile writes esbuild's
 *       metafile of the app bundle (every module in it) to FILE
 *   node scripts/image.ts --pin                       pin the packages at apt's current versions
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { buildBundles } from './build.ts';
import { baseFiles, CA_BUNDLE, NONROOT } from './image/base.ts';
import { debControl, debEntries, fetchDebs, pinLock, readLock } from './image/debs.ts';
import { buildLayer, type Entry, rootFile } from './image/layer.ts';
import { type WrittenImage, writeLayout } from './image/layout.ts';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export const IMAGE_PATHS = { node: 'usr/local/bin/node', app: 'app/metal3fn.mjs' } as const;

export interface BuildImageOptions {
  /** Output folder, replaced (default dist/image). */
  out?: string;
  /** Where downloaded .debs are kept between builds (default node_modules/.cache/metal3fn-image). */
  cacheDir?: string;
  /** Write esbuild's metafile of the app bundle here. */
  metafile?: string;
}

export interface BuiltImage extends WrittenImage {
  tag: string;
  /** Per layer, bottom first: name, compressed and uncompressed bytes. */
  sizes: { layer: string; size: number; uncompressedSize: number }[];
}

/** SOURCE_DATE_EPOCH (reproducible-builds.org), else the last commit's time. */
async function sourceDateEpoch(): Promise<number> {
  const env = process.env.SOURCE_DATE_EPOCH;
  const text = env ?? (await git('log', '-1', '--format=%ct')).trim();
  if (!/^\d+$/.test(text)) throw new Error(`SOURCE_DATE_EPOCH '${text}' is not a number of seconds`);
  return Number(text);
}

async function git(...args: string[]): Promise<string> {
  try {
    return (await run('git', args, { cwd: root })).stdout;
  } catch (e) {
    throw new Error(
      `git ${args.join(' ')}: ${(e as Error).message.trim()} (the image is built from a git checkout)`,
    );
  }
}

/** The `node` devDependency's binary: checked to be Linux x86-64 and the version the lock says. */
async function nodeBinary(): Promise<{ bytes: Buffer; version: string }> {
  const req = createRequire(join(root, 'package.json'));
  const pkgFile = req.resolve('node/package.json');
  const { version } = JSON.parse(await readFile(pkgFile, 'utf8')) as { version: string };
  const bin = join(dirname(pkgFile), 'bin', 'node');
  const bytes = await readFile(bin);
  // ELF, 64-bit, little-endian, e_machine 0x3e (x86-64): the image is linux/amd64.
  const elf = bytes.subarray(0, 4).toString('latin1') === '\x7fELF' && bytes[4] === 2 && bytes[5] === 1;
  if (!elf || bytes.readUInt16LE(18) !== 0x3e)
    throw new Error(
      `${bin} is not a Linux x86-64 binary: build the linux/amd64 image on linux/amd64 (npm ci there)`,
    );
  const reported = (await run(bin, ['--version'])).stdout.trim();
  if (reported !== `v${version}` || !version.startsWith('22.'))
    throw new Error(
      `${bin} says ${reported}; the image takes Node 22 from the 'node' devDependency (${version})`,
    );
  return { bytes, version };
}

/** The production CLI bundle, built into a temporary folder. */
async function appBundle(metafile: string | undefined): Promise<Buffer> {
  const tmp = await mkdtemp(join(tmpdir(), 'metal3fn-image-'));
  try {
    // build.ts writes the metafile beside the bundle when BUILD_METAFILE is set.
    if (metafile) process.env.BUILD_METAFILE = '1';
    await buildBundles({ out: tmp, only: ['prod'] });
    const bundle = join(tmp, 'prod', 'metal3fn.mjs');
    if (metafile) await copyFile(`${bundle}.meta.json`, metafile);
    return await readFile(bundle);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

export async function buildImage(opts: BuildImageOptions = {}): Promise<BuiltImage> {
  const out = resolve(opts.out ?? join(root, 'dist', 'image'));
  const cacheDir = resolve(opts.cacheDir ?? join(root, 'node_modules', '.cache', 'metal3fn-image'));
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
    version: string;
    description: string;
    license: string;
    repository: { url: string };
  };
  const epoch = await sourceDateEpoch();
  const created = new Date(epoch * 1000).toISOString();
  const revision = (await git('rev-parse', 'HEAD')).trim();

  const lock = await readLock(root);
  const debs = await fetchDebs(lock, cacheDir);
  const debFiles: Entry[] = [];
  const controls = new Map<string, string>();
  for (const [name, file] of debs) {
    debFiles.push(...(await debEntries(file)));
    controls.set(name, await debControl(file));
  }
  const node = await nodeBinary();
  const app = await appBundle(opts.metafile);

  const [base, nodeLayer, appLayer] = await Promise.all([
    buildLayer([...debFiles, ...baseFiles(lock, controls, debFiles)]),
    buildLayer([rootFile(IMAGE_PATHS.node, node.bytes, 0o755)]),
    buildLayer([rootFile(IMAGE_PATHS.app, app)]),
  ]);

  const labels = {
    'org.opencontainers.image.title': 'metal3fn',
    'org.opencontainers.image.description': pkg.description,
    'org.opencontainers.image.version': pkg.version,
    'org.opencontainers.image.revision': revision,
    'org.opencontainers.image.source': pkg.repository.url,
    'org.opencontainers.image.licenses': pkg.license,
    'org.opencontainers.image.created': created,
  };
  const packages = lock.packages.map((p) => `${p.name}=${p.version}`).join(' ');
  const written = await writeLayout(out, {
    created,
    refName: pkg.version,
    annotations: labels,
    config: {
      User: `${NONROOT.uid}:${NONROOT.gid}`,
      Env: [
        'PATH=/usr/local/bin:/usr/bin:/bin',
        'NODE_ENV=production',
        `NODE_VERSION=${node.version}`,
        // Node trusts its own Mozilla store plus this file (a private CA is added by mounting a
        // bundle here); OpenSSL-style tools, and Node with --use-openssl-ca, read SSL_CERT_FILE.
        `NODE_EXTRA_CA_CERTS=/${CA_BUNDLE}`,
        `SSL_CERT_FILE=/${CA_BUNDLE}`,
      ],
      Entrypoint: [`/${IMAGE_PATHS.node}`, `/${IMAGE_PATHS.app}`],
      Cmd: ['--help'],
      WorkingDir: '/app',
      Labels: labels,
    },
    layers: [
      { blob: base, createdBy: `base: Debian ${lock.debian.version} (${lock.debian.codename}) ${packages}` },
      {
        blob: nodeLayer,
        createdBy: `node: Node.js v${node.version} (npm package node@${node.version}, linux-x64)`,
      },
      { blob: appLayer, createdBy: `app: metal3fn ${pkg.version} production bundle (bin/metal3fn-prod.ts)` },
    ],
  });
  const sizes = (['base', 'node', 'app'] as const).map((layer, i) => ({
    layer,
    size: written.layers[i]!.size,
    uncompressedSize: [base, nodeLayer, appLayer][i]!.uncompressedSize,
  }));
  return { ...written, tag: pkg.version, sizes };
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      out: { type: 'string' },
      cache: { type: 'string' },
      metafile: { type: 'string' },
      pin: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.pin) {
    const lock = await pinLock(root);
    for (const p of lock.packages) process.stdout.write(`${p.name}=${p.version} ${p.sha256}\n`);
    return;
  }
  const started = performance.now();
  const image = await buildImage({
    ...(values.out ? { out: values.out } : {}),
    ...(values.cache ? { cacheDir: values.cache } : {}),
    ...(values.metafile ? { metafile: resolve(values.metafile) } : {}),
  });
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(1).padStart(6)} MiB`;
  process.stdout.write(`\nlayer  compressed  uncompressed\n`);
  for (const s of image.sizes)
    process.stdout.write(`${s.layer.padEnd(5)} ${mib(s.size)}  ${mib(s.uncompressedSize)}\n`);
  const total = image.sizes.reduce((n, s) => n + s.size, 0);
  const totalU = image.sizes.reduce((n, s) => n + s.uncompressedSize, 0);
  process.stdout.write(`total ${mib(total)}  ${mib(totalU)}\n`);
  process.stdout.write(
    `image ${image.digest} tag ${image.tag} in ${values.out ?? 'dist/image'} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`image build failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  });
