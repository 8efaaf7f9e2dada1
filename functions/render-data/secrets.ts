/**
 * The rendered Secrets of a Metal3Data: `<m3m>-metadata-<index>` and `<m3m>-networkdata-<index>`
 * (DESIGN.md §2), type `infrastructure.cluster.x-k8s.io/secret`, keys `metaData`/`networkData`,
 * label cluster-name, controller owner the Metal3Data. Created with deterministic names and never
 * rewritten: a Secret that exists with our owner is kept as it is.
 */

import {
  isOwnedBy,
  metaDataSecretName,
  networkDataSecretName,
  ownerOfKind,
  ownerRef,
} from '../../shared/allocation/objects.ts';
import type { Secret } from '../../shared/api/core.ts';
import { R } from '../../shared/api/resources.ts';
import { CLUSTER_NAME_LABEL, DATA_SECRET_TYPE } from '../../shared/api/wellknown.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { isAlreadyExists } from '../../shared/kube/errors.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { RenderedData } from '../../shared/render/index.ts';

export interface SecretNames {
  metaData: string;
  /** Only when the template has a networkData part. */
  networkData: string | undefined;
}

export function secretNames(m3mName: string, index: number, withNetworkData: boolean): SecretNames {
  return {
    metaData: metaDataSecretName(m3mName, index),
    networkData: withNetworkData ? networkDataSecretName(m3mName, index) : undefined,
  };
}

function secret(
  dataRaw: KubeObject,
  name: string,
  key: string,
  value: string,
  clusterName: string | undefined,
): Secret {
  return {
    metadata: {
      name,
      namespace: dataRaw.metadata.namespace,
      ...(clusterName ? { labels: { [CLUSTER_NAME_LABEL]: clusterName } } : {}),
      ownerReferences: [ownerRef(R.Metal3Data, dataRaw, { controller: true })],
    },
    type: DATA_SECRET_TYPE,
    data: { [key]: Buffer.from(value, 'utf8').toString('base64') },
  };
}

/**
 * The Secret objects for rendered data (pure: equal inputs give byte-identical Secrets). The YAML
 * writer (the `yaml` package, ~115 KB) is imported here, on the first render, not at every Lambda
 * start: most messages render nothing (docs/adr/011-cold-start.md).
 */
export async function buildSecrets(
  dataRaw: KubeObject,
  names: SecretNames,
  rendered: RenderedData,
  clusterName: string | undefined,
): Promise<Secret[]> {
  const { serializeMetaData, serializeNetworkData } = await import('../../shared/render/serialize.ts');
  const out = [
    secret(dataRaw, names.metaData, 'metaData', serializeMetaData(rendered.metaData), clusterName),
  ];
  if (names.networkData && rendered.networkData) {
    out.push(
      secret(
        dataRaw,
        names.networkData,
        'networkData',
        serializeNetworkData(rendered.networkData),
        clusterName,
      ),
    );
  }
  return out;
}

export type SecretState = 'ours' | 'missing' | 'foreign-data' | 'user';

/** Whether a Secret of that name is ours, absent, a leftover of another Metal3Data, or the user's. */
export function secretState(existing: KubeObject | undefined, dataUid: string | undefined): SecretState {
  if (!existing) return 'missing';
  if (isOwnedBy(existing, dataUid)) return 'ours';
  return ownerOfKind(existing, 'Metal3Data') ? 'foreign-data' : 'user';
}

/** Reads the current state of each named Secret. */
export async function secretStates(
  client: KubeClient,
  dataRaw: KubeObject,
  names: SecretNames,
): Promise<SecretState[]> {
  const list = [names.metaData, names.networkData].filter((n): n is string => Boolean(n));
  const found = await Promise.all(list.map((n) => client.get(R.Secret, dataRaw.metadata.namespace, n)));
  return found.map((s) => secretState(s, dataRaw.metadata.uid));
}

/**
 * Creates the missing Secrets. An existing one is never rewritten. Returns false when a Secret of
 * an earlier Metal3Data still holds a name (garbage collection removes it; its event wakes us).
 */
export async function createSecrets(
  client: KubeClient,
  dataUid: string | undefined,
  secrets: Secret[],
): Promise<boolean> {
  for (const s of secrets) {
    try {
      await client.create(R.Secret, s);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      const existing = await client.get(R.Secret, s.metadata.namespace, s.metadata.name!);
      if (secretState(existing, dataUid) === 'foreign-data') return false;
    }
  }
  return true;
}
