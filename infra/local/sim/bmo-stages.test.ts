import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { buildMetaData, nextStage } from './bmo-stages.ts';

const host = (
  state: string,
  spec: Record<string, unknown> = {},
  status: Record<string, unknown> = {},
): KubeObject => ({
  metadata: { name: 'h-1', namespace: 'metal3', uid: 'uid-1' },
  spec: { bootMACAddress: '52:54:00:00:01:07', ...spec },
  status: state === '<none>' ? {} : { provisioning: { state }, ...status },
});
const IMG = { image: { url: 'http://i' }, consumerRef: { name: 'm' } };
const delays = { registeringMs: 1, provisioningMs: 2, deprovisioningMs: 3, powerMs: 4 };

describe('nextStage', () => {
  it.each([
    ['<none>', {}, {}, 'register', 1],
    ['registering', {}, {}, 'register', 1],
    ['available', {}, { poweredOn: false }, undefined, 0],
    ['available', { image: { url: 'http://i' } }, { poweredOn: false }, undefined, 0], // no consumer: not ours to provision
    ['available', IMG, {}, 'provision', 0],
    ['ready', { customDeploy: { method: 'x' }, consumerRef: { name: 'm' } }, {}, 'provision', 0],
    ['provisioning', IMG, {}, 'provisioned', 2],
    ['provisioning', IMG, { errorMessage: 'boom' }, undefined, 0],
    ['provisioning', {}, {}, 'deprovision', 0],
    ['provisioned', { ...IMG, online: true }, { poweredOn: true }, undefined, 0],
    ['provisioned', { ...IMG, online: false }, { poweredOn: true }, 'power', 4],
    ['provisioned', {}, { poweredOn: true }, 'deprovision', 0],
    ['deprovisioning', {}, {}, 'deprovisioned', 3],
    ['available', { online: true }, { poweredOn: false }, 'power', 4],
  ])('%s %j %j -> %s', (state, spec, status, name, delay) => {
    const s = nextStage(host(state, spec, status), delays);
    expect(s?.name).toBe(name);
    if (s) expect(s.delayMs).toBe(delay);
  });

  it('registration seeds hardware from the boot MAC', () => {
    const h = host('<none>');
    nextStage(h, delays)!.apply(h);
    expect(h.status).toEqual({
      provisioning: { state: 'available' },
      hardware: { hostname: 'h-1', nics: [{ name: 'eth0', mac: '52:54:00:00:01:07', ip: '192.168.112.9' }] },
      poweredOn: false,
      errorMessage: '',
      operationalStatus: 'OK',
    });
  });
  it('provisioned follows spec.online; an injected failure sets errorMessage', () => {
    const ok = host('provisioning', { ...IMG, online: true });
    nextStage(ok, delays)!.apply(ok);
    expect(ok.status).toMatchObject({ provisioning: { state: 'provisioned' }, poweredOn: true });
    const bad = host('provisioning', IMG);
    const s = nextStage(bad, delays, true)!;
    expect(s.name).toBe('provision-error');
    s.apply(bad);
    expect(bad.status).toMatchObject({
      provisioning: { state: 'provisioning' },
      errorMessage: 'simulated provisioning failure: image write failed',
    });
  });
  it('deprovisioned clears errors and powers as asked', () => {
    const h = host(
      'deprovisioning',
      { online: false },
      { errorMessage: 'x', errorType: 'provisioning error', poweredOn: true },
    );
    nextStage(h, delays)!.apply(h);
    expect(h.status).toEqual({
      provisioning: { state: 'available' },
      poweredOn: false,
      errorMessage: '',
      operationalStatus: 'OK',
    });
  });
});

describe('buildMetaData (baremetal-operator config drive)', () => {
  const h = host('provisioning');
  it('starts from the host defaults', () => {
    expect(buildMetaData(h, undefined)).toEqual({
      uuid: 'uid-1',
      'metal3-namespace': 'metal3',
      'metal3-name': 'h-1',
      'local-hostname': 'h-1',
      local_hostname: 'h-1',
      name: 'h-1',
    });
  });
  it('lays the secret on top; non-strings are JSON', () => {
    expect(
      buildMetaData(h, { name: 'node-0', providerid: 'metal3/h-1/m', index: 2, uuid: 'other', gone: null }),
    ).toEqual({
      uuid: 'other',
      'metal3-namespace': 'metal3',
      'metal3-name': 'h-1',
      'local-hostname': 'h-1',
      local_hostname: 'h-1',
      name: 'node-0',
      providerid: 'metal3/h-1/m',
      index: '2',
    });
  });
});
