/**
 * The container image (`npm run image`, scripts/image.ts): built twice from this checkout into two
 * folders at once, the two layouts must be byte-identical. Then it is read as a runtime would:
 * umoci (an independent OCI implementation) unpacks it into a root file system and a runtime
 * config, and the process that config describes runs in its own root, mount and PID namespaces as
 * its user (65532), with only its environment: the entrypoint's --help, and a `replay` that
 * reconciles a Metal3Cluster on an embedded API server running outside the image (TLS, token).
 *
 * Needs root (chroot and namespaces; CI and the sandbox run as root) and umoci (.ci/run installs
 * it); skipped, saying so, when not root.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { extract as tarExtract } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { R } from '../../shared/api/resources.ts';
import { startTestCluster } from '../helpers/cluster.ts';
import { runNode as node } from '../helpers/node.ts';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
const isRoot = process.getuid?.() === 0;

const PRODUCTION_COMMAND_NAMES = [
  'relay',
  'worker',
  'http',
  'replay',
  'render',
  'template',
  'migrate-provider-ids',
];
const TOKEN = 'image-test-admin';

let dir: string;
/** The two builds' layouts. */
let layoutA: string;
let layoutB: string;
let buildOutput: string;
/** esbuild's metafile of build A's app bundle. */
let metafile: string;
/** umoci's unpacked bundle of layout A: rootfs/ and the runtime config. */
let rootfs: string;
let proc: { args: string[]; env: string[]; cwd: string; user: { uid: number; gid: number } };

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const blob = (layout: string, digest: string) =>
  readFile(join(layout, 'blobs', 'sha256', digest.replace(/^sha256:/, '')));
const json = async (layout: string, digest: string) =>
  JSON.parse((await blob(layout, digest)).toString('utf8'));

/**
 * Runs `args` as the runtime config says: root = the unpacked rootfs (with /proc), cwd, uid/gid
 * (supplementary groups: the gid alone), environment = the image's and nothing else.
 */
