/** The drain of a claim's tenant Node: which Pods kubectl drain would evict, and what follows a pass. */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../shared/api/core.ts';
import { drainOutcome, drainSkip, planDrain } from '../../../shared/vmetal/drain.ts';

const pod = (name: string, meta: Partial<Pod['metadata']> = {}): Pod => ({
  metadata: { name, namespace: 'default', ...meta },
  spec: { nodeName: 'n1' },
});
const owned = (kind: string, apiVersion = 'apps/v1', controller = true) => ({
  ownerReferences: [{ apiVersion, kind, name: 'x', uid: 'u', controller }],
});

describe('drainSkip', () => {
  it.each<[string, Pod, string | undefined]>([
    ['a bare Pod', pod('a'), undefined],
    ['a ReplicaSet Pod', pod('a', owned('ReplicaSet')), undefined],
    ['a DaemonSet Pod', pod('a', owned('DaemonSet')), 'DaemonSet'],
    [
      'a DaemonSet owner that is not the controller',
      pod('a', owned('DaemonSet', 'apps/v1', false)),
      undefined,
    ],
    ['a DaemonSet of another group', pod('a', owned('DaemonSet', 'example.com/v1')), undefined],
    [
      'a mirror Pod (static Pod of the kubelet)',
      pod('a', { annotations: { 'kubernetes.io/config.mirror': 'h' } }),
      'mirror',
    ],
  ])('%s', (_n, p, want) => {
    expect(drainSkip(p)).toBe(want);
  });
});

describe('planDrain', () => {
  it('evicts the others, waits for the terminating ones without evicting them again', () => {
    const plan = planDrain([
      pod('web'),
      pod('ds', owned('DaemonSet')),
      pod('going', { deletionTimestamp: '2026-01-01T00:00:00Z' }),
      pod('mirror', { annotations: { 'kubernetes.io/config.mirror': 'h' } }),
    ]);
    expect(plan.evict.map((p) => p.metadata.name)).toEqual(['web']);
    expect(plan.remaining.map((p) => p.metadata.name)).toEqual(['web', 'going']);
  });
});

describe('drainOutcome', () => {
  it.each<[string, Parameters<typeof drainOutcome>[0], object]>([
    [
      'nothing left: delete the Node',
      { node: 'n1', left: 0, blocked: [], elapsedSeconds: 1 },
      { kind: 'deleteNode' },
    ],
    [
      'a PDB refused: wait, naming it',
      { node: 'n1', left: 1, blocked: ['default/web: Cannot evict pod'], elapsedSeconds: 10 },
      {
        kind: 'wait',
        message: 'draining: 1 Pod(s) left on Node n1; evictions refused: default/web: Cannot evict pod',
      },
    ],
    ['Pods terminating: wait', { node: 'n1', left: 2, blocked: [], elapsedSeconds: 299 }, { kind: 'wait' }],
    [
      'the timeout passed: delete anyway, saying so',
      { node: 'n1', left: 1, blocked: [], elapsedSeconds: 300 },
      {
        kind: 'timedOut',
        message: 'drain timeout (300s) passed with 1 Pod(s) left on Node n1: deleting the Node anyway',
      },
    ],
    [
      'the tenant refused the drain (403): wait, naming the grants, even with no Pod counted',
      { node: 'n1', left: 0, blocked: [], elapsedSeconds: 10, forbidden: 'list pods: forbidden' },
      {
        kind: 'wait',
        message:
          'draining: the tenant refused the drain of Node n1 (list pods: forbidden; the workload identity needs list pods and create pods/eviction)',
      },
    ],
    [
      'a refused drain is bounded by the timeout too',
      { node: 'n1', left: 0, blocked: [], elapsedSeconds: 300, forbidden: 'list pods: forbidden' },
      { kind: 'timedOut', message: expect.stringContaining('deleting the Node anyway') },
    ],
    [
      'a shorter timeout',
      { node: 'n1', left: 1, blocked: [], elapsedSeconds: 5, timeoutSeconds: 5 },
      { kind: 'timedOut' },
    ],
  ])('%s', (_n, input, want) => {
    expect(drainOutcome(input)).toMatchObject(want);
  });
});
