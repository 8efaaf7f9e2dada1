/**
 * Layers byte for byte from their entries (scripts/image/layer.ts): parents added and sorted
 * first, conflicts refused, the tar read back by GNU tar (an independent reader) with exactly the
 * metadata given, the same bytes for any input order, and gzip output without a name or time.
 */
import { spawnSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildLayer, type Entry, gzip, normalizeEntries, tarOf } from '../../../scripts/image/layer.ts';

const file = (path: string, text: string, extra: Partial<Entry> = {}): Entry => ({
  path,
  type: 'file',
  mode: 0o644,
  uid: 0,
  gid: 0,
  mtime: 1_700_000_000,
  data: Buffer.from(text),
  ...extra,
});
const dir = (path: string, extra: Partial<Entry> = {}): Entry => ({
  path,
  type: 'directory',
  mode: 0o755,
  uid: 0,
  gid: 0,
  mtime: 0,
  ...extra,
});

/** GNU tar's listing: mode, owner, size, UTC time, name (and a symlink's target). */
function gnuTarList(tar: Buffer): string[] {
  const r = spawnSync('tar', ['-tv', '--numeric-owner', '--full-time', '-f', '-'], {
    input: tar,
    env: { PATH: process.env.PATH, TZ: 'UTC', LC_ALL: 'C' },
    encoding: 'buffer',
  });
  expect(r.status, r.stderr.toString()).toBe(0);
  return r.stdout
    .toString()
    .trim()
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' '));
}

describe('normalizeEntries', () => {
  it('adds missing parents (root, 0755, time 0) and sorts by path bytes, each directory before what it holds', () => {
    const out = normalizeEntries([file('usr/lib/x', 'x'), file('usr/lib-x', 'y'), dir('usr', { mtime: 5 })]);
    expect(out.map((e) => [e.path, e.type, e.mtime])).toEqual([
      ['usr', 'directory', 5],
      ['usr/lib', 'directory', 0],
      ['usr/lib-x', 'file', 1_700_000_000], // byte order: '-' < '/'
      ['usr/lib/x', 'file', 1_700_000_000],
    ]);
  });

  it('keeps a directory given twice alike once, and refuses any other path given twice', () => {
    expect(normalizeEntries([dir('etc'), dir('etc', { mtime: 9 })])).toEqual([dir('etc')]);
    expect(() => normalizeEntries([file('etc/a', '1'), file('etc/a', '1')])).toThrow(
      /'etc\/a' is given twice/,
    );
    expect(() => normalizeEntries([dir('etc'), dir('etc', { mode: 0o700 })])).toThrow(/given twice/);
  });

  it('refuses paths that are not relative and normalized, and entries under a file', () => {
    for (const path of ['/etc/passwd', 'etc/', 'a/../b', './a', 'a//b', ''])
      expect(() => normalizeEntries([file(path, '')]), path).toThrow(/not a relative normalized path/);
    expect(() => normalizeEntries([file('a', ''), file('a/b', '')])).toThrow(/under 'a', not a directory/);
    expect(() => normalizeEntries([{ ...dir('d'), data: Buffer.from('') }])).toThrow(
      /nothing else has either/,
    );
  });
});

describe('tarOf', () => {
  const entries: Entry[] = [
    file('app/main.mjs', 'console.log(1)\n'),
    { path: 'lib64/ld.so', type: 'symlink', mode: 0o777, uid: 0, gid: 0, mtime: 0, linkname: '/lib/ld.so' },
    dir('home/nonroot', { mode: 0o700, uid: 65532, gid: 65532 }),
    dir('tmp', { mode: 0o1777 }),
  ];

  it('writes exactly the given metadata, nothing from the host', async () => {
    expect(gnuTarList(await tarOf(entries))).toEqual([
      'drwxr-xr-x 0/0 0 1970-01-01 00:00:00 app/',
      '-rw-r--r-- 0/0 15 2023-11-14 22:13:20 app/main.mjs',
      'drwxr-xr-x 0/0 0 1970-01-01 00:00:00 home/',
      'drwx------ 65532/65532 0 1970-01-01 00:00:00 home/nonroot/',
      'drwxr-xr-x 0/0 0 1970-01-01 00:00:00 lib64/',
      'lrwxrwxrwx 0/0 0 1970-01-01 00:00:00 lib64/ld.so -> /lib/ld.so',
      'drwxrwxrwt 0/0 0 1970-01-01 00:00:00 tmp/',
    ]);
  });

  it('gives the same bytes whatever the order entries come in', async () => {
    const a = await tarOf(entries);
    const b = await tarOf([...entries].reverse());
    expect(b.equals(a)).toBe(true);
  });

  it('names a long path with a header GNU tar reads back', async () => {
    const long = `${'d'.repeat(120)}/${'f'.repeat(120)}`;
    expect(gnuTarList(await tarOf([file(long, 'x')])).at(-1)).toMatch(new RegExp(`${long}$`));
  });
});

describe('gzip', () => {
  it('writes no name and no time in the header, and the same bytes each time', async () => {
    const data = Buffer.from('metal3fn '.repeat(10_000));
    const [a, b] = [await gzip(data), await gzip(data)];
    expect(a.equals(b)).toBe(true);
    expect(a.subarray(0, 3)).toEqual(Buffer.from([0x1f, 0x8b, 8])); // gzip, deflate
    expect(a[3]).toBe(0); // FLG: no FNAME, FCOMMENT, FEXTRA
    expect(a.readUInt32LE(4)).toBe(0); // MTIME
    expect(gunzipSync(a).equals(data)).toBe(true);
  });

  it('buildLayer: diffId is the tar sha256, digest the compressed one', async () => {
    const layer = await buildLayer([file('a', 'b')]);
    const { createHash } = await import('node:crypto');
    const hex = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(layer.diffId).toBe(hex(gunzipSync(layer.bytes)));
    expect(layer.digest).toBe(hex(layer.bytes));
    expect(layer.uncompressedSize).toBe(gunzipSync(layer.bytes).length);
  });
});
