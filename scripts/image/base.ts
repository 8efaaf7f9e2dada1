/**
 * The base layer's own files: what the packages' maintainer scripts (which do not run) or a
 * distribution's base-files would provide, kept to what a Node process needs. The user the image
 * runs as is here too, numeric so that Kubernetes' runAsNonRoot can check it.
 */
import type { PackageLock } from './debs.ts';
import { type Entry, rootFile } from './layer.ts';

export const NONROOT = { uid: 65532, gid: 65532, name: 'nonroot', home: 'home/nonroot' } as const;

/** Where ca-certificates' postinst (update-ca-certificates) would write the bundle. */
export const CA_BUNDLE = 'etc/ssl/certs/ca-certificates.crt';
const CA_SOURCE = 'usr/share/ca-certificates/';

const file = (path: string, text: string): Entry => rootFile(path, Buffer.from(text));

/**
 * The CA bundle update-ca-certificates would build with its default configuration (every
 * certificate the package ships): each .crt under usr/share/ca-certificates, in path order, each
 * ending in a newline.
 */
export function caBundle(debs: Entry[]): Entry {
  const certs = debs
    .filter((e) => e.type === 'file' && e.path.startsWith(CA_SOURCE) && e.path.endsWith('.crt'))
    .sort((a, b) => (a.path < b.path ? -1 : 1))
    .map((e) => {
      const pem = e.data!.toString('utf8');
      return pem.endsWith('\n') ? pem : `${pem}\n`;
    });
  if (certs.length === 0)
    throw new Error(`no certificates under /${CA_SOURCE}: is ca-certificates in the lock?`);
  return file(CA_BUNDLE, certs.join(''));
}

/**
 * /etc and friends: users and groups (root, nonroot), name service order (files, then DNS, which
 * glibc has built in), os-release (ID=debian for scanners, naming what this is), each package's
 * control paragraph in var/lib/dpkg/status.d/ (where scanners of distroless images look for
 * installed packages), a home for nonroot and a world-writable /tmp.
 */
export function baseFiles(lock: PackageLock, controls: Map<string, string>, debs: Entry[]): Entry[] {
  const { uid, gid, name, home } = NONROOT;
  const d = lock.debian;
  return [
    caBundle(debs),
    file(
      'etc/passwd',
      `root:x:0:0:root:/root:/usr/sbin/nologin\n${name}:x:${uid}:${gid}:${name}:/${home}:/usr/sbin/nologin\n`,
    ),
    file('etc/group', `root:x:0:\n${name}:x:${gid}:\n`),
    file('etc/nsswitch.conf', 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n'),
    file(
      'etc/os-release',
      [
        `PRETTY_NAME="metal3fn (Debian GNU/Linux ${d.version} packages)"`,
        'NAME="Debian GNU/Linux"',
        `VERSION_ID="${d.version}"`,
        `VERSION="${d.version} (${d.codename})"`,
        `VERSION_CODENAME=${d.codename}`,
        'ID=debian',
        '',
      ].join('\n'),
    ),
    ...[...controls].map(([pkg, text]) => file(`var/lib/dpkg/status.d/${pkg}`, text)),
    { path: 'root', type: 'directory', mode: 0o700, uid: 0, gid: 0, mtime: 0 },
    { path: home, type: 'directory', mode: 0o700, uid, gid, mtime: 0 },
    { path: 'tmp', type: 'directory', mode: 0o1777, uid: 0, gid: 0, mtime: 0 },
  ];
}
