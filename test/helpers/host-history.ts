/**
 * The history invariants of one fleet serving both models (issue 19), from watches of every
 * BareMetalHost and IPAddress change, whatever wrote it:
 *  - a host's consumerRef never moves from one owner to another without being empty in between
 *    (a Metal3Machine, a NodeClaim or anyone else: the one host lock);
 *  - no address is held by two IPAddresses at once (CAPM3's pools and vMetal's alike).
 * Pure over the recorded events (`violations`), so a hand-made history tests the checker. When a
 * watch ends (a timeout, a 410 under chaos) the recorder re-lists and marks the gap (`Gap`): what
 * happened in it is unseen, so the checker forgets that kind's previous state there instead of
 * judging a jump it did not see.
 */
import { envelopeOf, R, type ResourceType } from '../../shared/api/resources.ts';
import type { KubeClient, WatchEvent } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';

export interface HistoryEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KubeObject;
}

/** The kind of the marker a re-list after a watch ended leaves in the history (name: the kind). */
export const GAP = 'Gap';

const key = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** The owner a host's consumerRef names (`Kind ns/name`), or '' when free. */
export function ownerOf(host: KubeObject): string {
  const ref = (
    host.spec as { consumerRef?: { kind?: string; namespace?: string; name?: string } } | undefined
  )?.consumerRef;
  return ref?.name ? `${ref.kind ?? ''} ${ref.namespace || host.metadata.namespace}/${ref.name}` : '';
}

/** Every violation of the two invariants in a recorded history (hosts and IPAddresses, in order). */
export function violations(events: readonly HistoryEvent[]): string[] {
  const out: string[] = [];
  const owner = new Map<string, string>();
  const holder = new Map<string, string>();
  const addressOf = new Map<string, string>();
  for (const ev of events) {
    const o = ev.object;
    if (o.kind === GAP) {
      if (o.metadata.name === 'BareMetalHost') owner.clear();
      else {
        holder.clear();
        addressOf.clear();
      }
    } else if (o.kind === 'BareMetalHost') {
      const now = ev.type === 'DELETED' ? '' : ownerOf(o);
      const was = owner.get(key(o)) ?? '';
      if (was && now && was !== now) out.push(`host ${key(o)}: consumerRef moved from ${was} to ${now}`);
      owner.set(key(o), now);
    } else if (o.kind === 'IPAddress') {
      const address = String((o.spec as { address?: string } | undefined)?.address ?? '');
      if (!address) continue;
      if (ev.type === 'DELETED') {
        if (holder.get(address) === key(o)) holder.delete(address);
        addressOf.delete(key(o));
        continue;
      }
      const held = holder.get(address);
      if (held && held !== key(o)) out.push(`address ${address}: held by ${held} and ${key(o)} at once`);
      holder.set(address, key(o));
      addressOf.set(key(o), address);
    }
  }
  return out;
}

/** Records every change of hosts and IPAddresses from a list then a watch of each (all namespaces). */
export function recordHistory(client: KubeClient): { events: HistoryEvent[]; stop(): void } {
  const events: HistoryEvent[] = [];
  const controllers = new Set<AbortController>();
  let stopped = false;
  const follow = async (t: ResourceType, first: boolean): Promise<void> => {
    if (stopped) return;
    let list: Awaited<ReturnType<KubeClient['list']>>;
    try {
      list = await client.list(envelopeOf(t));
    } catch {
      setTimeout(() => void follow(t, first), 100);
      return;
    }
    if (!first) events.push({ type: 'MODIFIED', object: { kind: GAP, metadata: { name: t.kind } } });
    for (const o of list.items) events.push({ type: 'ADDED', object: { ...o, kind: t.kind } });
    let c: AbortController | undefined;
    c = await client.watch(
      t,
      undefined,
      { resourceVersion: list.resourceVersion, allowWatchBookmarks: true },
      (ev: WatchEvent) => {
        if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED')
          events.push({ type: ev.type, object: { ...ev.object, kind: t.kind } });
      },
      () => {
        if (c) controllers.delete(c);
        void follow(t, false);
      },
    );
    controllers.add(c);
    if (stopped) c.abort();
  };
  void follow(R.BareMetalHost, true);
  void follow(R.IPAddress, true);
  return {
    events,
    stop() {
      stopped = true;
      for (const c of controllers) c.abort();
    },
  };
}
