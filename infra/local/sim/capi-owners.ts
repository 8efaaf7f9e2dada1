/**
 * The Cluster API simulator's owners of Machines (test and dev only): a KubeadmControlPlane and a
 * MachineSet keep `spec.replicas` Machines + Metal3Machines cloned from their Metal3MachineTemplate
 * (newest deleted first on scale-down); a MachineDeployment keeps one MachineSet `<md>` whose
 * replicas follow its own. A MachineSet no deployment owns is its own owner of Machines.
 * Each new Machine gets a KubeadmConfig of its name, as they make it: the control plane's from its
 * `kubeadmConfigSpec` (the first machine's with the init configuration, the others' with the join
 * one), a MachineSet's from the KubeadmConfigTemplate its machine template names; the bootstrap
 * provider's part (./capi-bootstrap.ts) then serves it. An owner with neither gives its Machines
 * no bootstrap reference (./capi-machine.ts generates their data).
 * A template that is not there yet is waited for: its creation brings the owner back (capi.ts).
 */
import { apiVersionOf, envelopeOf, R, type ResourceType } from '../../../shared/api/resources.ts';
import { CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL } from '../../../shared/api/wellknown.ts';
import { isAlreadyExists } from '../../../shared/kube/errors.ts';
import { optimisticUpdate, SKIP } from '../../../shared/kube/optimistic.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { CapiContext } from './capi-context.ts';
import {
  CONTROL_PLANE_NAME_LABEL,
  cloneMetal3Machine,
  type MachineOwner,
  newKubeadmConfig,
  newMachine,
  ownerLabels,
  ownerRefTo,
  randomSuffix,
  SET_NAME_LABEL,
  scalePlan,
} from './capi-objects.ts';

type Spec = Record<string, any>;

const typed = (o: KubeObject, t: ResourceType): KubeObject => {
  o.apiVersion ??= `${t.group}/${t.version}`;
  o.kind ??= t.kind;
  return o;
};

