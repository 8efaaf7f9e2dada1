/**
 * The relay's other way out, for Knative: each message POSTed as a CloudEvent (structured mode by
 * default; `io.metal3fn.message`, extension `function`, built in shared/runtimes/cloudevents.ts) to a Broker (or straight to `metal3fn http`), with
 * a bearer token or an HMAC signature of the body. Same coalescing per function and key as the SQS
 * sender, a bounded number of requests in flight, retries with backoff on 5xx, 429 and network
 * errors; a 4xx other than 429 drops the message (logged: the receiver refused it for good).
 */
import type { FunctionName } from '../../events/envelope.ts';
import { messageOf } from '../../shared/api/json.ts';
import { type Logger, silentLogger } from '../../shared/observability/logger.ts';
import { coalesceKey, type RoutedMessage } from '../../shared/queue/message.ts';
import type { MessageSink, SenderStats } from '../../shared/queue/sender.ts';
import { SIGNATURE_HEADER, signBody } from '../../shared/runtimes/auth.ts';
import { cloudEventRequest, type HttpMode, messageCloudEvent } from '../../shared/runtimes/cloudevents.ts';

export interface HttpSinkOptions {
  url: string;
  /** A fixed token, or a reader called for each request (a rotated projected token file). */
  bearerToken?: string | (() => string | undefined) | undefined;
  hmacSecret?: string | undefined;
  /** Requests in flight (default 16). */
  concurrency?: number | undefined;
  /** Attempts per message before it is dropped (default 8; the next change or resync resends the key). */
  maxAttempts?: number | undefined;
  retryBaseMs?: number | undefined;
  functions?: readonly FunctionName[] | undefined;
  /** CloudEvents HTTP content mode (default structured). */
  mode?: HttpMode | undefined;
  log?: Logger | undefined;
}

export class HttpCloudEventSink implements MessageSink {
  readonly stats: SenderStats = { enqueued: 0, sent: 0, coalesced: 0, refused: 0, dropped: 0, batches: 0 };
  private readonly o: HttpSinkOptions;
  private readonly log: Logger;
  private readonly pending = new Map<string, { r: RoutedMessage; attempt: number }>();
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private closed = false;

  constructor(opts: HttpSinkOptions) {
    this.o = opts;
    this.log = opts.log ?? silentLogger;
  }

  get bufferedCount(): number {
    return this.pending.size;
  }

  enqueue(msgs: readonly RoutedMessage[]): void {
    if (this.closed) throw new Error('sink is closed');
    for (const r of msgs) {
      if (this.o.functions && !this.o.functions.includes(r.msg.function)) {
        this.stats.dropped++;
        continue;
      }
      this.stats.enqueued++;
      const key = coalesceKey(r);
      if (this.pending.has(key)) this.stats.coalesced++;
      this.pending.set(key, { r, attempt: this.pending.get(key)?.attempt ?? 0 });
    }
    this.pump();
  }

  async waitForCapacity(): Promise<void> {}

  async flush(): Promise<void> {
    while (this.pending.size > 0 || this.inFlight > 0) {
      await new Promise<void>((resolve) => this.idle.push(resolve));
    }
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  private pump(): void {
    const limit = this.o.concurrency ?? 16;
    while (this.inFlight < limit && this.pending.size > 0) {
      const next = this.pending.entries().next();
      if (next.done) break;
      const [key, item] = next.value;
      this.pending.delete(key);
      this.inFlight++;
      void this.post(key, item).finally(() => {
        this.inFlight--;
        this.pump();
        if (this.pending.size === 0 && this.inFlight === 0) for (const w of this.idle.splice(0)) w();
      });
    }
  }

  private async post(key: string, item: { r: RoutedMessage; attempt: number }): Promise<void> {
    const { headers, body } = cloudEventRequest(messageCloudEvent(item.r.msg), this.o.mode ?? 'structured');
    if (this.o.hmacSecret) headers[SIGNATURE_HEADER] = signBody(this.o.hmacSecret, body);
    this.stats.batches++;
    let retry = false;
    try {
      // Read per request (inside the try: an unreadable token file is retried like a network error).
      const token = typeof this.o.bearerToken === 'function' ? this.o.bearerToken() : this.o.bearerToken;
      if (token) headers.authorization = `Bearer ${token}`;
      const res = await fetch(this.o.url, { method: 'POST', headers, body });
      await res.arrayBuffer();
      if (res.ok) {
        this.stats.sent++;
        return;
      }
      retry = res.status >= 500 || res.status === 429 || res.status === 408;
      if (!retry) {
        this.stats.dropped++;
        this.log.error('sink refused a message', { status: res.status, function: item.r.msg.function, key });
        return;
      }
    } catch (e) {
      retry = true;
      this.log.warn('sink unreachable', { error: messageOf(e) });
    }
    this.stats.refused++;
    const attempt = item.attempt + 1;
    if (attempt >= (this.o.maxAttempts ?? 8)) {
      this.stats.dropped++;
      this.log.error('message dropped after retries', { function: item.r.msg.function, key });
      return;
    }
    await new Promise((r) => setTimeout(r, Math.min(10_000, (this.o.retryBaseMs ?? 100) * 2 ** attempt)));
    // A newer message for the key that arrived meanwhile wins.
    if (!this.pending.has(key)) this.pending.set(key, { r: item.r, attempt });
  }
}
