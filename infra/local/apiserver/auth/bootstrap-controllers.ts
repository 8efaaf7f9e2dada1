/**
 * The two kube-controller-manager controllers kubeadm turns on for bootstrap tokens
 * (pkg/controller/bootstrap): the signer keeps `jws-kubeconfig-<id>` in cluster-info equal to
 * the detached HS256 JWS of its kubeconfig under each token marked usage-bootstrap-signing
 * (Signer.signConfigMap; the signature cluster-bootstrap's jws.ComputeDetachedSignature makes,
 * which kubeadm join recomputes and compares), and the cleaner deletes a token Secret once it
 * has expired (TokenCleaner.evalSecret, uid precondition). Both react to committed events in a
 * microtask, like ../gc.ts.
 */
import { createHmac } from 'node:crypto';
import type { Rest } from '../rest.ts';
import type { StoredEvent } from '../store.ts';
import {
  BOOTSTRAP_TOKEN_TYPE,
  KUBE_SYSTEM,
  secretData,
  tokenExpiry,
  tokenIdOfSecretName,
} from './bootstrap-tokens.ts';
import { CLUSTER_INFO, KUBE_PUBLIC } from './cluster-info.ts';

const SIGNATURE_PREFIX = 'jws-kubeconfig-';

/** jws.ComputeDetachedSignature: `<protected header>..<signature>` with {"alg":"HS256","kid":<id>}. */
export function detachedSignature(content: string, tokenId: string, tokenSecret: string): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', kid: tokenId })).toString('base64url');
  const signingInput = `${header}.${Buffer.from(content).toString('base64url')}`;
  const sig = createHmac('sha256', tokenSecret).update(signingInput).digest('base64url');
  return `${header}..${sig}`;
}

export class BootstrapControllers {
  private readonly rest: Rest;
  private readonly nowMs: () => number;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private pending: Set<string> | undefined;
  private stopped = false;

  constructor(rest: Rest, nowMs: () => number) {
    this.rest = rest;
    this.nowMs = nowMs;
  }

  onCommit = (ev: StoredEvent): void => {
    const { namespace, name } = ev.obj.metadata;
    const tokenSecret =
      ev.resource === '/secrets' && namespace === KUBE_SYSTEM && ev.obj.type === BOOTSTRAP_TOKEN_TYPE;
    const clusterInfo = ev.resource === '/configmaps' && namespace === KUBE_PUBLIC && name === CLUSTER_INFO;
    if (!tokenSecret && !clusterInfo) return;
    if (!this.pending) {
      this.pending = new Set();
      queueMicrotask(() => this.drain());
    }
    this.pending.add('sign');
    if (tokenSecret && ev.type !== 'DELETED') this.pending.add(name);
  };

  /** Runs the pending work now (also from the server handle's settle()). */
  drain(): void {
    const work = this.pending;
    this.pending = undefined;
    if (!work || this.stopped) return;
    for (const item of work) {
      try {
        if (item === 'sign') this.sign();
        else this.clean(item);
      } catch {
        // A concurrent write (conflict) is retried by the event that write produces.
      }
    }
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  /** The tokens that may sign: validateSecretForSigning. */
  private signingTokens(): Map<string, string> {
    const out = new Map<string, string>();
    const now = this.nowMs();
    for (const s of this.rest.store.list('/secrets', KUBE_SYSTEM)) {
      if (s.type !== BOOTSTRAP_TOKEN_TYPE) continue;
      const id = tokenIdOfSecretName(s.metadata.name);
      const tokenSecret = secretData(s, 'token-secret');
      if (!id || secretData(s, 'token-id') !== id || !tokenSecret) continue;
      if (tokenExpiry(s, now).expired || secretData(s, 'usage-bootstrap-signing') !== 'true') continue;
      out.set(id, tokenSecret);
    }
    return out;
  }

  private sign(): void {
    const kind = this.rest.kinds.get('', 'v1', 'configmaps')!;
    const cm = this.rest.store.get(kind.resource, KUBE_PUBLIC, CLUSTER_INFO);
    const content = cm?.data?.kubeconfig;
    if (typeof content !== 'string') return;
    const data: Record<string, string> = {};
    for (const [k, v] of Object.entries(cm.data as Record<string, string>))
      if (!k.startsWith(SIGNATURE_PREFIX)) data[k] = v;
    for (const [id, tokenSecret] of this.signingTokens())
      data[`${SIGNATURE_PREFIX}${id}`] = detachedSignature(content, id, tokenSecret);
    const same =
      Object.keys(data).length === Object.keys(cm.data).length &&
      Object.entries(data).every(([k, v]) => cm.data[k] === v);
    if (same) return;
    this.rest.update(kind, KUBE_PUBLIC, CLUSTER_INFO, { ...cm, data });
  }

  private clean(name: string): void {
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
    const secret = this.rest.store.get('/secrets', KUBE_SYSTEM, name);
    if (!secret || secret.type !== BOOTSTRAP_TOKEN_TYPE) return;
    const { expired, remainingMs } = tokenExpiry(secret, this.nowMs());
    if (expired) {
      const kind = this.rest.kinds.get('', 'v1', 'secrets')!;
      this.rest.delete(kind, KUBE_SYSTEM, name, { preconditions: { uid: secret.metadata.uid } });
    } else if (remainingMs !== undefined) {
      // queue.AddAfter(key, ttl): look again when it expires (unref'd: never keeps the process alive).
      const t = setTimeout(
        () => {
          this.timers.delete(name);
          this.pending ??= new Set();
          this.pending.add(name).add('sign');
          this.drain();
        },
        Math.min(remainingMs, 2 ** 31 - 1),
      );
      t.unref();
      this.timers.set(name, t);
    }
  }
}
