/**
 * The Cluster API simulator's Cluster pass (test and dev only):
 * - Cluster API core: ownerRef and cluster label on the Metal3Cluster, `spec.controlPlaneEndpoint`
 *   from the Metal3Cluster's, `status.infrastructureReady` from its `status.ready`;
 * - the control plane's part, once the infrastructure is ready: the cluster's API server (an
 *   embedded workload cluster) and its `<cluster>-kubeconfig` Secret, owned by the
 *   KubeadmControlPlane that `spec.controlPlaneRef` names (the Cluster itself when it names none, as
 *   Cluster API core writes it then). A Secret of that name that is already there is kept.
 */
import { R } from '../../../shared/api/resources.ts';
import { CLUSTER_NAME_LABEL } from '../../../shared/api/wellknown.ts';
import { optimisticUpdate, SKIP } from '../../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { kubeconfigSecretName } from '../../../shared/kube/workload.ts';
import { publishKubeconfig } from '../workload/secret.ts';
import type { CapiContext } from './capi-context.ts';
import { ownerRefTo } from './capi-objects.ts';

type Endpoint = { host?: string; port?: number };
type ClusterSpec = {
  infrastructureRef?: { kind?: string; name?: string };
  controlPlaneRef?: { kind?: string; name?: string };
  controlPlaneEndpoint?: Endpoint;
};

export async function handleCluster(ctx: CapiContext, ns: string, name: string): Promise<void> {
  const { client } = ctx;
  const cluster = await client.get(R.Cluster, ns, name);
  if (!cluster) {
    await ctx.controlPlane?.release(ns, name);
    return;
  }
  if (cluster.metadata.deletionTimestamp) return;
  cluster.apiVersion ??= `${R.Cluster.group}/${R.Cluster.version}`;
  cluster.kind ??= 'Cluster';
  const ref = (cluster.spec as ClusterSpec | undefined)?.infrastructureRef;
  if (ref?.kind !== 'Metal3Cluster' || !ref.name) return;
  let m3c = await client.get(R.Metal3Cluster, ns, ref.name);
  if (!m3c) return;
  const res = await optimisticUpdate(
    client,
    R.Metal3Cluster,
    ns,
    ref.name,
    (o) => {
      const owners = o.metadata.ownerReferences ?? [];
      const labels = o.metadata.labels ?? {};
      if (
        owners.some((x) => x.kind === 'Cluster' && x.uid === cluster.metadata.uid) &&
        labels[CLUSTER_NAME_LABEL] === name
      )
        return SKIP;
      o.metadata.ownerReferences = [
        ...owners.filter((x) => x.kind !== 'Cluster'),
        ownerRefTo(cluster, false),
      ];
      o.metadata.labels = { ...labels, [CLUSTER_NAME_LABEL]: name };
    },
    { current: m3c },
  );
  if (res.outcome !== 'gone') m3c = res.object;
  const endpoint = (m3c.spec as { controlPlaneEndpoint?: Endpoint } | undefined)?.controlPlaneEndpoint;
  const ready = (m3c.status as { ready?: boolean } | undefined)?.ready === true;
  const spec = await optimisticUpdate(
    client,
    R.Cluster,
    ns,
    name,
    (o) => {
      const s = (o.spec ?? {}) as ClusterSpec;
      if (!endpoint?.host || s.controlPlaneEndpoint?.host) return SKIP;
      s.controlPlaneEndpoint = { host: endpoint.host, port: endpoint.port ?? 6443 };
      o.spec = s;
    },
    { current: cluster },
  );
  await optimisticUpdate(
    client,
    R.Cluster,
    ns,
    name,
    (o) => {
      o.status ??= {};
      const st = o.status as Record<string, unknown>;
      st.infrastructureReady = ready;
      st.phase = ready ? 'Provisioned' : 'Provisioning';
    },
    { status: true, current: spec.outcome === 'gone' ? undefined : spec.object },
  );
  if (ready) await ensureKubeconfig(ctx, cluster);
}

/** The control plane's part: the cluster's API server and its kubeconfig Secret, once. */
async function ensureKubeconfig(ctx: CapiContext, cluster: KubeObject): Promise<void> {
  const { client, controlPlane } = ctx;
  if (!controlPlane) return;
  const ns = cluster.metadata.namespace!;
  const name = cluster.metadata.name!;
  const secretName = kubeconfigSecretName(name);
  if (await client.get(R.Secret, ns, secretName)) return;
  const cpRef = (cluster.spec as ClusterSpec | undefined)?.controlPlaneRef;
  let owner: KubeObject | undefined = cluster;
  if (cpRef?.kind === 'KubeadmControlPlane' && cpRef.name) {
    owner = await client.get(R.KubeadmControlPlane, ns, cpRef.name);
    // The control plane is not there yet: its creation brings this Cluster back (capi.ts).
    if (!owner) return;
    owner.apiVersion ??= `${R.KubeadmControlPlane.group}/${R.KubeadmControlPlane.version}`;
    owner.kind ??= 'KubeadmControlPlane';
  }
  const kubeconfig = await controlPlane.kubeconfig(ns, name);
  if (kubeconfig === undefined) return;
  const outcome = await publishKubeconfig(client, {
    namespace: ns,
    secretName,
    clusterName: name,
    kubeconfig,
    owner,
  });
  // Someone wrote the Secret meanwhile: theirs serves the cluster, our API server goes.
  if (outcome === 'exists') await controlPlane.release(ns, name);
  else ctx.log?.info('capi sim: workload cluster up', { cluster: `${ns}/${name}`, secret: secretName });
}
