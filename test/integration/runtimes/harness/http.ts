/**
 * The HTTP runtime (Knative): each message POSTed as a binary-mode CloudEvent over a real socket, as
 * a Broker's Trigger delivers it. No queue: the answer is the transport's action (200 done, 400
 * malformed with the reason, which the sender dead-letters, 500 retry by the sender), and a
 * requeue is handed to `onRequeue`.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { MESSAGE_EVENT_TYPE } from '../../../../shared/runtimes/cloudevents.ts';
import type { DispatchOutcome } from '../../../../shared/runtimes/dispatch.ts';
import { createHttpApp } from '../../../../shared/runtimes/http.ts';
import { offlineContext } from '../../../helpers/context.ts';
import type { Observed, RuntimeHarness } from '../contract.ts';
import { observed } from './queues.ts';

const TOKEN = 'contract-token';

export function httpHarness(): RuntimeHarness {
  const outcomes: Observed[] = [];
  const dead: { body: string; reason: string }[] = [];
  const requeues: string[] = [];
  const inFlight = new Set<Promise<void>>();
  let base = '';
  let close = () => {};
  let sent = 0;

  const post = async (body: string): Promise<void> => {
    const res = await fetch(base, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        // Plain text: the bytes reach dispatch as they are, as they would from a queue.
        'content-type': 'text/plain',
        'ce-specversion': '1.0',
        'ce-type': MESSAGE_EVENT_TYPE,
        'ce-id': `contract-${sent++}`,
        'ce-source': 'metal3fn/contract',
      },
      body,
    });
    const json = (await res.json()) as {
      error?: string;
      results?: { key: string; outcome: DispatchOutcome['kind'] }[];
    };
    if (res.status === 400) {
      dead.push({ body, reason: json.error ?? '' });
      outcomes.push(observed({ kind: 'malformed', reason: json.error ?? '' }, body));
      return;
    }
    for (const r of json.results ?? []) outcomes.push({ name: r.key.split('/').at(-1)!, kind: r.outcome });
  };

  return {
    outcomes,
    async start(fns) {
      const app = createHttpApp({
        fns,
        context: offlineContext(),
        auth: { bearerTokens: [TOKEN] },
        onRequeue: (msg) => {
          requeues.push(msg.name);
        },
      });
      const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
      await new Promise<void>((r) => server.once('listening', () => r()));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      close = () => server.close();
    },
    // Every event its own request, all at once (a Broker does not order deliveries).
    async deliver(items) {
      for (const d of items) {
        const p: Promise<void> = post(d.body).finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
    },
    deadLetters: async () => [...dead],
    requeuesScheduled: async () => requeues.length,
    inTransport: async () => inFlight.size,
    async stop() {
      await Promise.allSettled([...inFlight]);
      close();
    },
  };
}
