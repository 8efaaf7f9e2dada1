import { describe, expect, it } from 'vitest';
import {
  addressesFromHost,
  editStatus,
  hostnamesOf,
  setCondition,
  summarizeReady,
} from '../../../functions/resolve-provider-id/status.ts';
import type { Condition } from '../../../shared/api/index.ts';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:05:00Z';

describe('machine status edits', () => {
  it('setCondition keeps lastTransitionTime unless the status flips', () => {
    let c: Condition[] = setCondition(
      [],
      { type: 'KubernetesNodeReady', status: 'False', reason: 'WaitingForNode', severity: 'Info' },
      T0,
    );
    c = setCondition(
      c,
      { type: 'KubernetesNodeReady', status: 'False', reason: 'Other', severity: 'Info' },
      T1,
    );
    expect(c).toEqual([
      {
        type: 'KubernetesNodeReady',
        status: 'False',
        reason: 'Other',
        severity: 'Info',
        lastTransitionTime: T0,
      },
    ]);
    c = setCondition(c, { type: 'KubernetesNodeReady', status: 'True', severity: 'Info' }, T1);
    expect(c).toEqual([{ type: 'KubernetesNodeReady', status: 'True', lastTransitionTime: T1 }]);
  });

  it('Ready summarizes the worst other condition (v1beta1)', () => {
    const conds: Condition[] = [
      { type: 'AssociateBMH', status: 'True', lastTransitionTime: T0 },
      {
        type: 'KubernetesNodeReady',
        status: 'False',
        severity: 'Info',
        reason: 'WaitingForNode',
        message: 'm1',
        lastTransitionTime: T0,
      },
      {
        type: 'Metal3DataReady',
        status: 'False',
        severity: 'Error',
        reason: 'Bad',
        message: 'm2',
        lastTransitionTime: T0,
      },
    ];
    const out = summarizeReady(conds, T1);
    expect(out[0]).toEqual({
      type: 'Ready',
      status: 'False',
      severity: 'Error',
      reason: 'Bad',
      message: 'm2',
      lastTransitionTime: T1,
    });
    const allTrue = summarizeReady(
      conds.map((c) => ({ type: c.type, status: 'True' as const, lastTransitionTime: T0 })),
      T1,
    );
    expect(allTrue[0]).toEqual({ type: 'Ready', status: 'True', lastTransitionTime: T1 });
  });

  it('editStatus sets ready, keeps association addresses, records and clears our failures', () => {
    const obj: Record<string, unknown> = { status: { addresses: [{ type: 'Hostname', address: 'node-0' }] } };
    const own = new Set(['MultipleNodesWithUUIDLabel']);
    editStatus(
      obj,
      {
        failure: { reason: 'InvalidConfiguration', message: 'two nodes' },
        condition: {
          type: 'KubernetesNodeReady',
          status: 'False',
          severity: 'Error',
          reason: 'MultipleNodesWithUUIDLabel',
          message: 'two nodes',
        },
        fallbackAddresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
        ownErrorReasons: own,
      },
      T0,
    );
    expect(obj.status).toMatchObject({
      failureReason: 'InvalidConfiguration',
      failureMessage: 'two nodes',
      addresses: [{ type: 'Hostname', address: 'node-0' }],
    });
    editStatus(
      obj,
      { ready: true, condition: { type: 'KubernetesNodeReady', status: 'True' }, ownErrorReasons: own },
      T1,
    );
    const s = obj.status as Record<string, unknown>;
    expect(s.ready).toBe(true);
    expect(s.failureReason).toBeUndefined();
    expect(s.failureMessage).toBeUndefined();
    expect(s.conditions).toEqual([
      { type: 'Ready', status: 'True', lastTransitionTime: T1 },
      { type: 'KubernetesNodeReady', status: 'True', lastTransitionTime: T1 },
    ]);
  });

  it('does not clear failures another step recorded', () => {
    const obj: Record<string, unknown> = {
      status: { failureReason: 'InvalidConfiguration', failureMessage: 'bad selector' },
    };
    editStatus(
      obj,
      {
        ready: true,
        condition: { type: 'KubernetesNodeReady', status: 'True' },
        ownErrorReasons: new Set(['X']),
      },
      T0,
    );
    expect(obj.status).toMatchObject({
      failureReason: 'InvalidConfiguration',
      failureMessage: 'bad selector',
    });
  });

  it('falls back to host addresses when association left none', () => {
    const host = {
      metadata: {},
      status: { hardware: { hostname: 'node-0', nics: [{ ip: '192.168.1.5' }, { name: 'x' }] } },
    };
    const addrs = addressesFromHost(host);
    expect(addrs).toEqual([
      { type: 'InternalIP', address: '192.168.1.5' },
      { type: 'Hostname', address: 'node-0' },
    ]);
    expect(hostnamesOf(addrs)).toEqual(['node-0']);
    const obj: Record<string, unknown> = {};
    editStatus(
      obj,
      { condition: { type: 'KubernetesNodeReady', status: 'True' }, fallbackAddresses: addrs },
      T0,
    );
    expect((obj.status as { addresses: unknown }).addresses).toEqual(addrs);
  });
});