/** A MachineDeployment: its MachineSet `<md>` exists and has the deployment's replicas. */
export async function handleDeployment(ctx: CapiContext, ns: string, name: string): Promise<void> {
  const { client } = ctx;
  const md = await client.get(R.MachineDeployment, ns, name);
  if (!md || md.metadata.deletionTimestamp) return;
  typed(md, R.MachineDeployment);
  const spec = (md.spec ?? {}) as Spec;
  const clusterName = spec.clusterName ?? md.metadata.labels?.[CLUSTER_NAME_LABEL];
  if (!clusterName || !spec.template?.spec?.infrastructureRef?.name) return;
  const replicas = spec.replicas ?? 1;
  const current = await client.get(R.MachineSet, ns, name);
  if (!current) {
    try {
      await client.create(R.MachineSet, {
        metadata: {
          name,
          namespace: ns,
          labels: {
            ...(spec.template?.metadata?.labels ?? {}),
            [CLUSTER_NAME_LABEL]: clusterName,
            [DEPLOYMENT_NAME_LABEL]: name,
          },
          ownerReferences: [ownerRefTo(md)],
        },
        spec: {
          clusterName,
          replicas,
          selector: spec.selector ?? { matchLabels: { [DEPLOYMENT_NAME_LABEL]: name } },
          template: { ...spec.template, spec: { clusterName, ...spec.template.spec } },
        },
      });
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  } else {
    await optimisticUpdate(
      client,
      R.MachineSet,
      ns,
      name,
      (o) => {
        const s = (o.spec ?? {}) as Spec;
        if (s.replicas === replicas) return SKIP;
        s.replicas = replicas;
        o.spec = s;
      },
      { current },
    );
  }
  ctx.enqueue('MachineSet', ns, name);
}

/** A KubeadmControlPlane or a MachineSet: `spec.replicas` Machines with their Metal3Machines. */
export async function handleMachineOwner(
  ctx: CapiContext,
  kind: 'KubeadmControlPlane' | 'MachineSet',
  ns: string,
  name: string,
): Promise<void> {
  const { client } = ctx;
  const t = envelopeOf(kind === 'KubeadmControlPlane' ? R.KubeadmControlPlane : R.MachineSet);
  const obj = await client.get(t, ns, name);
  if (!obj || obj.metadata.deletionTimestamp) return;
  typed(obj, t);
  const owner = kind === 'KubeadmControlPlane' ? await controlPlaneOwner(ctx, obj) : machineSetOwner(obj);
  if (!owner) return;
  const selectorKey = kind === 'KubeadmControlPlane' ? CONTROL_PLANE_NAME_LABEL : SET_NAME_LABEL;
  const { items } = await client.list(R.Machine, ns, { labelSelector: `${selectorKey}=${name}` });
  const plan = scalePlan(items, ((obj.spec ?? {}) as Spec).replicas ?? 1);
  for (const m of plan.remove) await client.delete(R.Machine, ns, m.metadata.name!);
  if (plan.create === 0) return;
  const template = await client.get(R.Metal3MachineTemplate, ns, owner.templateName);
  if (!template) {
    ctx.log?.info('capi sim: waiting for the Metal3MachineTemplate', {
      owner: `${kind} ${ns}/${name}`,
      template: owner.templateName,
    });
    return;
  }
  typed(template, R.Metal3MachineTemplate);
  const bootstrap = await bootstrapOf(ctx, kind, obj);
  if (bootstrap === 'wait') return;
  const live = items.filter((m) => !m.metadata.deletionTimestamp).length;
  for (let i = 0; i < plan.create; i++) {
    const machineName = `${name}-${randomSuffix()}`;
    let ref: Record<string, unknown> = bootstrap.dataSecretName
      ? { dataSecretName: bootstrap.dataSecretName }
      : {};
    if (bootstrap.config) {
      const spec = bootstrap.config(live + i === 0);
      await client.create(R.KubeadmConfig, newKubeadmConfig(owner, machineName, spec));
      ref = {
        configRef: { apiVersion: apiVersionOf(R.KubeadmConfig), kind: 'KubeadmConfig', name: machineName },
      };
    }
    const machine = typed(
      await client.create<KubeObject>(R.Machine, newMachine(owner, machineName, ref)),
      R.Machine,
    );
    await client.create(R.Metal3Machine, cloneMetal3Machine(template, machine));
  }
}

/** How an owner's new Machines get their bootstrap data; 'wait' while a KubeadmConfigTemplate is missing. */
async function bootstrapOf(
  ctx: CapiContext,
  kind: 'KubeadmControlPlane' | 'MachineSet',
  obj: KubeObject,
): Promise<'wait' | { config?: (first: boolean) => Spec; dataSecretName?: string }> {
  const spec = (obj.spec ?? {}) as Spec;
  if (kind === 'KubeadmControlPlane') {
    const kcs = spec.kubeadmConfigSpec as Spec | undefined;
    if (!kcs) return {};
    return {
      config: (first) => {
        const { initConfiguration, joinConfiguration, ...rest } = structuredClone(kcs);
        return first
          ? { ...rest, ...(initConfiguration ? { initConfiguration } : {}) }
          : { ...rest, joinConfiguration: joinConfiguration ?? {} };
      },
    };
  }
  const b = (spec.template?.spec?.bootstrap ?? {}) as Spec;
  if (b.dataSecretName) return { dataSecretName: b.dataSecretName };
  if (b.configRef?.kind !== 'KubeadmConfigTemplate' || !b.configRef.name) return {};
  const ns = obj.metadata.namespace!;
  const t = await ctx.client.get(R.KubeadmConfigTemplate, ns, b.configRef.name);
  if (!t) {
    ctx.log?.info('capi sim: waiting for the KubeadmConfigTemplate', {
      owner: `MachineSet ${ns}/${obj.metadata.name}`,
      template: b.configRef.name,
    });
    return 'wait';
  }
  const templateSpec = ((t.spec ?? {}) as Spec).template?.spec ?? {};
  return { config: () => structuredClone(templateSpec) };
}

async function controlPlaneOwner(ctx: CapiContext, kcp: KubeObject): Promise<MachineOwner | undefined> {
  const ns = kcp.metadata.namespace!;
  const name = kcp.metadata.name!;
  const spec = (kcp.spec ?? {}) as Spec;
  const clusterName =
    kcp.metadata.labels?.[CLUSTER_NAME_LABEL] ?? (await clusterOfControlPlane(ctx, ns, name));
  const templateName = spec.machineTemplate?.infrastructureRef?.name;
  if (!clusterName || !templateName) return undefined;
  return {
    owner: kcp,
    kind: 'KubeadmControlPlane',
    name,
    clusterName,
    version: spec.version,
    labels: ownerLabels('KubeadmControlPlane', name, clusterName),
    templateName,
    templateLabels: spec.machineTemplate?.metadata?.labels,
  };
}

function machineSetOwner(ms: KubeObject): MachineOwner | undefined {
  const spec = (ms.spec ?? {}) as Spec;
  const clusterName =
    spec.clusterName ?? spec.template?.spec?.clusterName ?? ms.metadata.labels?.[CLUSTER_NAME_LABEL];
  const templateName = spec.template?.spec?.infrastructureRef?.name;
  if (!clusterName || !templateName) return undefined;
  const deployment =
    ms.metadata.ownerReferences?.find((r) => r.kind === 'MachineDeployment')?.name ??
    ms.metadata.labels?.[DEPLOYMENT_NAME_LABEL];
  return {
    owner: ms,
    kind: 'MachineSet',
    name: ms.metadata.name!,
    clusterName,
    version: spec.template?.spec?.version,
    labels: ownerLabels('MachineSet', ms.metadata.name!, clusterName, deployment),
    templateName,
    templateLabels: spec.template?.metadata?.labels,
  };
}

/** The Cluster whose controlPlaneRef names this KubeadmControlPlane. */
export async function clusterOfControlPlane(
  ctx: CapiContext,
  ns: string,
  kcp: string,
): Promise<string | undefined> {
  const { items } = await ctx.client.list(R.Cluster, ns);
  return items.find(
    (c) => (c.spec as { controlPlaneRef?: { name?: string } } | undefined)?.controlPlaneRef?.name === kcp,
  )?.metadata.name;
}
