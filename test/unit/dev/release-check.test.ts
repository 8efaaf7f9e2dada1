import { describe, expect, it } from 'vitest';
import { checkRelease } from '../../../infra/local/dev/release-check.ts';
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
});
