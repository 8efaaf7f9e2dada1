import { describe, expect, it } from 'vitest';
import { type BareMetalHost, parseBareMetalHost } from '../../../shared/api/baremetalhost.ts';
import { NODE_REUSE_LABEL } from '../../../shared/api/wellknown.ts';
import { metal3MachineConsumer } from '../../../shared/hosts/consumer.ts';
import {
  applyDeprovision,
  applyRelease,
  deprovisionOnline,
  hostReleasable,
} from '../../../shared/hosts/release.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

const host = (
  spec: Record<string, unknown>,
  status: Record<string, unknown> = {},
  meta: Partial<KubeObject['metadata']> = {},
): BareMetalHost =>
  parseBareMetalHost({
    metadata: { name: 'h', namespace: 'ns', ...meta },
    spec,
    status,
  });

describe('hostReleasable (spec §9 step 5)', () => {
  it.each([
    ['', undefined, true],
    ['unmanaged', undefined, true],
    ['registering', undefined, true],
    ['match profile', undefined, true],
    ['inspecting', undefined, true],
    ['ready', undefined, true],
    ['available', undefined, true],
    ['provisioning', undefined, false],
    ['provisioned', true, false],
    ['deprovisioning', undefined, false],
    ['externally provisioned', true, false],
    ['externally provisioned', false, true],
    ['powering off before delete', undefined, false],
  ])('%j poweredOn=%s -> %s', (state, poweredOn, expected) => {
    expect(hostReleasable(host({}, { provisioning: { state }, poweredOn }))).toBe(expected);
  });
});

describe('deprovisionOnline', () => {
  it.each([
    [{}, false, false],
    [{}, true, true],
    [{ automatedCleaningMode: 'metadata' }, true, true],
    [{ automatedCleaningMode: 'disabled' }, true, false],
    [{ disablePowerOff: true }, false, true],
    [{ disablePowerOff: true, automatedCleaningMode: 'disabled' }, true, true],
  ])('%j fastTrack=%s -> %s', (spec, fastTrack, expected) => {
    expect(deprovisionOnline(host(spec), fastTrack)).toBe(expected);
  });
});

describe('applyDeprovision', () => {
  const ours = {
    userData: { name: 'u', namespace: 'ns' },
    metaData: { name: 'm', namespace: 'ns' },
    networkData: { name: 'n', namespace: 'ns' },
  };
  it('clears image, customDeploy and the data refs the machine set, and sets power once', () => {
    const h = host({
      image: { url: 'x' },
      customDeploy: { method: 'm' },
      userData: { name: 'u', namespace: 'ns' },
      metaData: { name: 'm' }, // namespace defaults to the host's
      networkData: { name: 'n', namespace: 'ns' },
      online: true,
      bootMACAddress: 'b',
      consumerRef: { name: 'm1' },
    });
    expect(applyDeprovision(h, false, ours)).toBe(true);
    expect(h.spec).toEqual({ online: false, bootMACAddress: 'b', consumerRef: { name: 'm1' } });
    // Second time: nothing left to clear, power left as the administrator set it.
    (h.spec as any).online = true;
    expect(applyDeprovision(h, false, ours)).toBe(false);
    expect((h.spec as any).online).toBe(true);
  });
  it.each([
    [
      "the host's own metaData/networkData (the machine set none): kept",
      {
        image: { url: 'x' },
        userData: { name: 'u', namespace: 'ns' },
        metaData: { name: 'adm-m' },
        networkData: { name: 'adm-n' },
      },
      { userData: ours.userData },
      { metaData: { name: 'adm-m' }, networkData: { name: 'adm-n' }, online: false },
    ],
    [
      'a ref naming another Secret than the one the machine set: kept',
      {
        image: { url: 'x' },
        metaData: { name: 'adm-m', namespace: 'ns' },
        networkData: { name: 'n', namespace: 'ns' },
      },
      ours,
      { metaData: { name: 'adm-m', namespace: 'ns' }, online: false },
    ],
    [
      'same name in another namespace: kept',
      { image: { url: 'x' }, metaData: { name: 'm', namespace: 'other' } },
      ours,
      { metaData: { name: 'm', namespace: 'other' }, online: false },
    ],
    [
      'no machine status at all: only the image goes',
      { image: { url: 'x' }, userData: { name: 'u' } },
      {},
      { userData: { name: 'u' }, online: false },
    ],
  ])('%s', (_t, spec, set, expected) => {
    const h = host({ ...spec, online: true });
    expect(applyDeprovision(h, false, set)).toBe(true);
    expect(h.spec).toEqual(expected);
  });
  it("nothing the machine set is left (only the host's own refs): no write, power untouched", () => {
    const h = host({ metaData: { name: 'adm-m' }, online: true });
    expect(applyDeprovision(h, false, ours)).toBe(false);
    expect(h.spec).toEqual({ metaData: { name: 'adm-m' }, online: true });
  });
});

describe('applyRelease', () => {
  const labels = { 'cluster.x-k8s.io/cluster-name': 'c1', keep: 'me' };
  it.each([
    ['plain release', 'c1', undefined, { paused: 'metal3.io/capm3' }, { keep: 'me' }, {}],
    [
      'node reuse label',
      'c1',
      'md-0',
      {},
      { keep: 'me', 'infrastructure.cluster.x-k8s.io/node-reuse': 'md-0' },
      {},
    ],
    ['another cluster label kept', 'c2', undefined, {}, labels, {}],
    ['unknown cluster: our label dropped', undefined, undefined, {}, { keep: 'me' }, {}],
    [
      'foreign pause kept',
      'c1',
      undefined,
      { paused: 'admin' },
      { keep: 'me' },
      { 'baremetalhost.metal3.io/paused': 'admin' },
    ],
  ] as const)('%s', (_n, cluster, reuse, pause, expectedLabels, expectedAnn) => {
    const ann: Record<string, string> =
      'paused' in pause ? { 'baremetalhost.metal3.io/paused': pause.paused } : {};
    const h = host(
      { consumerRef: { name: 'm1' }, online: false },
      {},
      { labels: { ...labels }, annotations: ann },
    );
    applyRelease(
      h,
      metal3MachineConsumer({ name: 'm1', namespace: 'ns' }, cluster),
      reuse ? { [NODE_REUSE_LABEL]: reuse } : {},
    );
    expect(h.spec).toEqual({ online: false });
    expect(h.metadata.labels).toEqual(expectedLabels);
    expect(h.metadata.annotations ?? {}).toEqual(expectedAnn);
  });
});
