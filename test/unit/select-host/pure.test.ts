import { describe, expect, it } from 'vitest';
import { needsDataTemplate } from '../../../functions/select-host/data.ts';
import {
  applyHostSpec,
  crossNamespaceProblem,
  hostAddresses,
} from '../../../functions/select-host/hostspec.ts';
import { type BareMetalHost, parseBareMetalHost } from '../../../shared/api/baremetalhost.ts';
import type { Metal3Machine } from '../../../shared/api/metal3machine.ts';
import {
  COND,
  setCondition,
  setMachineCondition,
  summarizeMachineReady,
} from '../../../shared/capi/conditions.ts';

const m3m = (spec: Partial<Metal3Machine['spec']>): Metal3Machine => ({
  metadata: { name: 'm', namespace: 'ns' },
  spec,
});
const host = (spec: Record<string, unknown> = {}, status: Record<string, unknown> = {}): BareMetalHost =>
  parseBareMetalHost({
    metadata: { name: 'h', namespace: 'ns' },
    spec,
    status,
  });
const IMG = {
  url: 'http://i/img',
  checksum: 'http://i/img.sha',
  checksumType: 'sha256' as const,
  format: 'raw' as const,
};
const refs = { userData: { name: 'ud', namespace: 'ns' } };

describe('applyHostSpec', () => {
  it('sets image, data refs, online and cleaning mode on a host without image', () => {
    const h = host({ online: false, bootMACAddress: 'x' });
    applyHostSpec(h, m3m({ image: IMG, automatedCleaningMode: 'disabled' }), {
      ...refs,
      networkData: { name: 'nd', namespace: 'ns' },
    });
    expect(h.spec).toEqual({
      online: true,
      bootMACAddress: 'x',
      image: { url: 'http://i/img', checksum: 'http://i/img.sha', checksumType: 'sha256', format: 'raw' },
      userData: { name: 'ud', namespace: 'ns' },
      networkData: { name: 'nd', namespace: 'ns' },
      automatedCleaningMode: 'disabled',
    });
  });
  it('writes an empty checksum for live-iso and omits unset fields', () => {
    const h = host();
    applyHostSpec(h, m3m({ image: { url: 'http://i/live.iso', format: 'live-iso' } }), refs);
    expect((h.spec as any).image).toEqual({ url: 'http://i/live.iso', checksum: '', format: 'live-iso' });
    expect(h.spec).not.toHaveProperty('metaData');
    expect(h.spec).not.toHaveProperty('automatedCleaningMode');
  });
  it('uses customDeploy when set', () => {
    const h = host();
    applyHostSpec(h, m3m({ customDeploy: { method: 'install_coreos' } }), refs);
    expect((h.spec as any).customDeploy).toEqual({ method: 'install_coreos' });
    expect(h.spec).not.toHaveProperty('image');
  });
  it('never changes an existing image or data; sets online: true on every pass and copies the cleaning mode (CAPM3 setHostSpec)', () => {
    const existing = { image: { url: 'http://old' }, userData: { name: 'old' } };
    const h = host({ ...existing, online: false });
    applyHostSpec(h, m3m({ image: IMG, automatedCleaningMode: 'metadata' }), refs);
    expect(h.spec).toEqual({ ...existing, online: true, automatedCleaningMode: 'metadata' });
  });
});

describe('hostAddresses', () => {
  it.each([
    [
      {
        hardware: {
          hostname: 'node-1',
          nics: [
            { name: 'eth0', ip: '10.0.0.5' },
            { name: 'eth1', ip: '' },
            { name: 'eth2', ip: 'fd00::5' },
          ],
        },
      },
      [
        { type: 'InternalIP', address: '10.0.0.5' },
        { type: 'InternalIP', address: 'fd00::5' },
        { type: 'Hostname', address: 'node-1' },
        { type: 'InternalDNS', address: 'node-1' },
      ],
    ],
    [
      { hardware: { nics: [{ name: 'eth0', ip: '10.0.0.5' }] } },
      [{ type: 'InternalIP', address: '10.0.0.5' }],
    ],
    [{}, []],
  ])('%j', (status, expected) => {
    expect(hostAddresses(host({}, status))).toEqual(expected);
  });
});

