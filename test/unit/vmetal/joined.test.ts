/** The claim's Provisioned / Joined / Available decision, one row per host and tenant state. */
import { describe, expect, it } from 'vitest';
import { decideJoinStatus, type JoinStatusInput } from '../../../shared/vmetal/joined.ts';

const host = (state: string, errorMessage = '') => ({ namespace: 'metal3', name: 'h1', state, errorMessage });
const base = (over: Partial<JoinStatusInput> = {}): JoinStatusInput => ({
  claimName: 'c1',
  nodeType: 'gpu',
  host: host('provisioned'),
  ...over,
});
const conds = (d: ReturnType<typeof decideJoinStatus>) =>
  d.kind === 'write'
    ? Object.fromEntries((d.change.conditions ?? []).map((c) => [c.type, [c.status, c.reason]]))
    : {};

describe('decideJoinStatus', () => {
  it.each<[string, Partial<JoinStatusInput>, object, object]>([
    [
      'host in error (any state): Failed with its errorMessage',
      { host: host('provisioned', 'image write failed') },
      {
        kind: 'write',
        next: 'failed',
        change: {
          phase: 'Failed',
          reason: 'HostError',
          message: 'BareMetalHost metal3/h1: image write failed',
        },
      },
      { Provisioned: ['False', 'HostError'] },
    ],
    [
      'host provisioning: Pending, Provisioned=False naming the state',
      { host: host('provisioning') },
      {
        kind: 'write',
        next: 'done',
        change: {
          phase: 'Pending',
          reason: 'HostNotProvisioned',
          message: 'BareMetalHost metal3/h1 is provisioning',
        },
      },
      { Provisioned: ['False', 'HostNotProvisioned'], Joined: ['False', 'HostNotProvisioned'] },
    ],
    [
      'host without a state yet',
      { host: host('') },
      {
        kind: 'write',
        change: { phase: 'Pending', message: 'BareMetalHost metal3/h1 is not provisioned yet' },
      },
      { Provisioned: ['False', 'HostNotProvisioned'] },
    ],
    ['provisioned, tenant not read yet: read it', {}, { kind: 'readTenant' }, {}],
    [
      'tenant unreachable: Pending, waits',
      { tenant: { kind: 'unreachable', message: 'workload cluster p/t unavailable' } },
      {
        kind: 'write',
        next: 'wait',
        change: {
          phase: 'Pending',
          reason: 'TenantClusterUnavailable',
          message: 'workload cluster p/t unavailable',
        },
      },
      { Provisioned: ['True', 'HostProvisioned'], Joined: ['False', 'TenantClusterUnavailable'] },
    ],
    [
      'no Node yet',
      { tenant: { kind: 'node', labels: undefined } },
      { kind: 'write', next: 'wait', change: { phase: 'Pending', reason: 'NodeNotRegistered' } },
      { Provisioned: ['True', 'HostProvisioned'], Joined: ['False', 'NodeNotRegistered'] },
    ],
    [
      'a Node without the node-type label',
      { tenant: { kind: 'node', labels: { 'kubernetes.io/os': 'linux' } } },
      {
        kind: 'write',
        next: 'wait',
        change: {
          reason: 'NodeTypeLabelMissing',
          message: 'Node c1 has no vcluster.com/node-type label, want gpu',
        },
      },
      { Joined: ['False', 'NodeTypeLabelMissing'] },
    ],
    [
      'a Node of another type',
      { tenant: { kind: 'node', labels: { 'vcluster.com/node-type': 'cpu' } } },
      { kind: 'write', change: { message: 'Node c1 has vcluster.com/node-type=cpu, want gpu' } },
      { Joined: ['False', 'NodeTypeLabelMissing'] },
    ],
    [
      'no node type recorded on the claim: never Available',
      { nodeType: undefined, tenant: { kind: 'node', labels: { 'vcluster.com/node-type': 'gpu' } } },
      { kind: 'write', change: { phase: 'Pending', reason: 'NodeTypeLabelMissing' } },
      { Joined: ['False', 'NodeTypeLabelMissing'] },
    ],
    [
      'the Node with the label: Available, nodeName, Joined=True',
      { tenant: { kind: 'node', labels: { 'vcluster.com/node-type': 'gpu' } } },
      {
        kind: 'write',
        next: 'done',
        change: { phase: 'Available', reason: undefined, message: undefined, fields: { nodeName: 'c1' } },
      },
      { Provisioned: ['True', 'HostProvisioned'], Joined: ['True', 'NodeJoined'] },
    ],
  ])('%s', (_name, over, expected, conditions) => {
    const d = decideJoinStatus(base(over));
    expect(d).toMatchObject(expected);
    expect(conds(d)).toMatchObject(conditions);
  });

  it('the error beats an unprovisioned state and is severity Error', () => {
    const d = decideJoinStatus(base({ host: host('provisioning', 'BMC unreachable') }));
    expect(d.kind === 'write' && d.change.conditions?.[0]).toMatchObject({ severity: 'Error' });
  });
});
