import { describe, expect, it } from 'vitest';
import { addressesFromHost, editStatus, hostnamesOf } from '../../../functions/resolve-provider-id/status.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:05:00Z';
const D0 = new Date(T0);
const D1 = new Date(T1);

describe('machine status edits', () => {
  it('KubernetesNodeReady feeds the shared Ready summary; lastTransitionTime moves only on a flip', () => {
    const obj: KubeObject = {
      metadata: {},
      status: {
        conditions: [
          { type: 'AssociateBMH', status: 'True', lastTransitionTime: T0 },
          { type: 'Metal3DataReady', status: 'True', lastTransitionTime: T0 },
        ],
      },
    };
    editStatus(
      obj,
      {
        condition: {
          type: 'KubernetesNodeReady',
          status: 'False',
          severity: 'Info',
          reason: 'WaitingForNode',
          message: 'm1',
        },
      },
      D0,
    );
    editStatus(
      obj,
      {
        condition: {
          type: 'KubernetesNodeReady',
          status: 'False',
          severity: 'Info',
          reason: 'WaitingForNode',
          message: 'm2',
        },
      },
      D1,
    );
    expect((obj.status as { conditions: unknown }).conditions).toEqual([
      {
        type: 'Ready',
        status: 'False',
        severity: 'Info',
        reason: 'WaitingForNode',
        message: 'm2',
        lastTransitionTime: T0,
      },
      { type: 'AssociateBMH', status: 'True', lastTransitionTime: T0 },
      {
        type: 'KubernetesNodeReady',
        status: 'False',
        severity: 'Info',
        reason: 'WaitingForNode',
        message: 'm2',
        lastTransitionTime: T0,
      },
      { type: 'Metal3DataReady', status: 'True', lastTransitionTime: T0 },
    ]);
    editStatus(obj, { condition: { type: 'KubernetesNodeReady', status: 'True', severity: 'Info' } }, D1);
    expect((obj.status as { conditions: unknown }).conditions).toEqual([
      { type: 'Ready', status: 'True', lastTransitionTime: T1 },
      { type: 'AssociateBMH', status: 'True', lastTransitionTime: T0 },
      { type: 'KubernetesNodeReady', status: 'True', lastTransitionTime: T1 },
      { type: 'Metal3DataReady', status: 'True', lastTransitionTime: T0 },
    ]);
  });

  it('editStatus sets ready, keeps association addresses, records and clears our failures', () => {
    const obj: KubeObject = {
      metadata: {},
      status: { addresses: [{ type: 'Hostname', address: 'node-0' }] },
    };
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
      D0,
    );
    expect(obj.status).toMatchObject({
      failureReason: 'InvalidConfiguration',
      failureMessage: 'two nodes',
      addresses: [{ type: 'Hostname', address: 'node-0' }],
    });
    editStatus(
      obj,
      { ready: true, condition: { type: 'KubernetesNodeReady', status: 'True' }, ownErrorReasons: own },
      D1,
    );
    const s = obj.status as Record<string, unknown>;
    expect(s.ready).toBe(true);
    expect(s.failureReason).toBeUndefined();
    expect(s.failureMessage).toBeUndefined();
    expect(s.conditions).toContainEqual({
      type: 'KubernetesNodeReady',
      status: 'True',
      lastTransitionTime: T1,
    });
  });

  it('does not clear failures another step recorded', () => {
    const obj: KubeObject = {
      metadata: {},
      status: { failureReason: 'InvalidConfiguration', failureMessage: 'bad selector' },
    };
    editStatus(
      obj,
      {
        ready: true,
        condition: { type: 'KubernetesNodeReady', status: 'True' },
        ownErrorReasons: new Set(['X']),
      },
      D0,
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
    const obj: KubeObject = { metadata: {} };
    editStatus(
      obj,
      { condition: { type: 'KubernetesNodeReady', status: 'True' }, fallbackAddresses: addrs },
      D0,
    );
    expect((obj.status as { addresses: unknown }).addresses).toEqual(addrs);
  });
});
