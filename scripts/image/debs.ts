/**
 * The Debian packages of the image's base layer, pinned in infra/image/debian-packages.json (name,
 * version, architecture, sha256 of the .deb): fetched with `apt-get download NAME:ARCH=VERSION`
 * into a cache folder (or copied from apt's own cache), refused unless the sha256 matches, and
 * read with `dpkg-deb --fsys-tarfile` into layer entries as dpkg would install them, minus
 * documentation (Debian's slim-image exclusions, keeping each package's copyright file).
 * Maintainer scripts do not run: what they would generate, the base layer makes itself (base.ts).
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { promisify } from 'node:util';
import { extract as tarExtract } from 'tar-stream';
import { z } from 'zod';
import type { Entry } from './layer.ts';

const run = promisify(execFile);

export const LOCK_FILE = 'infra/image/debian-packages.json';

const DebianPackage = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9+.-]+$/),
  version: z.string().regex(/^[A-Za-z0-9.+~:-]+$/),
  architecture: z.enum(['amd64', 'all']),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type DebianPackage = z.infer<typeof DebianPackage>;

export const PackageLock = z.object({
  debian: z.object({ codename: z.string(), version: z.string() }),
  packages: z.array(DebianPackage).min(1),
});
export type PackageLock = z.infer<typeof PackageLock>;

export async function readLock(root: string): Promise<PackageLock> {
  return PackageLock.parse(JSON.parse(await readFile(join(root, LOCK_FILE), 'utf8')));
}

/** The file name apt gives a package (an epoch's ':' written '%3a'). */
export const debFileName = (p: DebianPackage) =>
  `${p.name}_${p.version.replaceAll(':', '%3a')}_${p.architecture}.deb`;

/** apt's name for exactly this package. */
const aptSpec = (p: DebianPackage) =>
  `${p.name}${p.architecture === 'all' ? '' : `:${p.architecture}`}=${p.version}`;

async function sha256Of(file: string): Promise<string | undefined> {
  try {
    return createHash('sha256')
      .update(await readFile(file))
      .digest('hex');
  } catch {
    return undefined;
  }
}

/** Where apt keeps the .debs it downloaded for installs. */
const APT_ARCHIVES = '/var/cache/apt/archives';

/**
 * The pinned .debs in `cacheDir`, each checked against its sha256. Missing ones come from apt's
 * cache, else from one `apt-get download`, into a private folder first: a file enters the cache
 * whole and verified (by rename), so builds sharing the cache never see a partial one. A pinned
 * version no longer on the mirror (Debian keeps the current ones only) fails with what to do,
 * never with another version.
 */
export async function fetchDebs(lock: PackageLock, cacheDir: string): Promise<Map<string, string>> {
  await mkdir(cacheDir, { recursive: true });
  const files = new Map(lock.packages.map((p) => [p.name, join(cacheDir, debFileName(p))]));
  const missing = [];
  for (const p of lock.packages) if ((await sha256Of(files.get(p.name)!)) !== p.sha256) missing.push(p);
  if (missing.length === 0) return files;
  const incoming = await mkdtemp(join(cacheDir, '.incoming-'));
  try {
    const download: DebianPackage[] = [];
    for (const p of missing) {
      const fromApt = join(APT_ARCHIVES, debFileName(p));
      if ((await sha256Of(fromApt)) === p.sha256) await copyFile(fromApt, join(incoming, debFileName(p)));
      else download.push(p);
    }
    if (download.length > 0) {
      try {
        await run('apt-get', ['download', '-q', ...download.map(aptSpec)], { cwd: incoming });
      } catch (e) {
        const err = e as { stderr?: string; message: string };
        throw new Error(
          `apt-get download ${download.map(aptSpec).join(' ')} failed: ${(err.stderr || err.message).trim()}\n` +
            `The versions pinned in ${LOCK_FILE} must be in apt's lists: run 'apt-get update'. If the mirror ` +
            `has moved on, pin the current ones with 'node scripts/image.ts --pin' (on Debian ${lock.debian.codename}) and commit them.`,
        );
      }
    }
    for (const p of missing) {
      const file = join(incoming, debFileName(p));
      const actual = await sha256Of(file);
      if (actual !== p.sha256)
        throw new Error(
          `${debFileName(p)}: sha256 ${actual ?? '(missing)'} is not the pinned ${p.sha256} (${LOCK_FILE})`,
        );
      await rename(file, files.get(p.name)!);
    }
  } finally {
    await rm(incoming, { recursive: true, force: true });
  }
  return files;
}

