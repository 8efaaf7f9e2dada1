/** Objects and addresses shared by the render tests (hand-written, not produced by the code). */
import type { BareMetalHost, Machine, Metal3Machine } from '../../shared/api/index.ts';
import type { AllocatedAddress } from '../../shared/ipam/allocate.ts';
import { RenderError, type RenderInputs, type TemplateSpec } from '../../shared/render/index.ts';

export const machine: Machine = {
  apiVersion: 'cluster.x-k8s.io/v1beta1',
  kind: 'Machine',
  metadata: {
    name: 'machine-1',
    namespace: 'default',
    labels: { mylabelkey: 'label-value', 'cluster.x-k8s.io/cluster-name': 'cluster-1' },
    annotations: {
      myannotationkey: 'annotation-value',
      'primary-mac': '00:00:5e:00:53:01',
      'pool-name': 'pool-a',
    },
  },
};

export const metal3Machine: Metal3Machine = {
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'Metal3Machine',
  metadata: {
    name: 'm3m-1',
    namespace: 'default',
    labels: { role: 'worker' },
    annotations: { 'metal3.io/BareMetalHost': 'default/node-0', 'bad-mac': 'not-a-mac', empty: '' },
  },
  spec: { image: { url: 'http://img/x.qcow2', checksum: 'http://img/x.qcow2.sha256' } },
} as Metal3Machine;

export const bmh: BareMetalHost = {
  apiVersion: 'metal3.io/v1alpha1',
  kind: 'BareMetalHost',
  metadata: {
    name: 'node-0',
    namespace: 'default',
    labels: { rack: 'r1' },
    annotations: { 'host-mac': '00-00-5E-00-53-FF' },
  },
  spec: { bootMACAddress: '00:00:5e:00:53:b0' },
  status: {
    hardware: {
      nics: [
        { name: 'eth0', mac: '00:00:5e:00:53:a0', ip: '192.168.0.50' },
        { name: 'eth1', mac: '00:00:5e:00:53:a1' },
        { name: 'eth0', mac: '00:00:5e:00:53:ee' },
      ],
    },
  },
} as BareMetalHost;

export const pool1: AllocatedAddress = {
  address: '192.168.0.13',
  prefix: 24,
  gateway: '192.168.0.1',
  dnsServers: ['8.8.8.8', '8.8.4.4'],
};
export const pool6: AllocatedAddress = {
  address: '2001:db8::13',
  prefix: 64,
  gateway: '2001:db8::1',
  dnsServers: ['2001:db8::53'],
};
export const poolNoGateway: AllocatedAddress = { address: '10.0.0.5', prefix: 8, dnsServers: [] };

export function inputs(overrides: Partial<RenderInputs> = {}): RenderInputs {
  return {
    index: 3,
    namespace: 'default',
    machine,
    metal3Machine,
    bmh,
    addresses: { 'pool-1': pool1, 'pool6-1': pool6, 'pool-a': pool1, 'pool-nogw': poolNoGateway },
    ...overrides,
  };
}

/** Templates in tests are partial literals; the renderer must not rely on schema defaults it does not need. */
export function template(spec: unknown): TemplateSpec {
  return spec as TemplateSpec;
}

/** Runs `fn`, asserting it throws a RenderError with exactly this field and message. */
export function renderErrorOf(fn: () => unknown): { field: string; message: string } {
  try {
    fn();
  } catch (e) {
    if (e instanceof RenderError) return { field: e.field, message: e.message };
    throw e;
  }
  throw new Error('expected a RenderError, nothing was thrown');
}