describe('crossNamespaceProblem', () => {
  it.each([
    [{}, undefined],
    [{ userData: { name: 'a' } }, undefined],
    [{ metaData: { name: 'a', namespace: 'ns' } }, undefined],
    [{ metaData: { name: 'a', namespace: 'other' } }, 'spec.metaData.namespace "other"'],
    [{ networkData: { name: 'a', namespace: 'x' } }, 'spec.networkData.namespace "x"'],
    [{ dataTemplate: { name: 't', namespace: 'y' } }, 'spec.dataTemplate.namespace "y"'],
  ])('%j', (spec, expected) => {
    const p = crossNamespaceProblem(m3m(spec as never));
    if (expected === undefined) expect(p).toBeUndefined();
    else
      expect(p).toMatch(
        new RegExp(`^${expected.replace(/[.]/g, '\\.')} differs from the Metal3Machine namespace "ns"`),
      );
  });
});

describe('needsDataTemplate (seed 001 hybrid rule)', () => {
  it.each([
    [{}, false],
    [{ dataTemplate: { name: 't' } }, true],
    [{ dataTemplate: { name: 't' }, metaData: { name: 'm' } }, true],
    [{ dataTemplate: { name: 't' }, metaData: { name: 'm' }, networkData: { name: 'n' } }, false],
    [{ metaData: { name: 'm' } }, false],
  ])('%j -> %s', (spec, expected) => {
    expect(needsDataTemplate(m3m(spec as never))).toBe(expected);
  });
});

describe('conditions', () => {
  const t0 = new Date('2026-01-01T00:00:00Z');
  const t1 = new Date('2026-01-01T01:00:00Z');
  it('keeps lastTransitionTime while the status does not change', () => {
    const a = setCondition(
      [],
      { type: 'X', status: 'False', reason: 'A', severity: 'Info', message: 'm' },
      t0,
    );
    const b = setCondition(
      a,
      { type: 'X', status: 'False', reason: 'B', severity: 'Info', message: 'n' },
      t1,
    );
    expect(b).toEqual([
      {
        type: 'X',
        status: 'False',
        reason: 'B',
        severity: 'Info',
        message: 'n',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ]);
    const c = setCondition(b, { type: 'X', status: 'True' }, t1);
    expect(c).toEqual([{ type: 'X', status: 'True', lastTransitionTime: '2026-01-01T01:00:00Z' }]);
  });
  it('summarizes Ready from AssociateBMH, Metal3DataReady, KubernetesNodeReady in that order', () => {
    let cs = setMachineCondition([], { type: COND.AssociateBMH, status: 'True' }, t0);
    expect(cs[0]).toMatchObject({ type: 'Ready', status: 'False', reason: 'WaitingMetal3DataReady' });
    cs = setMachineCondition(
      cs,
      {
        type: COND.Metal3DataReady,
        status: 'False',
        reason: 'WaitingForMetal3Data',
        severity: 'Info',
        message: 'w',
      },
      t0,
    );
    expect(summarizeMachineReady(cs)).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'WaitingForMetal3Data',
      severity: 'Info',
      message: 'w',
    });
    cs = setMachineCondition(cs, { type: COND.Metal3DataReady, status: 'True' }, t0);
    expect(summarizeMachineReady(cs)).toMatchObject({ status: 'False', reason: 'WaitingForKubernetesNode' });
    cs = setMachineCondition(cs, { type: COND.KubernetesNodeReady, status: 'True' }, t0);
    expect(cs.map((c) => [c.type, c.status])).toEqual([
      ['Ready', 'True'],
      ['AssociateBMH', 'True'],
      ['KubernetesNodeReady', 'True'],
      ['Metal3DataReady', 'True'],
    ]);
  });
});
