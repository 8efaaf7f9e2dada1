/**
 * Discovery documents (/version, /api, /api/v1, /apis, /apis/<g>, /apis/<g>/<v>) so kubectl and
 * client libraries find kinds, short names and categories; and aggregated discovery (v2), which
 * kubectl asks for first and which saves it one request per group version.
 */
import type { KindRegistry, ServedKind } from './kinds.ts';

/** What the scale subresource answers (autoscaling/v1 Scale). */
const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

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
  const sub = (name: string, kind: object) => ({
    name: `${k.plural}/${name}`,
    singularName: '',
    namespaced: k.namespaced,
    ...kind,
    verbs: ['get', 'patch', 'update'],
  });
  const out = [main];
  if (k.status) out.push(sub('status', { kind: k.kind }));
  if (k.scale) out.push(sub('scale', SCALE_KIND));
  for (const s of k.subresources ?? [])
    out.push({ ...sub(s.name, { group: s.group, version: s.version, kind: s.kind }), verbs: s.verbs });
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

/** Aggregated discovery (apidiscovery.k8s.io/v2): all groups, versions and resources in one answer. */
export const AGGREGATED_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

export const wantsAggregated = (accept: string | undefined): boolean =>
  !!accept &&
  accept.split(',').some((t) => /as=APIGroupDiscoveryList/.test(t) && /(^|;)\s*v=v2\s*(;|$)/.test(t));

function aggregatedResource(k: ServedKind) {
  const responseKind = { group: k.group, version: k.version, kind: k.kind };
  const r: Record<string, unknown> = {
    resource: k.plural,
    responseKind,
    scope: k.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: k.singular,
    verbs: k.virtual ? ['create'] : VERBS,
  };
  if (k.shortNames.length) r.shortNames = k.shortNames;
  if (k.categories.length) r.categories = k.categories;
  const subresources: object[] = [];
  if (k.status) subresources.push({ subresource: 'status', responseKind, verbs: ['get', 'patch', 'update'] });
  if (k.scale)
    subresources.push({ subresource: 'scale', responseKind: SCALE_KIND, verbs: ['get', 'patch', 'update'] });
  for (const s of k.subresources ?? [])
    subresources.push({
      subresource: s.name,
      responseKind: { group: s.group, version: s.version, kind: s.kind },
      verbs: s.verbs,
    });
  if (subresources.length) r.subresources = subresources;
  return r;
}

/** The APIGroupDiscoveryList for /api (core) or /apis (every other group). */
export function aggregatedDiscovery(kinds: KindRegistry, core: boolean) {
  const items = [...kinds.groups()]
    .filter(([g]) => (core ? g === '' : g !== ''))
    .map(([g, versions]) => ({
      metadata: core ? {} : { name: g },
      versions: sortVersions(versions).map((v) => ({
        version: v,
        resources: kinds
          .all()
          .filter((k) => k.group === g && k.version === v)
          .sort((a, b) => a.plural.localeCompare(b.plural))
          .map(aggregatedResource),
        freshness: 'Current',
      })),
    }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items };
}
