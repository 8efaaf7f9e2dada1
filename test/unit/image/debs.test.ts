/**
 * The pinned Debian packages (scripts/image/debs.ts): the lock as committed is valid, apt-cache's
 * output is read for --pin, and a package that is not what the lock pins is refused with what to
 * do, leaving nothing in the cache. Uses apt (every Debian; CI is Debian).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fetchDebs,
  LOCK_FILE,
  type PackageLock,
  parseAptShow,
  readLock,
} from '../../../scripts/image/debs.ts';

const root = new URL('../../../', import.meta.url).pathname;
let cache: string;

beforeAll(async () => {
  cache = await mkdtemp(join(tmpdir(), 'metal3fn-debs-'));
});
afterAll(async () => {
  await rm(cache, { recursive: true, force: true });
});

describe('the package lock', () => {
  it('pins the base packages: glibc, libgcc, libstdc++, CA certificates, tzdata, each by sha256', async () => {
    const lock = await readLock(root);
    expect(lock.packages.map((p) => p.name)).toEqual(
      expect.arrayContaining(['libc6', 'libgcc-s1', 'libstdc++6', 'ca-certificates', 'tzdata']),
    );
    // readLock validated it; the file is as --pin writes it.
    expect(await readFile(join(root, LOCK_FILE), 'utf8')).toBe(`${JSON.stringify(lock, null, 2)}\n`);
  });

  it('parseAptShow reads the candidate of `apt-cache show --no-all-versions`', () => {
    const text = [
      'Package: tzdata',
      'Version: 2026f-0+deb12u1',
      'Installed-Size: 2571',
      'Architecture: all',
      'Filename: pool/updates/main/t/tzdata/tzdata_2026f-0+deb12u1_all.deb',
      'SHA256: 3254eb870c8a949518214805aee5e4276af7699988ea8b9a3a583cd0f1eab31c',
      'Description-md5: 3d83ab2c2d7a6e6a3e3e1e2bd9ac2a3c',
      '',
    ].join('\n');
    expect(parseAptShow(text)).toEqual({
      version: '2026f-0+deb12u1',
      architecture: 'all',
      sha256: '3254eb870c8a949518214805aee5e4276af7699988ea8b9a3a583cd0f1eab31c',
    });
    expect(() => parseAptShow('Package: x\n')).toThrow(/no Version field/);
  });
});

describe('fetchDebs', () => {
  const lockOf = (p: PackageLock['packages'][number]): PackageLock => ({
    debian: { codename: 'bookworm', version: '12' },
    packages: [p],
  });

  it('a version apt does not have fails saying how to re-pin, and caches nothing', async () => {
    const lock = lockOf({
      name: 'libgcc-s1',
      version: '0.0-metal3fn-absent',
      architecture: 'amd64',
      sha256: '0'.repeat(64),
    });
    await expect(fetchDebs(lock, cache)).rejects.toThrow(
      /libgcc-s1:amd64=0\.0-metal3fn-absent[\s\S]*apt-get update[\s\S]*--pin/,
    );
    expect(await readdir(cache)).toEqual([]);
  });

  it('a package whose sha256 is not the pinned one is refused, and not cached', async () => {
    const real = (await readLock(root)).packages.find((p) => p.name === 'libgcc-s1')!;
    const lock = lockOf({ ...real, sha256: 'f'.repeat(64) });
    await expect(fetchDebs(lock, cache)).rejects.toThrow(
      new RegExp(`libgcc-s1_.*: sha256 ${real.sha256} is not the pinned f{64}`),
    );
    expect(await readdir(cache)).toEqual([]);
  });
});
