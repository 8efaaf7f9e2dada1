/**
 * Requests as a client sends them, through client-node's request machinery (KubeClient's own
 * transport), with any method, query and content type; failures as the typed KubeApiError
 * KubeClient raises, so cases can assert the Status the server answered.
 */
import type { HttpMethod } from '@kubernetes/client-node';
import type { KubeClient } from '../../shared/kube/client.ts';
import { type KubeApiError, kubeErrorFrom } from '../../shared/kube/errors.ts';

export async function send(
  client: KubeClient,
  method: HttpMethod,
  path: string,
  query: Record<string, string>,
  body?: unknown,
  contentType?: string,
): Promise<any> {
  try {
    return await (client as any).api.send(method, path, query, body, contentType);
  } catch (e) {
    // client-node's ApiException carries the Status body as text.
    const err = e as { code?: number; body?: unknown };
    if (typeof err.code === 'number' && !(err as { status?: unknown }).status)
      throw kubeErrorFrom(err.code, err.body);
    throw e;
  }
}

/** The error a request fails with; throws when it succeeds. */
export async function failure(p: Promise<unknown>): Promise<KubeApiError> {
  try {
    await p;
  } catch (e) {
    return e as KubeApiError;
  }
  throw new Error('expected the request to fail');
}
