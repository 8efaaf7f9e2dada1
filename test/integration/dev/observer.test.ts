/**
 * The progress observer follows a machine through every phase from the events of the objects it
 * depends on (Metal3Machine, Machine, host, the workload cluster's Node), each event refreshing
 * only what it concerns; machines that are not the run's are not followed until their Machine
 * shows they are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProgressObserver } from '../../../infra/local/dev/observer.ts';
import { TimelineTally } from '../../../infra/local/dev/tally.ts';
import { createSampleHosts } from '../../../infra/local/sim/bmo.ts';
import { R } from '../../../shared/api/resources.ts';
import { startTestCluster, type TestCluster } from '../../helpers/cluster.ts';
import { CLUSTER, createMachinePair, NS } from '../../helpers/hosts.ts';
import { eventually } from '../../helpers/wait.ts';

let tc: TestCluster;
beforeAll(async () => {
  tc = await startTestCluster();
});
afterAll(async () => {
  await tc?.stop();
});

describe('ProgressObserver', () => {
  it('moves a run machine through its phases on the events of its objects, and ignores others', async () => {
    const { client } = tc;
    const [host] = await createSampleHosts(client, NS, 1);
    const { machine } = await createMachinePair(client, 'm-run');
    const applied = new Set([machine.metadata.uid!]);
    const observer = new ProgressObserver(client, { applied });
    observer.addWorkload(`${NS}/${CLUSTER}`, client);
    let notified = 0;
    observer.onChange(() => notified++);
    try {
      const tl = await eventually(() => observer.timelines.get(`${NS}/m-run`), 'the run machine followed');
      expect(tl.phase).toBe('waiting for host');
      await createMachinePair(client, 'm-other');

      const hostKey = `${NS}/${host!.metadata.name}`;
      await client.patch(R.Metal3Machine, NS, 'm-run', {
        metadata: { annotations: { 'metal3.io/BareMetalHost': hostKey } },
      });
      await eventually(() => tl.phase === 'associated', 'associated');

      await client.patch(R.BareMetalHost, NS, host!.metadata.name!, {
        spec: { image: { url: 'http://x/img', checksum: 'http://x/img.sha256' } },
      });
      await eventually(() => tl.phase === 'data ready' && tl.hostHandedOver, 'data ready (a host event)');

      await client.patch(
        R.BareMetalHost,
        NS,
        host!.metadata.name!,
        { status: { provisioning: { state: 'provisioned' } } },
        'merge',
        { status: true },
      );
      await eventually(() => tl.phase === 'provisioning' && tl.hostProvisioned, 'provisioned');
      expect(tl.nodeSeen).toBeUndefined();

      await client.create(R.Node, {
        metadata: { name: 'node-a', labels: { 'metal3.io/uuid': host!.metadata.uid! } },
      });
      await eventually(() => tl.nodeSeen, 'the Node seen (a Node event, through the host uid)');

      await client.patch(R.Metal3Machine, NS, 'm-run', { spec: { providerID: `metal3://${NS}/h/m-run` } });
      await client.patch(R.Metal3Machine, NS, 'm-run', { status: { ready: true } }, 'merge', {
        status: true,
      });
      await eventually(() => tl.phase === 'providerID' && tl.infraReady, 'providerID');

      await client.patch(
        R.Machine,
        NS,
        'm-run',
        { status: { phase: 'Running', nodeRef: { apiVersion: 'v1', kind: 'Node', name: 'node-a' } } },
        'merge',
        { status: true },
      );
      await eventually(() => tl.phase === 'Ready', 'Ready (a Machine event)');
      expect(Object.keys(tl.at)).toEqual([
        'waiting for host',
        'associated',
        'data ready',
        'provisioning',
        'providerID',
        'Ready',
      ]);
      expect(tl.host).toBe(hostKey);
      expect(observer.timelines.has(`${NS}/m-other`)).toBe(false);
      expect(notified).toBeGreaterThan(0);
    } finally {
      observer.stop();
    }
  });

  it('follows a Metal3Machine seen before its Machine once the Machine shows it is the run’s', async () => {
    const { client } = tc;
    const root = await client.create(R.ConfigMap, { metadata: { name: 'run-root', namespace: NS } });
    const observer = new ProgressObserver(client, { applied: new Set([root.metadata.uid!]) });
    try {
      await createMachinePair(client, 'm-late', {
        machineOwners: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'run-root', uid: root.metadata.uid! }],
      });
      const tl = await eventually(() => observer.timelines.get(`${NS}/m-late`), 'the late machine followed');
      expect(tl.phase).toBe('waiting for host');
    } finally {
      observer.stop();
    }
  });

  it('tells its listeners which timelines it refreshed, and a tally kept from them matches a scan', async () => {
    const { client } = tc;
    const hosts = await createSampleHosts(client, NS, 3, { prefix: 'tally-host' });
    const names = ['tally-a', 'tally-b', 'tally-c'];
    const applied = new Set<string>();
    for (const n of names) applied.add((await createMachinePair(client, n)).machine.metadata.uid!);
    const observer = new ProgressObserver(client, { applied });
    const byPhase = new TimelineTally(observer, (key) => observer.timelines.get(key)?.phase);
    const seen = new Set<string>();
    const mismatches: string[] = [];
    observer.onChange((changed) => {
      for (const k of changed) seen.add(k);
      byPhase.update(changed);
      const scan = new Map<string, number>();
      for (const t of observer.timelines.values()) scan.set(t.phase, (scan.get(t.phase) ?? 0) + 1);
      for (const phase of new Set([...scan.keys(), 'waiting for host', 'associated']))
        if ((scan.get(phase) ?? 0) !== byPhase.count(phase))
          mismatches.push(`${phase}: scan ${scan.get(phase) ?? 0}, tally ${byPhase.count(phase)}`);
    });
    try {
      await eventually(() => names.every((n) => observer.timelines.has(`${NS}/${n}`)), 'all followed');
      for (const [i, n] of names.entries())
        await client.patch(R.Metal3Machine, NS, n, {
          metadata: { annotations: { 'metal3.io/BareMetalHost': `${NS}/${hosts[i]!.metadata.name}` } },
        });
      await eventually(() => byPhase.count('associated') === 3, 'all associated, by the tally');
      expect(mismatches).toEqual([]);
      for (const n of names) expect(seen.has(`${NS}/${n}`)).toBe(true);
    } finally {
      observer.stop();
    }
  });
});
