/**
 * The Secret through which a workload cluster is reached: key `value`, a kubeconfig, as Cluster
 * API writes `<cluster>-kubeconfig` (type `cluster.x-k8s.io/secret`, labelled with the cluster
 * name, owned by the object that made it: the KubeadmControlPlane, or the Cluster when it has no
 * control-plane provider). vMetal's `<vClusterRef.name>-kubeconfig` has the same shape.
 */
import { apiVersionOf, R } from '../../../shared/api/resources.ts';
import { CLUSTER_NAME_LABEL } from '../../../shared/api/wellknown.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { isAlreadyExists } from '../../../shared/kube/errors.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';

export interface KubeconfigSecretSpec {
  namespace: string;
  secretName: string;
  clusterName: string;
  kubeconfig: string;
  /** The controller owner (its apiVersion, kind, name and uid). */
  owner?: KubeObject | undefined;
}

export function kubeconfigSecret(s: KubeconfigSecretSpec): KubeObject {
  return {
    apiVersion: apiVersionOf(R.Secret),
    kind: 'Secret',
    metadata: {
      name: s.secretName,
      namespace: s.namespace,
      labels: { [CLUSTER_NAME_LABEL]: s.clusterName },
      ...(s.owner
        ? {
            ownerReferences: [
              {
                apiVersion: s.owner.apiVersion!,
                kind: s.owner.kind!,
                name: s.owner.metadata.name!,
                uid: s.owner.metadata.uid!,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    type: 'cluster.x-k8s.io/secret',
    data: { value: Buffer.from(s.kubeconfig).toString('base64') },
  };
}

/**
 * Creates the Secret unless one of that name exists (whoever wrote it: a user's Secret is kept).
 * A create with a deterministic name, so two writers never both succeed.
 */
export async function publishKubeconfig(
  client: KubeClient,
  s: KubeconfigSecretSpec,
): Promise<'created' | 'exists'> {
  try {
    await client.create(R.Secret, kubeconfigSecret(s));
    return 'created';
  } catch (e) {
    if (isAlreadyExists(e)) return 'exists';
    throw e;
  }
}
