/**
 * The HTTP library under client-node's request machinery: undici's `request` (on the dispatcher
 * client-node configured) instead of the `fetch` client-node uses by default (both from undici,
 * the library client-node is built on; the bundles import only the undici parts client-node uses,
 * see narrowUndici in scripts/build.ts).
 *
 * Why: client-node still builds every request (the kubeconfig's server, TLS and credentials, exec
 * plugins, its middleware) and hands us the dispatcher it configured; only the last step differs.
 * WHATWG fetch wraps each call in Request/Headers/ReadableStream objects and abort plumbing; on the
 * embedded API server a GET costs ~4x the CPU through fetch than through `request` (same process,
 * same server; test/bench/client.ts), and a reconcile makes 5–15 sequential calls. The swap goes
 * through client-node's own extension point (`wrapHttpLibrary`, the `httpApi` of a Configuration).
 * docs/adr/006-http-library.md.
 */
import { type PromiseHttpLibrary, ResponseContext, wrapHttpLibrary } from '@kubernetes/client-node';
import { Agent, type Dispatcher } from 'undici';

/** For a kubeconfig that gives client-node no reason to configure a dispatcher (plain http). */
let fallback: Agent | undefined;
function fallbackAgent(): Agent {
  fallback ??= new Agent();
  return fallback;
}

const promiseLibrary: PromiseHttpLibrary = {
  async send(ctx) {
    const body = ctx.getBody();
    if (body !== undefined && typeof body !== 'string') {
      // client-node sends FormData only for file uploads, which no Kubernetes call of ours makes.
      throw new Error('only string request bodies are supported');
    }
    const url = new URL(ctx.getUrl());
    const dispatcher: Dispatcher = ctx.getDispatcher() ?? fallbackAgent();
    const res = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: ctx.getHttpMethod() as Dispatcher.HttpMethod,
      headers: ctx.getHeaders(),
      body: body ?? null,
      signal: ctx.getSignal() ?? null,
    });
    // Read the body at once, whatever the caller does: an unread body holds its connection.
    const text = res.body.text();
    text.catch(() => {});
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) {
      if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    return new ResponseContext(res.statusCode, headers, {
      text: () => text,
      binary: async () => Buffer.from(await text),
      stream: () => null,
    });
  },
};

export const undiciRequestLibrary = wrapHttpLibrary(promiseLibrary);
