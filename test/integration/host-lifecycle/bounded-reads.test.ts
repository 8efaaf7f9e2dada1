/**
 * ADR 022: a claim reads a bounded number of hosts whatever the fleet's size (the server narrows
 * the list to hosts that may be free for the selector, read in small pages), and claimers in
 * separate processes (no shared hints) still never hold one host twice.
 */
import { describe, expect, it } from 'vitest';
import { createSampleHosts } from '../../../infra/local/sim/bmo.ts';
import { R } from '../../../shared/api/resources.ts';
import { CANDIDATE_PAGE_SIZE, ClaimHints } from '../../../shared/hosts/candidates.ts';
import { findOrClaimHost, hostsHeldBy } from '../../../shared/hosts/claim.ts';
import { type HostConsumer, hostHeldBy, metal3MachineConsumer } from '../../../shared/hosts/consumer.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { compileHostSelector } from '../../../shared/selectors/labels.ts';
import { NS } from '../../helpers/hosts.ts';
import { useHostCluster } from './use-host-cluster.ts';

const tc = useHostCluster();

const machine = (name: string): HostConsumer => metal3MachineConsumer({ name, namespace: NS }, 'cluster');

/** One claim on its own client (its own counters) and, unless given, its own hints (another process). */
async function claimCounted(
  consumer: HostConsumer,
  selector: Parameters<typeof compileHostSelector>[0],
  hints = new ClaimHints(),
) {
  const client: KubeClient = tc.freshCtx().client;
  const outcome = await findOrClaimHost({
    client,
    consumer,
    selector: compileHostSelector(selector),
    reuseValues: [],
    hints,
  });
  const s = client.stats.snapshot();
  return { outcome, listed: s.listedItems, requests: s.requests };
}