function inImage(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env = Object.fromEntries(
      proc.env.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
    const child = spawn(
      'unshare',
      [
        '--mount',
        '--pid',
        '--fork',
        '--mount-proc',
        `--root=${rootfs}`,
        `--wd=${proc.cwd}`,
        `--setuid=${proc.user.uid}`,
        `--setgid=${proc.user.gid}`,
        '--',
        ...args,
      ],
      { env },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

interface LayerEntry {
  name: string;
  type: string;
  uid: number;
  gid: number;
  mode: number;
  sha256?: string;
}

/** Layer A's uncompressed tars by digest: each is gunzipped once. */
const tars = new Map<string, Buffer>();
const tarOfLayer = async (digest: string) => {
  if (!tars.has(digest)) tars.set(digest, gunzipSync(await blob(layoutA, digest)));
  return tars.get(digest)!;
};

/** A layer's entries: path (directories with '/'), type, owner, mode, and a file's sha256. */
async function layerEntries(digest: string): Promise<LayerEntry[]> {
  const ex = tarExtract();
  ex.end(await tarOfLayer(digest));
  const out: LayerEntry[] = [];
  for await (const e of ex) {
    const chunks: Buffer[] = [];
    for await (const c of e) chunks.push(c as Buffer);
    const { name, type, uid, gid, mode } = e.header;
    out.push({
      name,
      type,
      uid,
      gid,
      mode,
      ...(type === 'file' ? { sha256: sha256(Buffer.concat(chunks)) } : {}),
    });
  }
  return out;
}

beforeAll(async () => {
  if (!isRoot) return;
  dir = await mkdtemp(join(tmpdir(), 'metal3fn-image-test-'));
  layoutA = join(dir, 'a');
  layoutB = join(dir, 'b');
  metafile = join(dir, 'app.meta.json');
  // At once: two processes, two outputs, the .deb cache shared (scripts/image/debs.ts).
  const [a, b] = await Promise.all([
    node(['scripts/image.ts', '--out', layoutA, '--metafile', metafile]),
    node(['scripts/image.ts', '--out', layoutB]),
  ]);
  buildOutput = a.out;
  expect(a.code, a.out).toBe(0);
  expect(b.code, b.out).toBe(0);

  const bundle = join(dir, 'bundle');
  await run('umoci', ['unpack', '--image', `${layoutA}:${await packageVersion()}`, bundle]);
  rootfs = join(bundle, 'rootfs');
  await mkdir(join(rootfs, 'proc'));
  proc = JSON.parse(await readFile(join(bundle, 'config.json'), 'utf8')).process;
}, 300_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function packageVersion(): Promise<string> {
  return (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

async function files(layout: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of (await readdir(layout, { recursive: true, withFileTypes: true })).filter((e) =>
    e.isFile(),
  )) {
    const path = join(f.parentPath, f.name);
    out[path.slice(layout.length + 1)] = sha256(await readFile(path));
  }
  return out;
}

describe.skipIf(!isRoot)('the container image (npm run image)', () => {
  it('two builds give the same layout, byte for byte: same digest', async () => {
    const [a, b] = [await files(layoutA), await files(layoutB)];
    expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
    expect(a).toEqual(b);
    // Content-addressed: every blob is named by its sha256.
    for (const [path, hash] of Object.entries(a))
      if (path.startsWith('blobs/sha256/')) expect(path).toBe(`blobs/sha256/${hash}`);
    const index = JSON.parse(await readFile(join(layoutA, 'index.json'), 'utf8'));
    expect(buildOutput).toContain(`image ${index.manifests[0].digest} tag ${await packageVersion()}`);
  });

  it('is an OCI layout of one linux/amd64 image tagged with the package version, running as 65532', async () => {
    const version = await packageVersion();
    expect(JSON.parse(await readFile(join(layoutA, 'oci-layout'), 'utf8'))).toEqual({
      imageLayoutVersion: '1.0.0',
    });
    const index = JSON.parse(await readFile(join(layoutA, 'index.json'), 'utf8'));
    expect(index.manifests).toHaveLength(1);
    expect(index.manifests[0]).toMatchObject({
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      platform: { architecture: 'amd64', os: 'linux' },
      annotations: { 'org.opencontainers.image.ref.name': version },
    });
    const manifest = await json(layoutA, index.manifests[0].digest);
    expect(manifest.layers.map((l: { mediaType: string }) => l.mediaType)).toEqual(
      Array(3).fill('application/vnd.oci.image.layer.v1.tar+gzip'),
    );
    const config = await json(layoutA, manifest.config.digest);
    const { stdout: head } = await run('git', ['rev-parse', 'HEAD'], { cwd: root });
    const { stdout: time } = await run('git', ['log', '-1', '--format=%ct'], { cwd: root });
    expect(config.created).toBe(new Date(Number(time.trim()) * 1000).toISOString());
    expect(config.config).toMatchObject({
      User: '65532:65532',
      Entrypoint: ['/usr/local/bin/node', '/app/metal3fn.mjs'],
      WorkingDir: '/app',
      Labels: {
        'org.opencontainers.image.version': version,
        'org.opencontainers.image.revision': head.trim(),
        'org.opencontainers.image.source': expect.stringMatching(/^https:\/\//),
      },
    });
    expect(config.config.Env).toEqual(
      expect.arrayContaining([
        'NODE_ENV=production',
        'NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
      ]),
    );
    // Each layer's diff_id is the sha256 of its uncompressed tar.
    const layers = await Promise.all(manifest.layers.map((l: { digest: string }) => tarOfLayer(l.digest)));
    expect(config.rootfs.diff_ids).toEqual(layers.map((l) => `sha256:${sha256(l)}`));
  });

  it('has three layers: Debian base, the Node binary, the app bundle alone', async () => {
    const index = JSON.parse(await readFile(join(layoutA, 'index.json'), 'utf8'));
    const manifest = await json(layoutA, index.manifests[0].digest);
    const [base, nodeLayer, app] = (await Promise.all(
      manifest.layers.map((l: { digest: string }) => layerEntries(l.digest)),
    )) as [LayerEntry[], LayerEntry[], LayerEntry[]];
    const nodeBinary = await readFile(join(root, 'node_modules/node/bin/node'));
    expect(nodeLayer).toEqual([
      { name: 'usr/', type: 'directory', uid: 0, gid: 0, mode: 0o755 },
      { name: 'usr/local/', type: 'directory', uid: 0, gid: 0, mode: 0o755 },
      { name: 'usr/local/bin/', type: 'directory', uid: 0, gid: 0, mode: 0o755 },
      { name: 'usr/local/bin/node', type: 'file', uid: 0, gid: 0, mode: 0o755, sha256: sha256(nodeBinary) },
    ]);
    expect(app.map((e: { name: string }) => e.name)).toEqual(['app/', 'app/metal3fn.mjs']);
    const names = new Set(base.map((e: { name: string }) => e.name));
    for (const f of [
      'lib/x86_64-linux-gnu/libc.so.6',
      'lib64/ld-linux-x86-64.so.2',
      'lib/x86_64-linux-gnu/libgcc_s.so.1',
      'usr/lib/x86_64-linux-gnu/libstdc++.so.6',
      'etc/ssl/certs/ca-certificates.crt',
      'usr/share/zoneinfo/Europe/Paris',
      'usr/share/doc/libc6/copyright',
      'etc/passwd',
      'var/lib/dpkg/status.d/libc6',
    ])
      expect(names, f).toContain(f);
    // Documentation other than copyright files is left out (Debian's slim-image rules).
    expect(
      [...names].filter(
        (n) => n.startsWith('usr/share/doc/') && !/^usr\/share\/doc\/([^/]+\/(copyright)?)?$/.test(n),
      ),
    ).toEqual([]);
    expect([...names].filter((n) => n.startsWith('usr/share/man/'))).toEqual([]);
    // Owned by root, except the user's home.
    expect(base.filter((e: { uid: number }) => e.uid !== 0).map((e: { name: string }) => e.name)).toEqual([
      'home/nonroot/',
    ]);
  });

  it('its bundle holds the production commands only: no infra/local module (esbuild metafile)', async () => {
    const meta = JSON.parse(await readFile(metafile, 'utf8')) as {
      inputs: Record<string, unknown>;
      outputs: Record<string, { bytes: number; imports: { path: string; external?: boolean }[] }>;
    };
    // The metafile is of the bundle the image holds.
    const [output, ...others] = Object.keys(meta.outputs);
    expect(others).toEqual([]);
    expect(meta.outputs[output!]!.bytes).toBe((await readFile(join(rootfs, 'app/metal3fn.mjs'))).length);
    const inputs = Object.keys(meta.inputs);
    expect(inputs).toContain('bin/metal3fn-prod.ts');
    expect(inputs).toContain('bin/commands/replay.ts');
    expect(inputs.filter((f) => f.startsWith('infra/local/'))).toEqual([]);
    expect(inputs.filter((f) => /^bin\/commands\/(dev|apiserver)\.ts$/.test(f))).toEqual([]);
    expect(inputs.filter((f) => /node_modules\/(fauxqs|testcontainers)\//.test(f))).toEqual([]);
    // Nothing is left to load from outside the bundle but Node's own modules.
    const external = Object.values(meta.outputs)
      .flatMap((o) => o.imports)
      .filter((i) => i.external)
      .map((i) => i.path);
    expect(external.filter((p) => !isBuiltin(p))).toEqual([]);
  });

  it('runs as uid/gid 65532 in its own root, which it cannot write to', async () => {
    expect(proc.user).toEqual({ uid: 65532, gid: 65532 });
    const r = await inImage([
      proc.args[0]!,
      '-e',
      `const fs = require('node:fs'); let appWritable = true; try { fs.writeFileSync('/app/x', ''); } catch { appWritable = false; }
       console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), groups: process.getgroups(),
         cwd: process.cwd(), user: require('node:os').userInfo().username, appWritable }));`,
    ]);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({
      uid: 65532,
      gid: 65532,
      groups: [65532],
      cwd: '/app',
      user: 'nonroot',
      appWritable: false,
    });
  });

  it("the entrypoint's --help lists the production commands, and dev/apiserver are not there", async () => {
    const r = await inImage(proc.args);
    expect(proc.args.slice(-1)).toEqual(['--help']); // the image's Cmd
    expect(r.stderr).toBe(''); // e.g. no "Ignoring extra certs" from NODE_EXTRA_CA_CERTS
    expect(r.code).toBe(0);
    const commands = r.stdout
      .split('\n\n')
      .find((p) => p.startsWith('commands:'))!
      .split('\n')
      .slice(1)
      .map((l) => l.trim().split(/\s+/)[0]);
    expect(commands).toEqual(PRODUCTION_COMMAND_NAMES);
    for (const cmd of ['dev', 'apiserver']) {
      const u = await inImage([...proc.args.slice(0, -1), cmd]);
      expect(u.code, cmd).toBe(2);
      expect(u.stderr).toContain(`unknown command '${cmd}'`);
    }
  });

  it('replay in the image reconciles a Metal3Cluster on an API server outside it (TLS, token)', async () => {
    const tc = await startTestCluster({ tls: true, rbac: { tokens: {}, adminToken: TOKEN } });
    try {
      await tc.client.create(R.Metal3Cluster, {
        metadata: { name: 'c-image', namespace: 'metal3', labels: { 'cluster.x-k8s.io/cluster-name': 'c' } },
        spec: { controlPlaneEndpoint: { host: '192.0.2.10', port: 6443 } },
      });
      expect(
        (await tc.client.get(R.Metal3Cluster, 'metal3', 'c-image'))!.metadata.finalizers,
      ).toBeUndefined();
      await writeFile(join(rootfs, 'tmp/kubeconfig'), tc.server.kubeconfig({ token: TOKEN }), {
        mode: 0o644,
      });
      const r = await inImage([
        ...proc.args.slice(0, -1),
        'replay',
        'reconcileCluster',
        'metal3/c-image',
        '--kubeconfig',
        '/tmp/kubeconfig',
        '--no-events',
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual([
        expect.objectContaining({ function: 'reconcileCluster', key: 'metal3/c-image', outcome: 'done' }),
      ]);
      const after = (await tc.client.get(R.Metal3Cluster, 'metal3', 'c-image'))!;
      expect(after.metadata.finalizers).toEqual(['metal3cluster.infrastructure.cluster.x-k8s.io']);
      expect((after.status as { ready?: boolean }).ready).toBe(true);
    } finally {
      await tc.stop();
    }
  });
});
