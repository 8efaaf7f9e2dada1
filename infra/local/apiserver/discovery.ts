/**
 * Discovery documents (/version, /api, /api/v1, /apis, /apis/<g>, /apis/<g>/<v>) so kubectl and
 * client libraries find kinds, short names and categories. Aggregated discovery is not served:
 * kubectl falls back to these when the answer is not an APIGroupDiscoveryList.
 */
import type { KindRegistry, ServedKind } from './kinds.ts';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0+metal3fn',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

/** Kubernetes version priority: v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > anything else. */
export function versionPriority(v: string): number[] {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return [0, 0, 0];
  const stage = m[2] === 'alpha' ? 1 : m[2] === 'beta' ? 2 : 3;
  return [stage, Number(m[1]), Number(m[3] ?? 0)];
}

export const sortVersions = (vs: string[]): string[] =>
  [...vs].sort((a, b) => {
    const pa = versionPriority(a);
    const pb = versionPriority(b);
    for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pb[i]! - pa[i]!;
    return a.localeCompare(b);
  });

export function apiVersions(serverAddress: string) {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function resourceEntries(k: ServedKind): any[] {
  const main: any = {
    name: k.plural,
    singularName: k.singular,
    namespaced: k.namespaced,
    kind: k.kind,
    verbs: k.virtual ? ['create'] : VERBS,
  };
  if (k.shortNames.length) main.shortNames = k.shortNames;
  if (k.categories.length) main.categories = k.categories;
  const out = [main];
  if (k.status)
    out.push({
      name: `${k.plural}/status`,
      singularName: '',
      namespaced: k.namespaced,
      kind: k.kind,
      verbs: ['get', 'patch', 'update'],
    });
  return out;
}

export function resourceList(kinds: KindRegistry, group: string, version: string) {
  const ks = kinds.all().filter((k) => k.group === group && k.version === version);
  if (!ks.length) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources: ks.sort((a, b) => a.plural.localeCompare(b.plural)).flatMap(resourceEntries),
  };
}

function apiGroup(name: string, versions: string[]) {
  const sorted = sortVersions(versions);
  const gv = (v: string) => ({ groupVersion: `${name}/${v}`, version: v });
  return { name, versions: sorted.map(gv), preferredVersion: gv(sorted[0]!) };
}

export function groupList(kinds: KindRegistry) {
  const groups = [...kinds.groups()].filter(([g]) => g !== '');
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map(([g, vs]) => apiGroup(g, vs)) };
}

export function group(kinds: KindRegistry, name: string) {
  const vs = kinds.groups().get(name);
  if (!vs || !name) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(name, vs) };
}
