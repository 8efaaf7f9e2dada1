/**
 * One image layer from a list of entries, byte for byte the same on every build: the tar holds
 * exactly the metadata given here (no host owner, time, xattr or order leaks in), sorted by path
 * with every parent directory present, and is compressed by GNU gzip with no name or time in its
 * header (docs/adr/015-container-image.md says why gzip and not Node's zlib).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { pack as tarPack } from 'tar-stream';

/** A file system entry of a layer. Paths are relative to / ("usr/bin/x"), without "./" or a trailing "/". */
export interface Entry {
  path: string;
  type: 'file' | 'directory' | 'symlink';
  /** Permission bits (and setuid/setgid/sticky), e.g. 0o755. */
  mode: number;
  uid: number;
  gid: number;
  /** Modification time, seconds since the epoch. */
  mtime: number;
  /** A file's content. */
  data?: Buffer;
  /** A symlink's target. */
  linkname?: string;
}

export const LAYER_MEDIA_TYPE = 'application/vnd.oci.image.layer.v1.tar+gzip';

export interface LayerBlob {
  /** The compressed layer. */
  bytes: Buffer;
  /** sha256 of the compressed layer, hex. */
  digest: string;
  /** sha256 of the uncompressed tar (the config's rootfs.diff_ids), hex. */
  diffId: string;
  uncompressedSize: number;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A file owned by root, time 0. */
export const rootFile = (path: string, data: Buffer, mode = 0o644): Entry => ({
  path,
  type: 'file',
  mode,
  uid: 0,
  gid: 0,
  mtime: 0,
  data,
});

const dir = (path: string): Entry => ({ path, type: 'directory', mode: 0o755, uid: 0, gid: 0, mtime: 0 });

/**
 * Sorted by path (byte order, so a directory comes before what it holds), parents added where
 * missing (root-owned, 0755, time 0). The same directory from two sources (two packages) is kept
 * once when owner and mode agree; any other path given twice is an error, not a silent choice.
 */
export function normalizeEntries(entries: Entry[]): Entry[] {
  const byPath = new Map<string, Entry>();
  for (const e of entries) {
    if (
      !e.path ||
      e.path.startsWith('/') ||
      e.path.endsWith('/') ||
      e.path.split('/').some((s) => s === '..' || s === '.' || s === '')
    )
      throw new Error(`layer entry '${e.path}': not a relative normalized path`);
    if (
      (e.type === 'file') !== (e.data !== undefined) ||
      (e.type === 'symlink') !== (e.linkname !== undefined)
    )
      throw new Error(
        `layer entry '${e.path}': a file needs data and a symlink a target, nothing else has either`,
      );
    const prev = byPath.get(e.path);
    if (prev) {
      const sameDir =
        prev.type === 'directory' &&
        e.type === 'directory' &&
        prev.mode === e.mode &&
        prev.uid === e.uid &&
        prev.gid === e.gid;
      if (sameDir) continue;
      throw new Error(`layer entry '${e.path}' is given twice, differently`);
    }
    byPath.set(e.path, e);
  }
  for (const path of [...byPath.keys()])
    for (let p = posix.dirname(path); p !== '.'; p = posix.dirname(p)) {
      const parent = byPath.get(p);
      if (!parent) byPath.set(p, dir(p));
      else if (parent.type !== 'directory')
        throw new Error(`layer entry '${path}' is under '${p}', not a directory`);
    }
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The uncompressed tar of the entries (ustar, pax headers only where a name needs one). */
export async function tarOf(entries: Entry[]): Promise<Buffer> {
  const pack = tarPack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const c of pack) chunks.push(c as Buffer);
  })();
  for (const e of normalizeEntries(entries)) {
    const header = {
      // A directory's name ends in '/', as GNU tar writes it.
      name: e.type === 'directory' ? `${e.path}/` : e.path,
      type: e.type,
      mode: e.mode,
      uid: e.uid,
      gid: e.gid,
      uname: '',
      gname: '',
      mtime: new Date(e.mtime * 1000),
      ...(e.linkname !== undefined ? { linkname: e.linkname } : {}),
    };
    if (e.data) pack.entry(header, e.data);
    else pack.entry(header);
  }
  pack.finalize();
  await collected;
  return Buffer.concat(chunks);
}

/**
 * GNU gzip, level 6, no name or time in the header (-n). Its output depends only on the input and
 * the level; Node's zlib (Chromium's) picks its hash function by CPU feature, so its output can
 * differ between machines.
 */
export function gzip(data: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // No GZIP variable (gzip would read options from it) and no locale.
    const child = spawn('gzip', ['-n', '-6', '-c'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
    });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => {
      err += c;
    });
    // A write after gzip died: its exit status below says why.
    child.stdin.on('error', () => {});
    child.on('error', (e) =>
      reject(new Error(`gzip: ${e.message} (GNU gzip is needed: Debian package gzip)`)),
    );
    child.on('close', (code) =>
      code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`gzip exited with ${code}: ${err.trim()}`)),
    );
    child.stdin.end(data);
  });
}

export async function buildLayer(entries: Entry[]): Promise<LayerBlob> {
  const tar = await tarOf(entries);
  const bytes = await gzip(tar);
  return { bytes, digest: sha256(bytes), diffId: sha256(tar), uncompressedSize: tar.length };
}
