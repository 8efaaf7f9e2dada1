import { describe, expect, it } from 'vitest';
import { assetPath } from '../../../infra/local/assets.ts';
import { SAMPLE_VMETAL_DIR } from '../../../infra/local/dev/vmetal.ts';
import { loadManifests } from '../../../infra/local/manifests.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { fleetClusters, split, VMETAL_FLEET_NETWORK, vmetalFleet } from '../../bench/fleet-manifests.ts';
import { parseProcStatus } from '../../bench/proc-memory.ts';
import { parseScaleArgs } from '../../bench/scale-args.ts';

const STATUS = `Name:\tnode
Umask:\t0022
State:\tS (sleeping)
Pid:\t4242
VmPeak:\t 1300000 kB
VmSize:\t 1200000 kB
VmHWM:\t  524288 kB
VmRSS:\t  204800 kB
Threads:\t11
`;

describe('parseProcStatus', () => {
  it('reads VmRSS and VmHWM in KiB', () => {
    expect(parseProcStatus(STATUS)).toEqual({ rssKiB: 204800, hwmKiB: 524288 });
  });
  it('refuses a status without them (a kernel thread, a zombie)', () => {
    expect(() => parseProcStatus('Name:\tkthreadd\nState:\tS (sleeping)\n')).toThrow(/VmRSS/);
  });
});

describe('split', () => {
  it('gives whole shares that add up, the first ones larger', () => {
    expect(split(10, 3)).toEqual([4, 3, 3]);
    expect(split(1000, 10)).toEqual(Array(10).fill(100));
  });
});

const sample = await loadManifests(assetPath('infra/local/sample'));
const ofKind = (objs: KubeObject[], kind: string) => objs.filter((o) => o.kind === kind);

describe('fleetClusters', () => {
  const fleet = fleetClusters(sample, 25, 3);

  it('spreads the machines over K clusters, each in its own namespace with 1.5× its machines in hosts', () => {
    expect(fleet.map((c) => [c.namespace, c.machines, c.hosts])).toEqual([
      ['fleet-0', 9, 14],
      ['fleet-1', 8, 12],
      ['fleet-2', 8, 12],
    ]);
    for (const c of fleet) {
      expect(ofKind(c.objects, 'BareMetalHost')).toHaveLength(c.hosts);
      expect(ofKind(c.objects, 'Secret')).toHaveLength(c.hosts);
      const kcp = ofKind(c.objects, 'KubeadmControlPlane')[0]!;
      const md = ofKind(c.objects, 'MachineDeployment')[0]!;
      expect((kcp.spec as { replicas: number }).replicas + (md.spec as { replicas: number }).replicas).toBe(
        c.machines,
      );
      expect((kcp.spec as { replicas: number }).replicas).toBe(3);
    }
  });

  it('moves every object and every reference into the cluster namespace', () => {
    for (const c of fleet) {
      const text = JSON.stringify(c.objects);
      expect(text).not.toContain('"namespace":"metal3"');
      for (const o of c.objects.filter((x) => x.kind !== 'Namespace'))
        expect(o.metadata.namespace).toBe(c.namespace);
    }
    // The sample objects themselves are left as they were.
    expect(JSON.stringify(sample)).toContain('"namespace":"metal3"');
  });

  it('gives every host of the fleet its own MAC address, and labels them as the sample does', () => {
    const hosts = fleet.flatMap((c) => ofKind(c.objects, 'BareMetalHost'));
    const macs = hosts.map((h) => (h.spec as { bootMACAddress: string }).bootMACAddress);
    expect(new Set(macs).size).toBe(hosts.length);
    const first = ofKind(fleet[0]!.objects, 'BareMetalHost');
    // 3 control-plane machines + 1 spare (paused), the rest workers, one of them unhealthy.
    expect(first.filter((h) => h.metadata.labels?.role === 'control-plane')).toHaveLength(4);
    expect(
      first.filter((h) => h.metadata.annotations?.['capm3.metal3.io/unhealthy'] !== undefined),
    ).toHaveLength(1);
    expect(
      first.filter((h) => h.metadata.annotations?.['baremetalhost.metal3.io/paused'] !== undefined),
    ).toHaveLength(1);
  });

  it('refuses more clusters than machines', () => {
    expect(() => fleetClusters(sample, 2, 3)).toThrow(/2 machines cannot make 3 clusters/);
  });
});