describe('host selection reads a bounded number of hosts', () => {
  it('each of 30 claims among 400 hosts lists at most one page, held hosts and other selectors never listed', async () => {
    await createSampleHosts(tc.client, NS, 400, {
      prefix: 'bnd',
      // A quarter of them do not match the selector: the server leaves them out (notin, !key).
      labels: (i): Record<string, string> => (i % 4 === 0 ? { pool: 'bnd', tier: 'slow' } : { pool: 'bnd' }),
      concurrency: 32,
    });
    const selector = {
      matchLabels: { pool: 'bnd' },
      matchExpressions: [
        { key: 'tier', operator: 'NotIn', values: ['slow'] },
        { key: 'example.com/retired', operator: 'DoesNotExist' },
      ],
    };
    const claimed = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const { outcome, listed, requests } = await claimCounted(machine(`bnd-m${i}`), selector);
      expect(outcome.kind).toBe('claimed');
      const host = outcome.kind === 'claimed' ? outcome.host : undefined;
      expect(host!.metadata.labels?.tier).toBeUndefined();
      claimed.add(host!.metadata.name!);
      // The consumer-label list (none held) and one page of candidates; one list of each, one write.
      expect(listed).toBeLessThanOrEqual(CANDIDATE_PAGE_SIZE);
      expect(requests).toBe(3);
    }
    expect(claimed.size).toBe(30);
  });

  it('a page without an eligible host is followed by the next one (still bounded by what is not eligible)', async () => {
    const hosts = await createSampleHosts(tc.client, NS, CANDIDATE_PAGE_SIZE + 2, {
      prefix: 'bnp',
      labels: () => ({ pool: 'bnp' }),
    });
    // The first page's hosts are free but in error: not eligible, still listed.
    for (const h of hosts.slice(0, CANDIDATE_PAGE_SIZE)) {
      const fresh = await tc.getHost(h.metadata.name!);
      fresh.status = { ...fresh.status, errorMessage: 'bmc unreachable' };
      await tc.client.replaceStatus(R.BareMetalHost, fresh);
    }
    const { outcome, listed } = await claimCounted(machine('bnp-m0'), { matchLabels: { pool: 'bnp' } });
    expect(outcome.kind).toBe('claimed');
    // One of the second page's two hosts, the only eligible ones.
    const second = hosts.slice(CANDIDATE_PAGE_SIZE).map((h) => h.metadata.name);
    expect(second).toContain(outcome.kind === 'claimed' ? outcome.host.metadata.name : undefined);
    expect(listed).toBe(CANDIDATE_PAGE_SIZE + 2);
  });

  it('claimers in separate processes racing for fewer hosts: every host has one holder, nobody holds two', async () => {
    const hosts = 12;
    await createSampleHosts(tc.client, NS, hosts, { prefix: 'bnr', labels: () => ({ pool: 'bnr' }) });
    const consumers = Array.from({ length: 20 }, (_, i) => machine(`bnr-m${i}`));
    // Each claimer has its own hints: they all read the same first page and race for it.
    const results = await Promise.all(
      consumers.map((c) => claimCounted(c, { matchLabels: { pool: 'bnr' } })),
    );
    const won = results.filter((r) => r.outcome.kind === 'claimed');
    // Losers retry within their page and the next; a few may give up for this pass (contention).
    expect(results.every((r) => ['claimed', 'contention', 'none'].includes(r.outcome.kind))).toBe(true);
    const { items } = await tc.client.list(R.BareMetalHost, NS, { labelSelector: 'pool=bnr' });
    const holders = items.map((h) => consumers.filter((c) => hostHeldBy(h, c)).length);
    expect(holders.every((n) => n <= 1)).toBe(true);
    expect(holders.filter((n) => n === 1)).toHaveLength(won.length);
    for (const c of consumers) expect((await hostsHeldBy(tc.client, c)).length).toBeLessThanOrEqual(1);

    // Passes again until every host is taken: the 12 winners and 8 without a host.
    for (let round = 0; round < 5; round++) {
      await Promise.all(consumers.map((c) => claimCounted(c, { matchLabels: { pool: 'bnr' } })));
    }
    const after = await tc.client.list(R.BareMetalHost, NS, { labelSelector: 'pool=bnr' });
    const held = after.items.map((h) => consumers.filter((c) => hostHeldBy(h, c)).length);
    expect(held).toEqual(new Array(hosts).fill(1));
  });

  it('once the list ends, a host another claim of the process picked is the last resort', async () => {
    const [hinted, other] = await createSampleHosts(tc.client, NS, 2, {
      prefix: 'bnl',
      labels: () => ({ pool: 'bnl' }),
    });
    const hints = new ClaimHints();
    hints.mark(await tc.getHost(hinted!.metadata.name!));
    // The unpicked host's claim loses its race (the write and its one retry).
    const undo = tc.server.faults.failNext(
      { verb: 'update', resource: 'baremetalhosts', name: other!.metadata.name },
      409,
      2,
    );
    const { outcome } = await claimCounted(machine('bnl-m0'), { matchLabels: { pool: 'bnl' } }, hints);
    undo();
    expect(outcome.kind).toBe('claimed');
    expect(outcome.kind === 'claimed' && outcome.conflicts).toBe(1);
    expect(outcome.kind === 'claimed' && outcome.host.metadata.name).toBe(hinted!.metadata.name);
  });

  it('claims of one process pass over each other’s picks: no conflict among them', async () => {
    await createSampleHosts(tc.client, NS, 40, { prefix: 'bnh', labels: () => ({ pool: 'bnh' }) });
    const hints = new ClaimHints();
    const consumers = Array.from({ length: 6 }, (_, i) => machine(`bnh-m${i}`));
    const results = await Promise.all(
      consumers.map((c) => claimCounted(c, { matchLabels: { pool: 'bnh' } }, hints)),
    );
    expect(results.map((r) => r.outcome.kind)).toEqual(new Array(6).fill('claimed'));
    expect(results.map((r) => (r.outcome.kind === 'claimed' ? r.outcome.conflicts : -1))).toEqual(
      new Array(6).fill(0),
    );
  });
});