/** Debian's exclusions for slim images (its docker images' dpkg.cfg.d), copyright files kept. */
const EXCLUDED = [
  'usr/share/doc/',
  'usr/share/man/',
  'usr/share/groff/',
  'usr/share/info/',
  'usr/share/lintian/',
  'usr/share/linda/',
  'usr/share/locale/',
];
const KEPT = /^usr\/share\/doc\/[^/]+\/copyright$/;

const excluded = (path: string) => !KEPT.test(path) && EXCLUDED.some((p) => `${path}/`.startsWith(p));

/**
 * What a package installs, as layer entries: its data.tar's files, directories and symlinks with
 * their owner, mode and time (from the package, so the same on every build), minus the exclusions
 * above. An excluded directory stays when something kept is under it. Other entry types (hard
 * links, devices) are refused: none of our packages has them, and they would need handling.
 */
export async function debEntries(file: string): Promise<Entry[]> {
  const child = spawn('dpkg-deb', ['--fsys-tarfile', file]);
  let stderr = '';
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  const exited = new Promise<void>((resolve, reject) => {
    child.on('error', (e) => reject(new Error(`dpkg-deb: ${e.message} (Debian package dpkg)`)));
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`dpkg-deb --fsys-tarfile ${file}: ${stderr.trim()}`)),
    );
  });
  const ex = tarExtract();
  child.stdout.pipe(ex);
  const all: Entry[] = [];
  for await (const item of ex) {
    const h = item.header;
    const chunks: Buffer[] = [];
    for await (const c of item) chunks.push(c as Buffer);
    const path = posix
      .normalize(h.name)
      .replace(/^\.?\/*/, '')
      .replace(/\/+$/, '');
    if (path === '' || path === '.') continue;
    const base = { path, mode: h.mode & 0o7777, uid: h.uid, gid: h.gid, mtime: h.mtime.getTime() / 1000 };
    if (h.type === 'file') all.push({ ...base, type: 'file', data: Buffer.concat(chunks) });
    else if (h.type === 'directory') all.push({ ...base, type: 'directory' });
    else if (h.type === 'symlink') all.push({ ...base, type: 'symlink', linkname: h.linkname });
    else throw new Error(`${file}: ${path} is a ${h.type}, which the image build does not handle`);
  }
  await exited;
  const kept = all.filter((e) => e.type !== 'directory' && !excluded(e.path));
  const needed = new Set(kept.flatMap((e) => ancestors(e.path)));
  return all.filter((e) =>
    e.type === 'directory' ? !excluded(e.path) || needed.has(e.path) : !excluded(e.path),
  );
}

function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let p = posix.dirname(path); p !== '.'; p = posix.dirname(p)) out.push(p);
  return out;
}

/** The package's control paragraph (`dpkg-deb -f`), for var/lib/dpkg/status.d (scanners read it). */
export async function debControl(file: string): Promise<string> {
  const { stdout } = await run('dpkg-deb', ['-f', file]);
  return stdout.endsWith('\n') ? stdout : `${stdout}\n`;
}

/** Version, architecture and sha256 of the candidate in `apt-cache show --no-all-versions` output. */
export function parseAptShow(text: string): { version: string; architecture: string; sha256: string } {
  const field = (name: string) => {
    const m = new RegExp(`^${name}: (.+)$`, 'm').exec(text);
    if (!m) throw new Error(`apt-cache show: no ${name} field`);
    return m[1]!.trim();
  };
  return { version: field('Version'), architecture: field('Architecture'), sha256: field('SHA256') };
}

/**
 * `--pin`: the lock's packages at apt's current candidate versions (after `apt-get update`), on the
 * Debian release the lock names. A deliberate, reviewed change: security updates arrive this way.
 */
export async function pinLock(root: string): Promise<PackageLock> {
  const lock = await readLock(root);
  const osRelease = await readFile('/etc/os-release', 'utf8').catch(() => '');
  const codename = /^VERSION_CODENAME=(.*)$/m.exec(osRelease)?.[1]?.replaceAll('"', '');
  if (codename !== lock.debian.codename)
    throw new Error(
      `--pin runs on Debian ${lock.debian.codename} (its apt lists); this is ${codename ?? 'not Debian'}`,
    );
  const packages: DebianPackage[] = [];
  for (const p of lock.packages) {
    const spec = p.architecture === 'all' ? p.name : `${p.name}:${p.architecture}`;
    const { stdout } = await run('apt-cache', ['show', '--no-all-versions', spec]);
    const c = parseAptShow(stdout);
    if (c.architecture !== p.architecture)
      throw new Error(`${p.name}: apt's candidate is ${c.architecture}, the lock says ${p.architecture}`);
    packages.push({ ...p, version: c.version, sha256: c.sha256 });
  }
  const next = PackageLock.parse({ ...lock, packages });
  await writeFile(join(root, LOCK_FILE), `${JSON.stringify(next, null, 2)}\n`);
  return next;
}
