/** Knative ApiServerSource deliveries for tests and benches: a Resource-mode event, a host heartbeat. */
import { envelopeOf, R } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { CloudEvent, cloudEventRequest } from '../../shared/runtimes/cloudevents.ts';

/** `object` as the source delivers an update in Resource mode (binary CloudEvent over HTTP). */
export const resourceUpdateEvent = (object: KubeObject): { headers: Record<string, string>; body: string } =>
  cloudEventRequest(
    new CloudEvent({
      type: 'dev.knative.apiserver.resource.update',
      source: 'https://kubernetes.default.svc',
      id: `${object.metadata.uid}/${object.metadata.resourceVersion}`,
      datacontenttype: 'application/json',
      data: object,
    }),
    'binary',
  );

/** A BareMetalHost status change no function reads (`poweredOn` flips); the host as written. */
export async function powerHeartbeat(client: KubeClient, ns: string, name: string): Promise<KubeObject> {
  const bmh = envelopeOf(R.BareMetalHost);
  const h = await client.get(bmh, ns, name);
  if (!h) throw new Error(`no host ${ns}/${name}`);
  const on: unknown = Reflect.get(h.status ?? {}, 'poweredOn');
  return client.replaceStatus(bmh, { ...h, status: { ...(h.status ?? {}), poweredOn: on !== true } });
}
