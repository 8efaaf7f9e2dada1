/**
 * What `kubeadm join --token <id>.<secret> --discovery-token-ca-cert-hash sha256:<hash>` reads
 * before it trusts the cluster: the ConfigMap kube-public/cluster-info that `kubeadm init`
 * writes (cmd/kubeadm/app/phases/bootstraptoken/clusterinfo: a kubeconfig with the server and
 * the CA, readable by system:anonymous through the Role kubeadm:bootstrap-signer-clusterinfo),
 * kept signed by the bootstrap signer, and the pin of the CA's public key (kubeadm's
 * pubkeypin.Hash). Only in TLS mode: without a CA there is nothing to pin.
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { Rest } from '../rest.ts';

export const KUBE_PUBLIC = 'kube-public';
export const CLUSTER_INFO = 'cluster-info';
const RBAC = 'rbac.authorization.k8s.io';
const CLUSTER_INFO_ROLE = 'kubeadm:bootstrap-signer-clusterinfo';

/** `sha256:<hex>` of the certificate's Subject Public Key Info: the value of --discovery-token-ca-cert-hash. */
export function caCertHash(caPem: string): string {
  const spki = new X509Certificate(caPem).publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}

/** The kubeconfig kubeadm puts in cluster-info: clientcmd.Write of one unnamed cluster. */
export function clusterInfoKubeconfig(server: string, caPem: string): string {
  return [
    'apiVersion: v1',
    'clusters:',
    '- cluster:',
    `    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}`,
    `    server: ${server}`,
    '  name: ""',
    'contexts: null',
    'current-context: ""',
    'kind: Config',
    'preferences: {}',
    'users: null',
    '',
  ].join('\n');
}

/**
 * Creates or updates cluster-info (kubeadm's CreateOrUpdateConfigMap: a restart from a data file
 * may bring a new URL or CA; the signer then re-signs) and creates its anonymous-read Role and
 * RoleBinding when missing, as `kubeadm init` does.
 */
export function ensureClusterInfo(rest: Rest, server: string, caPem: string): void {
  const cm = rest.kinds.get('', 'v1', 'configmaps')!;
  const kubeconfig = clusterInfoKubeconfig(server, caPem);
  const live = rest.store.get(cm.resource, KUBE_PUBLIC, CLUSTER_INFO);
  if (!live)
    rest.create(cm, KUBE_PUBLIC, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: CLUSTER_INFO, namespace: KUBE_PUBLIC },
      data: { kubeconfig },
    });
  else if (live.data?.kubeconfig !== kubeconfig)
    rest.update(cm, KUBE_PUBLIC, CLUSTER_INFO, { ...live, data: { ...live.data, kubeconfig } });
  const role = rest.kinds.get(RBAC, 'v1', 'roles')!;
  if (!rest.store.get(role.resource, KUBE_PUBLIC, CLUSTER_INFO_ROLE))
    rest.create(role, KUBE_PUBLIC, {
      apiVersion: `${RBAC}/v1`,
      kind: 'Role',
      metadata: { name: CLUSTER_INFO_ROLE, namespace: KUBE_PUBLIC },
      rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: [CLUSTER_INFO], verbs: ['get'] }],
    });
  const binding = rest.kinds.get(RBAC, 'v1', 'rolebindings')!;
  if (!rest.store.get(binding.resource, KUBE_PUBLIC, CLUSTER_INFO_ROLE))
    rest.create(binding, KUBE_PUBLIC, {
      apiVersion: `${RBAC}/v1`,
      kind: 'RoleBinding',
      metadata: { name: CLUSTER_INFO_ROLE, namespace: KUBE_PUBLIC },
      roleRef: { apiGroup: RBAC, kind: 'Role', name: CLUSTER_INFO_ROLE },
      subjects: [{ apiGroup: RBAC, kind: 'User', name: 'system:anonymous' }],
    });
}
