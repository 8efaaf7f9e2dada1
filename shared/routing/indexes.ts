/**
 * The relay cache's secondary indexes: the objects a route looks up by a field other than their
 * name (client-go's indexers on an informer). Without them those routes scanned a namespace's
 * objects on every event: a Secret event every Metal3Machine and Machine, a Node registration every
 * Metal3Machine, a released address every IPClaim, so O(fleet) per event and O(fleet²) per run.
 *
 * An index maps an object to the keys it is found under, each `<namespace>/<value>`: the
 * namespace the route looks in and the value it looks for.
 */
import { fieldOf, listOf } from '../api/json.ts';
import type { KindName } from '../api/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import { isDeleting, nsOf, refOf, spec, status } from './predicates.ts';

export interface IndexDef {
  kind: KindName;
  keys(o: KubeObject): string[];
}

/** `<namespace of the ref, else the object's>/<name>` of a reference, or nothing. */
const refKey = (v: unknown, o: KubeObject): string[] => {
  if (v === undefined) return [];
  const r = refOf(v);
  return r.name ? [`${r.namespace || nsOf(o)}/${r.name}`] : [];
};

export const INDEXES = {
  /** Metal3Machines by the Secrets of their metaData and networkData. */
  metal3MachineDataSecret: {
    kind: 'Metal3Machine',
    keys: (m) => [...refKey(spec(m).metaData, m), ...refKey(spec(m).networkData, m)],
  },
  /** Machines by their bootstrap data Secret. */
  machineBootstrapSecret: {
    kind: 'Machine',
    keys: (m) => {
      const name = fieldOf(m, 'spec', 'bootstrap', 'dataSecretName');
      return typeof name === 'string' && name ? [`${nsOf(m)}/${name}`] : [];
    },
  },
  /** Metal3Machines by the hostnames among their status addresses. */
  metal3MachineHostname: {
    kind: 'Metal3Machine',
    keys: (m) =>
      listOf(status(m).addresses)
        .filter((a) => fieldOf(a, 'type') === 'Hostname' && typeof fieldOf(a, 'address') === 'string')
        .map((a) => `${nsOf(m)}/${String(fieldOf(a, 'address'))}`),
  },
  /**
   * IPClaims still waiting for an address (none yet, not deleting) by their pool (spec.pool): an
   * address freed wakes these, and only these are looked for; all of a pool's claims under one key
   * made each release in a scale-down a pass over the fleet's claims.
   */
  pendingIpClaimPool: {
    kind: 'IPClaim',
    keys: (c) => (isDeleting(c) || status(c).address ? [] : refKey(spec(c).pool, c)),
  },
} as const satisfies Record<string, IndexDef>;

export type IndexName = keyof typeof INDEXES;

const isIndexName = (k: string): k is IndexName => Object.hasOwn(INDEXES, k);

/** The indexes of one kind. */
export const indexesOf = (kind: KindName): [IndexName, IndexDef][] =>
  Object.keys(INDEXES)
    .filter(isIndexName)
    .flatMap((name): [IndexName, IndexDef][] => {
      const def: IndexDef = INDEXES[name];
      return def.kind === kind ? [[name, def]] : [];
    });
