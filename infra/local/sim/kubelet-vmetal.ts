/**
 * The kubelet simulator for a vMetal host (test and dev only): a provisioned host held by a
 * NodeClaim boots its user data (the Secret `spec.userData` names, key `userData` or `value`),
 * runs the `kubeadm join` found there (./kubeadm-join.ts: discovery against the join endpoint,
 * the bootstrap token authenticated) and registers Node `<claim>` in the claim's tenant cluster
 * (claim namespace + `vClusterRef`) with the labels of `--node-labels`, the taints of
 * `--register-with-taints`, Ready, and the claim's address (`metal3.vcluster.com/ip-address`).
 *
 * The Node is written with the simulator's client of the tenant (the credential a real kubelet
 * gets once its CSR is approved), only after the token authenticated: see ADR 018.
 */
import { R } from '../../../shared/api/resources.ts';
import { NODE_CLAIM_LABEL, VMETAL_HOST_ANNOTATION } from '../../../shared/api/wellknown.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { JoinRefused, kubeadmJoin } from './kubeadm-join.ts';
import { registerReadyNode } from './kubelet-node.ts';
import { joinRequestFromUserData } from './userdata-join.ts';

export interface ClaimTarget {
  /** The claim's namespace and its vClusterRef: the tenant cluster's key. */
  namespace: string;
  cluster: string;
  claim: string;
}

/** The claim that holds the host (consumerRef kind NodeClaim and the node-claim label), if any. */
export async function claimTargetOf(mgmt: KubeClient, host: KubeObject): Promise<ClaimTarget | undefined> {
  const consumer = (
    host.spec as { consumerRef?: { kind?: string; name?: string; namespace?: string } } | undefined
  )?.consumerRef;
  if (consumer?.kind !== 'NodeClaim' || !consumer.name || !host.metadata.labels?.[NODE_CLAIM_LABEL])
    return undefined;
  const ns = consumer.namespace || host.metadata.namespace!;
  const claim = await mgmt.get(R.NodeClaim, ns, consumer.name);
  if (!claim || claim.metadata.uid !== host.metadata.labels[NODE_CLAIM_LABEL]) return undefined;
  return { namespace: ns, cluster: claim.spec.vClusterRef, claim: consumer.name };
}

async function userDataOf(mgmt: KubeClient, host: KubeObject): Promise<string> {
  const ref = (host.spec as { userData?: { name?: string; namespace?: string } } | undefined)?.userData;
  if (!ref?.name) throw new JoinRefused('the host has no spec.userData');
  const ns = ref.namespace || host.metadata.namespace!;
  const secret = await mgmt.get(R.Secret, ns, ref.name);
  const data = (secret?.data ?? {}) as Record<string, string>;
  const b64 = data.userData ?? data.value;
  if (!b64) throw new JoinRefused(`user data Secret ${ns}/${ref.name} is missing or has no userData`);
  return Buffer.from(b64, 'base64').toString('utf8');
}

/** Joins the host's node: the Node name and the token's identity. Throws JoinRefused when it cannot join. */
export async function joinClaimHost(
  mgmt: KubeClient,
  tenant: (namespace: string, cluster: string) => Promise<KubeClient>,
  host: KubeObject,
  target: ClaimTarget,
): Promise<{ node: string; identity: string }> {
  let request: ReturnType<typeof joinRequestFromUserData>;
  try {
    request = joinRequestFromUserData(await userDataOf(mgmt, host));
  } catch (e) {
    if (e instanceof JoinRefused) throw e;
    throw new JoinRefused(`user data: ${e instanceof Error ? e.message : String(e)}`);
  }
  const joined = await kubeadmJoin(request.join);
  const name = request.nodeName ?? target.claim;
  const ip = host.metadata.annotations?.[VMETAL_HOST_ANNOTATION.ipAddress]?.split('/')[0];
  await registerReadyNode(await tenant(target.namespace, target.cluster), {
    name,
    // The kubelet's own labels win over --node-labels for these keys.
    labels: {
      ...request.labels,
      'kubernetes.io/hostname': name,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
    },
    spec: request.taints.length > 0 ? { taints: request.taints } : {},
    addresses: [...(ip ? [{ type: 'InternalIP', address: ip }] : []), { type: 'Hostname', address: name }],
    machineID: host.metadata.uid,
  });
  return { node: name, identity: joined.username };
}