const vsample = await loadManifests(SAMPLE_VMETAL_DIR);

describe('vmetalFleet', () => {
  it('scales the tenants to C claims over 1.5 C hosts on a /16 of its own', () => {
    const f = vmetalFleet(vsample, 101);
    expect(f.tenants).toEqual([
      { namespace: 'p-alpha', name: 'alpha', counts: { small: 26, large: 25 } },
      { namespace: 'p-beta', name: 'beta', counts: { small: 25, large: 25 } },
    ]);
    expect(ofKind(f.objects, 'BareMetalHost')).toHaveLength(152);
    const declared = ofKind(f.objects, 'ConfigMap').map((c) => (c as { data?: Record<string, string> }).data);
    expect(declared).toEqual([
      { small: '26', large: '25' },
      { small: '25', large: '25' },
    ]);
    const provider = ofKind(f.objects, 'NodeProvider')[0]!;
    expect((provider.spec as { properties: Record<string, string> }).properties).toMatchObject(
      VMETAL_FLEET_NETWORK,
    );
    // No Cluster API objects: the run is claims alone.
    expect(f.objects.some((o) => o.apiVersion?.startsWith('cluster.x-k8s.io'))).toBe(false);
  });
});

describe('parseScaleArgs', () => {
  it('reads --scale, --clusters, --vmetal-claims and --timeout', () => {
    expect(parseScaleArgs({ scale: '1000', clusters: '10', 'vmetal-claims': '50', timeout: '3600' })).toEqual(
      {
        machines: 1000,
        clusters: 10,
        vmetalClaims: 50,
        timeoutSeconds: 3600,
      },
    );
    expect(parseScaleArgs({})).toBeUndefined();
  });
  it('refuses what cannot run, in one form', () => {
    expect(() => parseScaleArgs({ scale: '0' })).toThrow("--scale must be a whole number ≥ 1, not '0'");
    expect(() => parseScaleArgs({ scale: '10', clusters: '11' })).toThrow(/more than --scale 10/);
    expect(() => parseScaleArgs({ clusters: '2' })).toThrow('--clusters goes with --scale N');
  });
  it('passes --apiserver-args to metal3fn apiserver, but not what the bench sets itself', () => {
    expect(
      parseScaleArgs({ scale: '10', 'apiserver-args': ' --history-bytes 64Mi  --heap-growth-percent 0 ' }),
    ).toEqual({
      machines: 10,
      clusters: 1,
      apiServerArgs: ['--history-bytes', '64Mi', '--heap-growth-percent', '0'],
    });
    expect(() => parseScaleArgs({ scale: '10', 'apiserver-args': '--port 7000' })).toThrow(
      '--apiserver-args: --port is set by the bench',
    );
    expect(() => parseScaleArgs({ 'apiserver-args': '--history-size 10' })).toThrow(
      '--apiserver-args goes with --scale N',
    );
  });
  it('passes --dev-args to metal3fn dev, but not what the bench sets itself', () => {
    expect(parseScaleArgs({ scale: '10', 'dev-args': '--concurrency 48' })).toEqual({
      machines: 10,
      clusters: 1,
      devArgs: ['--concurrency', '48'],
    });
    expect(() => parseScaleArgs({ scale: '10', 'dev-args': '--machines 5' })).toThrow(
      '--dev-args: --machines is set by the bench',
    );
    expect(() => parseScaleArgs({ 'dev-args': '--lambda' })).toThrow('--dev-args goes with --scale N');
  });
});
