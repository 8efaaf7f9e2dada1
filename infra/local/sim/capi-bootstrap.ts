/**
 * The kubeadm bootstrap provider's part in the Cluster API simulator (test and dev only), for a
 * Machine whose `spec.bootstrap.configRef` names a KubeadmConfig: the config is owned by its
 * Machine (Cluster API core's part), its bootstrap data is a Secret named after it (key `value`,
 * `format: cloud-config`, owned by the config, as CABPK writes it), and its status says
 * `ready: true` with that `dataSecretName`. The cloud-config is a simulation: the config's files
 * and commands around a `kubeadm init|join` line that nothing runs.
 */
import { stringify } from 'yaml';
import { R } from '../../../shared/api/resources.ts';
import { CLUSTER_NAME_LABEL } from '../../../shared/api/wellknown.ts';
import { isAlreadyExists } from '../../../shared/kube/errors.ts';
import { optimisticUpdate, SKIP } from '../../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { CapiContext } from './capi-context.ts';
import { ownerRefTo } from './capi-objects.ts';

export interface KubeadmConfigSpec {
  initConfiguration?: unknown;
  joinConfiguration?: unknown;
  files?: { path?: string; content?: string; owner?: string; permissions?: string }[];
  preKubeadmCommands?: string[];
  postKubeadmCommands?: string[];
}

/** The simulated cloud-config of a KubeadmConfig (pure). */
export function kubeadmCloudConfig(config: KubeObject, machine: KubeObject): string {
  const spec = (config.spec ?? {}) as KubeadmConfigSpec;
  const phase = spec.joinConfiguration ? 'join' : 'init';
  const doc: Record<string, unknown> = {};
  const files = (spec.files ?? []).filter((f) => f.path);
  if (files.length) doc.write_files = files;
  doc.runcmd = [
    ...(spec.preKubeadmCommands ?? []),
    `echo kubeadm ${phase} (simulated)`,
    ...(spec.postKubeadmCommands ?? []),
  ];
  return `#cloud-config\n# simulated kubeadm bootstrap data of KubeadmConfig ${config.metadata.namespace}/${config.metadata.name} for Machine ${machine.metadata.name}\n${stringify(doc)}`;
}

/**
 * The bootstrap data Secret's name once the KubeadmConfig is ready; undefined while it does not
 * exist (its creation brings the Machine back).
 */
export async function kubeadmBootstrap(
  ctx: CapiContext,
  machine: KubeObject,
  configName: string,
  clusterName: string,
): Promise<string | undefined> {
  const { client } = ctx;
  const ns = machine.metadata.namespace!;
  let config = await client.get(R.KubeadmConfig, ns, configName);
  if (!config) return undefined;
  const owned = await optimisticUpdate(
    client,
    R.KubeadmConfig,
    ns,
    configName,
    (o) => {
      const owners = o.metadata.ownerReferences ?? [];
      const labels = o.metadata.labels ?? {};
      if (owners.some((x) => x.uid === machine.metadata.uid) && (!clusterName || labels[CLUSTER_NAME_LABEL]))
        return SKIP;
      if (!owners.some((x) => x.uid === machine.metadata.uid))
        o.metadata.ownerReferences = [...owners.filter((x) => !x.controller), ownerRefTo(machine)];
      if (clusterName)
        o.metadata.labels = { ...labels, [CLUSTER_NAME_LABEL]: labels[CLUSTER_NAME_LABEL] ?? clusterName };
    },
    { current: config },
  );
  if (owned.outcome === 'gone') return undefined;
  config = owned.object;
  config.apiVersion ??= `${R.KubeadmConfig.group}/${R.KubeadmConfig.version}`;
  config.kind ??= 'KubeadmConfig';
  const status = (config.status ?? {}) as { ready?: boolean; dataSecretName?: string };
  if (status.ready && status.dataSecretName) return status.dataSecretName;
  try {
    await client.create(R.Secret, {
      metadata: {
        name: configName,
        namespace: ns,
        labels: { ...(clusterName ? { [CLUSTER_NAME_LABEL]: clusterName } : {}) },
        ownerReferences: [ownerRefTo(config)],
      },
      type: 'cluster.x-k8s.io/secret',
      data: {
        value: Buffer.from(kubeadmCloudConfig(config, machine)).toString('base64'),
        format: Buffer.from('cloud-config').toString('base64'),
      },
    });
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
  await optimisticUpdate(
    client,
    R.KubeadmConfig,
    ns,
    configName,
    (o) => {
      const st = (o.status ?? {}) as Record<string, unknown>;
      if (st.ready === true && st.dataSecretName === configName) return SKIP;
      o.status = { ...st, ready: true, dataSecretName: configName };
    },
    { status: true, current: config },
  );
  return configName;
}
