import { describe, expect, it } from 'vitest';
import { conditionsLine, machinePhase } from '../../../infra/local/dev/phase.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

const m3m = (extra: Partial<KubeObject> & { annotations?: Record<string, string> } = {}): KubeObject => ({
  kind: 'Metal3Machine',
  metadata: {
    name: 'm',
    namespace: 'metal3',
    annotations: extra.annotations ?? {},
    ...(extra.metadata ?? {}),
  },
  spec: extra.spec ?? {},
  status: extra.status ?? {},
});
const host = (state: string, image = false): KubeObject => ({
  kind: 'BareMetalHost',
  metadata: { name: 'h' },
  spec: image ? { image: { url: 'http://x' } } : {},
  status: { provisioning: { state } },
});
const runningMachine: KubeObject = {
  kind: 'Machine',
  metadata: { name: 'm' },
  status: { nodeRef: { name: 'n' }, phase: 'Running' },
};
const annotated = { annotations: { 'metal3.io/BareMetalHost': 'metal3/h' } };

describe('machinePhase', () => {
  it.each([
    ['no host yet', { m3m: m3m() }, 'waiting for host'],
    ['annotated, host untouched', { m3m: m3m(annotated), host: host('available') }, 'associated'],
    ['host has image', { m3m: m3m(annotated), host: host('available', true) }, 'data ready'],
    ['host provisioning', { m3m: m3m(annotated), host: host('provisioning', true) }, 'provisioning'],
    [
      'providerID set, Machine not yet Running',
      {
        m3m: m3m({ ...annotated, spec: { providerID: 'metal3://a/b/c' }, status: { ready: true } }),
        host: host('provisioned', true),
      },
      'providerID',
    ],
    [
      'ready on both sides',
      {
        m3m: m3m({ ...annotated, spec: { providerID: 'metal3://a/b/c' }, status: { ready: true } }),
        host: host('provisioned', true),
        machine: runningMachine,
      },
      'Ready',
    ],
    [
      'failure recorded',
      { m3m: m3m({ status: { failureReason: 'InvalidConfiguration', failureMessage: 'bad selector' } }) },
      'failed',
    ],
    [
      'deleting',
      { m3m: m3m({ metadata: { name: 'm', deletionTimestamp: '2026-01-01T00:00:00Z' } }) },
      'deleting',
    ],
  ] as const)('%s', (_name, objs, expected) => {
    expect(machinePhase(objs as never)).toBe(expected);
  });
});

describe('conditionsLine', () => {
  it('names failure and the conditions that are not True', () => {
    const obj = m3m({
      status: {
        failureReason: 'InvalidConfiguration',
        failureMessage: 'spec.hostSelector: bad operator',
        conditions: [
          { type: 'Ready', status: 'False', reason: 'AssociateBMHFailed', message: 'no host' },
          { type: 'AssociateBMH', status: 'True' },
        ],
      },
    });
    expect(conditionsLine(obj)).toBe(
      'InvalidConfiguration: spec.hostSelector: bad operator; Ready=False (AssociateBMHFailed: no host)',
    );
  });
  it('says so when nothing is reported', () => {
    expect(conditionsLine(m3m())).toBe('no conditions reported');
  });
});
