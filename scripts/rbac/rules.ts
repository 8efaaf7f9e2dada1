/**
 * Least-privilege RBAC from what the code actually calls: pure functions from the embedded API
 * server's request log to (apiGroup, resource[/subresource], verb) grants, from grants to readable
 * PolicyRules, and from a recorded observation to the exact text of the shipped role files.
 *
 * `scripts/gen-rbac.ts` runs the scenarios (impure) and records an `Observation`
 * (infra/deploy/rbac-observed.json); everything here is deterministic over it, so a test can
 * check that the committed YAML is what this module makes of the committed observation.
 */

/** The identities whose roles are generated. */
export type Identity = 'functions' | 'relay' | 'workload';
export const IDENTITIES: readonly Identity[] = ['functions', 'relay', 'workload'];

/** One thing an identity may do. `group` is '' for the core group. */
export interface Grant {
  group: string;
  /** Plural, or `plural/subresource`. */
  resource: string;
  verb: string;
}

/** The fields of a request log entry the builder reads (infra/local/apiserver/log.ts). */
export interface LogEntryLike {
  verb: string;
  resource: string;
  path: string;
  status: number;
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** A scenario the generator ran, and why (printed in the generated files). */
export interface ScenarioInfo {
  name: string;
  description: string;
}

/**
 * What the generator saw: per identity, per group, per resource, per verb, the scenarios in which
 * the request was made (sorted). The first scenario is the base (the sample with scale-down,
 * what the enforce test runs); grants seen only in later ones are the documented extra coverage.
 */
export interface Observation {
  scenarios: ScenarioInfo[];
  identities: Record<Identity, Record<string, Record<string, Record<string, string[]>>>>;
}

const VERB_ORDER = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
const GROUP_ORDER = [
  'infrastructure.cluster.x-k8s.io',
  'metal3.io',
  'ipam.metal3.io',
  'cluster.x-k8s.io',
  'controlplane.cluster.x-k8s.io',
  'bootstrap.cluster.x-k8s.io',
  '',
];

/**
 * The grant a logged request needed, or undefined for what RBAC does not govern here: discovery
 * and other non-resource paths (every authenticated user may read discovery), and requests that
 * were refused (401/403: a grant nobody had, not one the code needs).
 */
export function grantOf(e: LogEntryLike): Grant | undefined {
  if (e.status === 401 || e.status === 403) return undefined;
  if (e.resource.startsWith('/')) return undefined;
  const path = e.path.split('?')[0]!;
  const segs = path.split('/').filter(Boolean);
  let group: string;
  if (segs[0] === 'api') group = '';
  else if (segs[0] === 'apis' && segs[1]) group = segs[1];
  else return undefined;
  return { group, resource: e.resource, verb: e.verb };
}

export const grantKey = (g: Grant): string => `${g.group}|${g.resource}|${g.verb}`;

/** The distinct grants of a log, sorted. */
export function grantsFromLog(entries: readonly LogEntryLike[]): Grant[] {
  const seen = new Map<string, Grant>();
  for (const e of entries) {
    const g = grantOf(e);
    if (g) seen.set(grantKey(g), g);
  }
  return sortGrants([...seen.values()]);
}

export function emptyObservation(scenarios: ScenarioInfo[] = []): Observation {
  return { scenarios, identities: { functions: {}, relay: {}, workload: {} } };
}

/** Adds what one scenario's log shows an identity doing (mutates and returns `obs`). */
export function recordScenario(
  obs: Observation,
  identity: Identity,
  scenario: string,
  entries: readonly LogEntryLike[],
): Observation {
  const byGroup = obs.identities[identity];
  for (const g of grantsFromLog(entries)) {
    byGroup[g.group] ??= {};
    const byResource = byGroup[g.group]!;
    byResource[g.resource] ??= {};
    const byVerb = byResource[g.resource]!;
    byVerb[g.verb] ??= [];
    const scenarios = byVerb[g.verb]!;
    if (!scenarios.includes(scenario)) scenarios.push(scenario);
    scenarios.sort((a, b) => scenarioIndex(obs, a) - scenarioIndex(obs, b) || a.localeCompare(b));
  }
  return obs;
}

const scenarioIndex = (obs: Observation, name: string) => {
  const i = obs.scenarios.findIndex((s) => s.name === name);
  return i < 0 ? Number.MAX_SAFE_INTEGER : i;
};

/** Every grant of an identity in an observation, with the scenarios that needed it. */
export function observedGrants(obs: Observation, identity: Identity): (Grant & { scenarios: string[] })[] {
  const out: (Grant & { scenarios: string[] })[] = [];
  for (const [group, byResource] of Object.entries(obs.identities[identity] ?? {}))
    for (const [resource, byVerb] of Object.entries(byResource))
      for (const [verb, scenarios] of Object.entries(byVerb)) out.push({ group, resource, verb, scenarios });
  return sortGrants(out);
}

/**
 * The documented extra coverage: grants the base scenario (the first) did not need, which only
 * the other scenarios exercise. The enforce test accepts these as used without seeing them.
 */
export function extraCoverage(obs: Observation, identity: Identity): (Grant & { scenarios: string[] })[] {
  const base = obs.scenarios[0]?.name;
  return observedGrants(obs, identity).filter((g) => !g.scenarios.includes(base ?? ''));
}

function sortGrants<T extends Grant>(gs: T[]): T[] {
  return gs.sort(
    (a, b) =>
      groupRank(a.group) - groupRank(b.group) ||
      a.group.localeCompare(b.group) ||
      a.resource.localeCompare(b.resource) ||
      verbRank(a.verb) - verbRank(b.verb),
  );
}

const groupRank = (g: string) => {
  const i = GROUP_ORDER.indexOf(g);
  return i < 0 ? GROUP_ORDER.length : i;
};
const verbRank = (v: string) => {
  const i = VERB_ORDER.indexOf(v);
  return i < 0 ? VERB_ORDER.length : i;
};

/**
 * Readable rules: per API group (ours first, core last), per resource (its subresources right
 * after it); neighbours in a group that need exactly the same verbs and share a `topic` (by
 * default: none) share a rule.
 */
export function buildRules(
  grants: readonly Grant[],
  topic: (group: string, base: string) => string = () => '',
): PolicyRule[] {
  const verbsOf = new Map<string, Map<string, Set<string>>>(); // group -> resource -> verbs
  for (const g of grants) {
    const byRes = verbsOf.get(g.group) ?? new Map<string, Set<string>>();
    verbsOf.set(g.group, byRes);
    const verbs = byRes.get(g.resource) ?? new Set<string>();
    byRes.set(g.resource, verbs);
    verbs.add(g.verb);
  }
  const groups = [...verbsOf.keys()].sort((a, b) => groupRank(a) - groupRank(b) || a.localeCompare(b));
  const rules: PolicyRule[] = [];
  for (const group of groups) {
    const resources = [...verbsOf.get(group)!.keys()].sort((a, b) => {
      const [ab = '', as = ''] = a.split('/');
      const [bb = '', bs = ''] = b.split('/');
      return ab.localeCompare(bb) || as.localeCompare(bs);
    });
    const merged: { key: string; rule: PolicyRule }[] = [];
    for (const resource of resources) {
      const verbs = [...verbsOf.get(group)!.get(resource)!].sort(
        (a, b) => verbRank(a) - verbRank(b) || a.localeCompare(b),
      );
      const key = `${verbs.join(',')}|${topic(group, resource.split('/')[0]!)}`;
      const same = merged.find((m) => m.key === key);
      if (same) same.rule.resources.push(resource);
      else merged.push({ key, rule: { apiGroups: [group], resources: [resource], verbs } });
    }
    rules.push(...merged.map((m) => m.rule));
  }
  return rules;
}

/** The grants a set of rules gives (no wildcards: generated rules have none). */
export function grantsOfRules(rules: readonly PolicyRule[]): Grant[] {
  const out: Grant[] = [];
  for (const r of rules)
    for (const group of r.apiGroups)
      for (const resource of r.resources) for (const verb of r.verbs) out.push({ group, resource, verb });
  return sortGrants(out);
}

// ---------------------------------------------------------------------------------------------
// Rendering the shipped files.

/** Why each resource is there (comments above the rules; the grants come from the log only). */
const NOTES: Record<Identity, Record<string, string>> = {
  functions: {
    'infrastructure.cluster.x-k8s.io|metal3machines':
      'selectHost, resolveProviderID, deprovision: the machine, its finalizer, spec and status.',
    'infrastructure.cluster.x-k8s.io|metal3machinetemplates':
      'automatedCleaningMode propagation; nodeReuse on release.',
    'infrastructure.cluster.x-k8s.io|metal3clusters': 'reconcileCluster (the InfraCluster contract).',
    'infrastructure.cluster.x-k8s.io|metal3datatemplates':
      'allocateIndex: indexes kept in the template status; its finalizer (deletion protection), cluster label and owner.',
    'infrastructure.cluster.x-k8s.io|metal3dataclaims':
      'selectHost creates the claim; allocateIndex answers it; deprovision releases it.',
    'infrastructure.cluster.x-k8s.io|metal3datas':
      'allocation by deterministic name (create is the arbiter); renderData.',
    'metal3.io|baremetalhosts':
      'the host claim is a resourceVersion-checked write (the lock); the BMO owns status.',
    'ipam.metal3.io|ippools':
      'IPAM: pools are read, their finalizer (deletion protection) kept, allocations kept in their status.',
    'ipam.metal3.io|ipclaims': 'renderData claims addresses; allocateIndex answers; release deletes.',
    'ipam.metal3.io|ipaddresses': 'allocation by deterministic name; release deletes.',
    'cluster.x-k8s.io|machines': 'owner Machine: bootstrap data, failure domain, node reuse owner.',
    'cluster.x-k8s.io|clusters': 'pause and infrastructure readiness.',
    'cluster.x-k8s.io|machinesets': 'node reuse: MachineSet -> MachineDeployment.',
    'controlplane.cluster.x-k8s.io|kubeadmcontrolplanes': 'node reuse owner of control-plane machines.',
    '|secrets':
      "rendered metaData/networkData Secrets (created, read back, deleted on release); user data Secrets and <cluster>-kubeconfig are read; the hosts' BMC credentials Secrets get the cluster-name label on association, removed on release (update, labels only).",
    '|events': 'Events on the objects (a repeat bumps count: get + patch).',
  },
  relay: {},
  workload: {},
};

const noteOf = (identity: Identity, group: string, base: string): string =>
  NOTES[identity][`${group}|${base}`] ?? '';

/** A YAML flow sequence of names, quoted where needed (`['']` for the core group). */
export const flow = (xs: readonly string[]): string =>
  `[${xs.map((x) => (x === '' || /[^a-z0-9./*-]/i.test(x) ? `'${x}'` : x)).join(', ')}]`;

export const ROLE_NAMES: Record<Identity, string> = {
  functions: 'metal3fn-functions',
  relay: 'metal3fn-relay',
  workload: 'metal3fn-workload-nodes',
};

export const ROLE_FILES: Record<Identity, string> = {
  functions: 'infra/deploy/common/rbac-functions.yaml',
  relay: 'infra/deploy/common/rbac-relay.yaml',
  workload: 'infra/deploy/workload-rbac.yaml',
};

const INTRO: Record<Identity, string[]> = {
  functions: [
    'The reconcile functions (ServiceAccount metal3fn-functions): the workers here, the Knative',
    "Services (infra/knative), and the identity behind the Lambda functions' kubeconfig.",
    'Workload-cluster Node patches use the workload kubeconfig, not this account: see',
    'infra/deploy/workload-rbac.yaml. Without a relay (infra/knative/apiserversource) the Services',
    'route events themselves; the lists that needs are added by the generated',
    'infra/knative/apiserversource/rbac-functions-routing.yaml.',
  ],
  relay: [
    'The relay (ServiceAccount metal3fn-relay): list + watch of what the routing table reads',
    '(shared/routing: watchedKinds), get of <cluster>-kubeconfig Secrets to watch',
    'workload Nodes. It never writes to the cluster.',
  ],
  workload: [
    'For each WORKLOAD cluster (apply it there, not in the management cluster): what the product',
    'does with the identity of the <cluster>-kubeconfig Secret (key `value`). The relay watches',
    "Nodes (to route a Node event to its machine); resolveProviderID finds the machine's Node and",
    'patches spec.providerID. When that kubeconfig is the kubeadm admin, this is already granted;',
    'when you issue a narrower identity for it, bind this ClusterRole to it (edit the subject).',
  ],
};

const SCOPE = [
  'Scope: ClusterRole + ClusterRoleBinding, by design. The relay lists and watches across all',
  'namespaces (one watch per kind, not per namespace), and the functions reconcile objects in',
  'whichever namespace the clusters live; a namespaced Role would have to be repeated per',
  'namespace. Nodes are cluster-scoped.',
];

/** The exact text of a shipped role file, from an observation. */
export function renderRoleFile(identity: Identity, obs: Observation): string {
  const grants = observedGrants(obs, identity);
  const rules = buildRules(grants, (g, base) => noteOf(identity, g, base));
  const extra = extraCoverage(obs, identity);
  const name = ROLE_NAMES[identity];
  const lines: string[] = [
    `# GENERATED by scripts/gen-rbac.ts from the API server's request log: do not edit by hand.`,
    '# Regenerate: npm run gen:rbac (runs the scenarios below with RBAC in observe mode and keeps',
    '# the union of (apiGroup, resource, verb) this identity used; the observation is recorded in',
    '# infra/deploy/rbac-observed.json). test/integration/rbac/ runs the system with exactly these',
    '# rules enforced, and fails on a refused request or a grant nothing uses.',
    '#',
    ...INTRO[identity].map((l) => `# ${l}`),
    '#',
    ...SCOPE.map((l) => `# ${l}`),
    '#',
    '# Scenarios:',
    ...obs.scenarios.map((s) => `#   ${s.name}: ${s.description}`),
  ];
  if (extra.length) {
    lines.push(`#   Grants not needed by ${obs.scenarios[0]?.name ?? 'the base scenario'} (extra coverage):`);
    for (const g of extra)
      lines.push(`#     ${g.verb} ${g.group || 'core'}/${g.resource}: ${g.scenarios.join(', ')}`);
  }
  if (identity !== 'workload') {
    lines.push('apiVersion: v1', 'kind: ServiceAccount', 'metadata:', `  name: ${name}`, '---');
  }
  lines.push(
    'apiVersion: rbac.authorization.k8s.io/v1',
    'kind: ClusterRole',
    'metadata:',
    `  name: ${name}`,
    rules.length ? 'rules:' : 'rules: []',
  );
  const noted = new Set<string>();
  for (const r of rules) {
    const note = noteOf(identity, r.apiGroups[0]!, r.resources[0]!.split('/')[0]!);
    if (note && !noted.has(note)) lines.push(`  # ${note}`);
    noted.add(note);
    lines.push(...ruleLines(r));
  }
  lines.push(
    ...clusterRoleBinding(
      name,
      identity === 'workload'
        ? [
            '  # The identity of the workload kubeconfig (metal3fn dev uses this user name).',
            '  - kind: User',
            '    apiGroup: rbac.authorization.k8s.io',
            '    name: metal3fn-workload',
          ]
        : serviceAccountSubject(name, 'metal3fn-system'),
    ),
  );
  return `${lines.join('\n')}\n`;
}

/** One rule of a ClusterRole, as the lines of its `rules:` list. */
export function ruleLines(r: PolicyRule): string[] {
  return [
    `  - apiGroups: ${flow(r.apiGroups)}`,
    `    resources: ${flow(r.resources)}`,
    `    verbs: ${flow(r.verbs)}`,
  ];
}

/** `---` and a ClusterRoleBinding of the ClusterRole `name` (binding named alike) to `subjects`. */
export function clusterRoleBinding(name: string, subjects: readonly string[]): string[] {
  return [
    '---',
    'apiVersion: rbac.authorization.k8s.io/v1',
    'kind: ClusterRoleBinding',
    'metadata:',
    `  name: ${name}`,
    'roleRef:',
    '  apiGroup: rbac.authorization.k8s.io',
    '  kind: ClusterRole',
    `  name: ${name}`,
    'subjects:',
    ...subjects,
  ];
}

/** A ServiceAccount as a binding subject. */
export const serviceAccountSubject = (name: string, namespace: string): string[] => [
  '  - kind: ServiceAccount',
  `    name: ${name}`,
  `    namespace: ${namespace}`,
];

/** The observation as committed (stable key order, one line per grant's scenario list). */
export function renderObservation(obs: Observation): string {
  const identities: Record<string, Record<string, Record<string, Record<string, string[]>>>> = {};
  for (const id of IDENTITIES) {
    const out: Record<string, Record<string, Record<string, string[]>>> = {};
    for (const g of observedGrants(obs, id)) {
      out[g.group] ??= {};
      const byRes = out[g.group]!;
      byRes[g.resource] ??= {};
      byRes[g.resource]![g.verb] = g.scenarios;
    }
    identities[id] = out;
  }
  return `${JSON.stringify({ scenarios: obs.scenarios, identities }, null, 2)}\n`;
}
