import { describe, expect, it } from 'vitest';
import type { MachineTimeline } from '../../../infra/local/dev/observer.ts';
import { formatSummary, percentile, summarize } from '../../../infra/local/dev/summary.ts';

const tl = (
  key: string,
  host: string | undefined,
  firstSeen: number,
  ready?: number,
  hw?: [number, number],
  node?: number,
): MachineTimeline => ({
  key,
  host,
  firstSeen,
  phase: ready ? 'Ready' : 'associated',
  at: ready ? { Ready: ready } : {},
  ...(hw ? { hostProvisioningStarted: hw[0], hostProvisioned: hw[1] } : {}),
  ...(node ? { nodeSeen: node } : {}),
});

describe('percentile', () => {
  it.each([
    [[], 50, 0],
    [[5], 99, 5],
    [[1, 2, 3, 4], 50, 2],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90, 9],
    [[10, 1, 5], 100, 10],
  ])('%j p%i = %i', (values, p, expected) => {
    expect(percentile(values, p)).toBe(expected);
  });
});

describe('summarize', () => {
  it('subtracts simulated hardware and kubelet time from the latency and counts per machine', () => {
    const s = summarize({
      timelines: [
        // 0 -> ready at 3000; provisioning 1000..2500 (hardware 1500), node seen at 2700 (kubelet 200): ours = 1300
        tl('metal3/a', 'metal3/h1', 0, 3000, [1000, 2500], 2700),
        // 100 -> ready at 2100, no hardware phases observed: ours = 2000
        tl('metal3/b', 'metal3/h2', 100, 2100),
        tl('metal3/c', undefined, 0),
      ],
      hosts: 5,
      wallMs: 3456,
      convergeMs: 2104,
      requests: 90,
      listedItems: 600,
      listedByResource: { metal3datas: 240, nodes: 300, secrets: 0, ipclaims: 60 },
      writes: 30,
      conflicts: 2,
      retries: 3,
      deadLettered: 0,
    });
    // Per machine, largest first, resources that listed nothing left out.
    expect(Object.entries(s.listedPerMachineByResource)).toEqual([
      ['nodes', 100],
      ['metal3datas', 80],
      ['ipclaims', 20],
    ]);
    expect(formatSummary(s)).toMatch(
      /objects listed per machine +200 \(nodes 100, metal3datas 80, ipclaims 20\)/,
    );
    expect(s).toMatchObject({
      machines: 3,
      ready: 2,
      hostsUsed: 2,
      hosts: 5,
      wallSeconds: 3.46,
      convergeSeconds: 2.1,
      addedLatencyP50Ms: 1300,
      addedLatencyP99Ms: 2000,
      requestsPerMachine: 30,
      listedItemsPerMachine: 200,
      writesPerMachine: 10,
      conflicts: 2,
      retries: 3,
      deadLettered: 0,
    });
    expect(s.eventWritesPerMachine).toBe(0);
    // Coalesced messages: a queued runtime's figure, shown only when the run has one.
    expect(formatSummary(s)).not.toMatch(/coalesced/);
    expect(formatSummary({ ...s, coalesced: 7 })).toMatch(/coalesced messages +7 \(/);
  });

  it('ends our latency at the Metal3Machine ready and excludes the host from handed over to provisioned', () => {
    const t: MachineTimeline = {
      key: 'metal3/a',
      host: 'metal3/h1',
      firstSeen: 1000,
      phase: 'Ready',
      at: { Ready: 5000 },
      // ours 1000..1600; BMO 1600..3000 (reaction 1600..1700, provisioning 1700..3000);
      // kubelet 3000..3400; ours 3400..3900 (providerID, ready); CAPI 3900..5000 (nodeRef).
      hostHandedOver: 1600,
      hostProvisioningStarted: 1700,
      hostProvisioned: 3000,
      nodeSeen: 3400,
      infraReady: 3900,
    };
    const s = summarize({
      timelines: [t],
      hosts: 1,
      wallMs: 5000,
      requests: 0,
      writes: 0,
      conflicts: 0,
      retries: 0,
      deadLettered: 0,
    });
    expect(s.addedLatencyP50Ms).toBe(600 + 500);
    expect(s.timeToReadyP50Ms).toBe(4000);
    // A machine not Ready on both sides has no latency yet, even with the Metal3Machine ready.
    const notYet = summarize({
      timelines: [{ ...t, at: {}, phase: 'providerID' }],
      hosts: 1,
      wallMs: 5000,
      requests: 0,
      writes: 0,
      conflicts: 0,
      retries: 0,
      deadLettered: 0,
    });
    expect(notYet.addedLatencyP50Ms).toBe(0);
  });

  it('counts Event writes apart from object writes', () => {
    const s = summarize({
      timelines: [tl('metal3/a', 'metal3/h1', 0, 3000), tl('metal3/b', 'metal3/h2', 0, 3000)],
      hosts: 2,
      wallMs: 1000,
      requests: 100,
      writes: 50,
      eventWrites: 8,
      conflicts: 0,
      retries: 0,
      deadLettered: 0,
    });
    expect(s).toMatchObject({ writes: 42, writesPerMachine: 21, eventWrites: 8, eventWritesPerMachine: 4 });
    // Without the time the sample was applied, convergence is the whole wall time.
    expect(s.convergeSeconds).toBe(1);
  });

  it('names the writes that met most 409s beside the total', () => {
    const s = summarize({
      timelines: [tl('metal3/a', 'metal3/h1', 0, 3000)],
      hosts: 1,
      wallMs: 1000,
      requests: 10,
      writes: 5,
      conflicts: 9,
      retries: 0,
      deadLettered: 0,
    });
    expect(formatSummary(s)).toMatch(/conflicts \(409\) +9\n/);
    s.conflictsBy = { 'a patch nodes': 5, 'b update x': 2, 'c create y': 1, 'd update z': 1 };
    expect(formatSummary(s)).toMatch(
      /conflicts \(409\) +9 \(a patch nodes 5, b update x 2, c create y 1\)\n/,
    );
  });
});
