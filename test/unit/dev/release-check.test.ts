import { describe, expect, it } from 'vitest';
import { checkRelease, type ReleaseScope } from '../../../infra/local/dev/release-check.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

const obj = (
  kind: string,
  name: string,
  rest: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
): KubeObject => ({
  kind,
  metadata: { name, namespace: 'metal3', ...meta },
  ...rest,
});

describe('checkRelease', () => {
  it('accepts a clean pool of available hosts', () => {
    const clean = [
      obj('BareMetalHost', 'h0', {
        spec: { online: false },
        status: { provisioning: { state: 'available' } },
      }),
      obj('Secret', 'h0-bmc', { type: 'Opaque' }),
      obj('IPPool', 'pool-1', { spec: {} }, { finalizers: ['ippool.ipam.metal3.io'] }),
    ];
    expect(checkRelease(clean)).toEqual([]);
  });

  it("reports a released host's BMC credentials Secret still labelled for a cluster (a consumed host's may be)", () => {
    const host = (name: string, spec: Record<string, unknown>) =>
      obj('BareMetalHost', name, {
        spec: { bmc: { credentialsName: `${name}-bmc` }, ...spec },
        status: { provisioning: { state: 'available' } },
      });
    const bmc = (name: string, labels: Record<string, string>) =>
      obj('Secret', `${name}-bmc`, { type: 'Opaque' }, { labels });
    const objects = [
      host('h0', {}),
      bmc('h0', { team: 'infra' }),
      host('h1', { online: false }),
      bmc('h1', { 'cluster.x-k8s.io/cluster-name': 'c', team: 'infra' }),
      host('h2', { consumerRef: { name: 'm2' } }),
      bmc('h2', { 'cluster.x-k8s.io/cluster-name': 'c' }),
      host('h3', {}), // its Secret does not exist: nothing to report about it
    ];
    expect(checkRelease(objects).map((f) => `${f.object}: ${f.problem}`)).toEqual([
      'Secret metal3/h1-bmc: BMC credentials Secret of released BareMetalHost metal3/h1 still labelled cluster.x-k8s.io/cluster-name=c',
      'BareMetalHost metal3/h2: still consumed by {"name":"m2"}',
    ]);
  });

  it('reports every kind of leak', () => {
    const leaky = [
      obj('Metal3Data', 't-0'),
      obj('Metal3DataClaim', 'm0'),
      obj('IPClaim', 't-0-pool-1'),
      obj('IPAddress', 'pool-1-192-168-0-10'),
      obj('Secret', 'm0-metadata-0', { type: 'infrastructure.cluster.x-k8s.io/secret' }),
      obj('BareMetalHost', 'h1', {
        spec: { consumerRef: { name: 'm0' }, image: { url: 'x' } },
        status: { provisioning: { state: 'provisioned' } },
      }),
      obj('Metal3DataTemplate', 't', { status: { indexes: { '0': 'm0' }, allocating: {} } }),
      obj('IPPool', 'pool-1', { status: { indexes: {}, allocating: { b: 'x', a: 'y' } } }),
      obj(
        'Cluster',
        'c',
        {},
        { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['cluster.cluster.x-k8s.io'] },
      ),
    ];
    expect(checkRelease(leaky).map((f) => `${f.object}: ${f.problem}`)).toEqual([
      'Metal3Data metal3/t-0: still exists after scale-down',
      'Metal3DataClaim metal3/m0: still exists after scale-down',
      'IPClaim metal3/t-0-pool-1: still exists after scale-down',
      'IPAddress metal3/pool-1-192-168-0-10: still exists after scale-down',
      'Secret metal3/m0-metadata-0: rendered data Secret left behind',
      'BareMetalHost metal3/h1: still consumed by {"name":"m0"}',
      "BareMetalHost metal3/h1: state is 'provisioned', not available",
      'BareMetalHost metal3/h1: image not cleared',
      'Metal3DataTemplate metal3/t: status.indexes not empty: 0',
      'IPPool metal3/pool-1: status.allocating not empty: a, b',
      'Cluster metal3/c: deleting but held by finalizers cluster.cluster.x-k8s.io',
    ]);
  });

  describe('with a scope: what the product owns for the run, and hosts others held', () => {
    const uid = (kind: string, name: string) => `u-${kind}-${name}`;
    const own = (kind: string, name: string, controller = true) => ({
      apiVersion: 'x/v1',
      kind,
      name,
      uid: uid(kind, name),
      ...(controller ? { controller: true } : {}),
    });
    const o = (
      kind: string,
      name: string,
      rest: Record<string, unknown> = {},
      owners: ReturnType<typeof own>[] = [],
    ) =>
      obj(kind, name, rest, { uid: uid(kind, name), ...(owners.length ? { ownerReferences: owners } : {}) });
    const consumed = (name: string, by: string, extra: Record<string, unknown> = {}) =>
      o('BareMetalHost', name, {
        spec: {
          consumerRef: { kind: 'Metal3Machine', name: by, namespace: 'metal3' },
          image: { url: 'u' },
          ...extra,
        },
        status: { provisioning: { state: 'provisioned' } },
      });
    const free = (name: string) =>
      o('BareMetalHost', name, { spec: {}, status: { provisioning: { state: 'available' } } });
    // The run applied Machine m1; someone else's Metal3Machine theirs (no Machine of the run) has
    // its own claim and host; host legacy was held by legacy-7 before the run.
    const legacy = o(
      'BareMetalHost',
      'legacy',
      {
        spec: { consumerRef: { kind: 'Metal3Machine', name: 'legacy-7', namespace: 'metal3' }, online: true },
        status: { provisioning: { state: 'available' } },
      },
      [],
    );
    legacy.metadata.labels = { owner: 'legacy-team' };
    const theirs = [
      o('Metal3Machine', 'theirs'),
      o('Metal3DataClaim', 'theirs', {}, [own('Metal3Machine', 'theirs')]),
      consumed('h-theirs', 'theirs'),
    ];
    const run = [
      o('Machine', 'm1'),
      o('Metal3Machine', 'm1', {}, [own('Machine', 'm1')]),
      o('Metal3DataClaim', 'm1', {}, [own('Metal3Machine', 'm1')]),
      o('Metal3Data', 't-0', {}, [own('Metal3DataTemplate', 't'), own('Metal3DataClaim', 'm1', false)]),
      o('IPClaim', 't-0-pool', {}, [own('Metal3Data', 't-0')]),
      o('IPAddress', 'pool-10-0-0-1', {}, [own('IPPool', 'pool', false), own('IPClaim', 't-0-pool', false)]),
      o('Secret', 'm1-metadata-0', { type: 'infrastructure.cluster.x-k8s.io/secret' }, [
        own('Metal3Data', 't-0'),
      ]),
      consumed('h1', 'm1'),
    ];
    const template = (indexes: Record<string, string>) =>
      o('Metal3DataTemplate', 't', { status: { indexes } });
    const pool = (indexes: Record<string, string>) => o('IPPool', 'pool', { status: { indexes } });
    const scope: ReleaseScope = {
      applied: new Set([uid('Machine', 'm1')]),
      atReady: [
        ...run,
        ...theirs,
        legacy,
        template({ '0': 'm1', '1': 'theirs' }),
        pool({ 't-0-pool': '10.0.0.1' }),
      ],
      foreignHosts: [structuredClone(legacy)],
    };

    it("is clean when the run's objects are gone and the rest is as it was", () => {
      const after = [
        ...theirs,
        structuredClone(legacy),
        free('h1'),
        template({ '1': 'theirs' }),
        pool({ other: '10.0.0.9' }),
      ];
      expect(checkRelease(after, scope)).toEqual([]);
    });

    it("reports what is left of the run's machines, and a foreign host that changed, never others' objects", () => {
      const changed = structuredClone(legacy);
      changed.metadata.labels = { owner: 'legacy-team', 'cluster.x-k8s.io/cluster-name': 'c' };
      (changed.spec as Record<string, unknown>).online = false;
      const after = [
        ...theirs,
        changed,
        run[2]!, // the claim of m1
        run[6]!, // its data Secret
        consumed('h1', 'm1'),
        template({ '0': 'm1', '1': 'theirs' }),
        pool({ 't-0-pool': '10.0.0.1' }),
      ];
      expect(checkRelease(after, scope).map((f) => `${f.object}: ${f.problem}`)).toEqual([
        'BareMetalHost metal3/legacy: held by Metal3Machine metal3/legacy-7 before the run, and changed: spec, labels',
        'Metal3DataClaim metal3/m1: still exists after scale-down',
        'Secret metal3/m1-metadata-0: rendered data Secret left behind',
        'BareMetalHost metal3/h1: still consumed by {"kind":"Metal3Machine","name":"m1","namespace":"metal3"}',
        "BareMetalHost metal3/h1: state is 'provisioned', not available",
        'BareMetalHost metal3/h1: image not cleared',
        'Metal3DataTemplate metal3/t: status.indexes not empty: 0',
        'IPPool metal3/pool: status.indexes not empty: t-0-pool',
      ]);
    });

    it('reports a foreign host that was deleted', () => {
      expect(checkRelease([...theirs, free('h1')], scope).map((f) => `${f.object}: ${f.problem}`)).toEqual([
        'BareMetalHost metal3/legacy: held by Metal3Machine metal3/legacy-7 before the run, and deleted since',
      ]);
    });

    it('without a scope, the same foreign host is reported as consumed (the whole cluster is the run)', () => {
      expect(checkRelease([structuredClone(legacy)]).map((f) => f.problem)).toEqual([
        'still consumed by {"kind":"Metal3Machine","name":"legacy-7","namespace":"metal3"}',
      ]);
    });
  });
});
