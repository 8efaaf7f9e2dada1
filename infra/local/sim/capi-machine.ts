/**
 * The Cluster API simulator's Machine pass (test and dev only), Cluster API core's part:
 * - finalizer and the cluster-name label (Cluster API's defaulting); bootstrap data: the KubeadmConfig `spec.bootstrap.configRef` names (the kubeadm
 *   bootstrap provider's part, ./capi-bootstrap.ts), or, for a Machine with neither a configRef nor
 *   a dataSecretName, a generated `<machine>-bootstrap` Secret standing in for a bootstrap provider;
 *   `spec.bootstrap.dataSecretName` once the data is there;
 * - ownerRef + the Machine's labels on its Metal3Machine;
 * - once the Metal3Machine is ready: its providerID on the Machine (replacing any the Machine
 *   carried, as Cluster API's Machine controller does), its addresses;
 * - `status.nodeRef` and `phase: Running` once a Node of the Machine's workload cluster carries
 *   the same providerID;
 * - deletion: deletes the Metal3Machine, waits for it to be gone, drops the finalizer.
 */
import { R } from '../../../shared/api/resources.ts';
import { CLUSTER_NAME_LABEL } from '../../../shared/api/wellknown.ts';
import { isAlreadyExists } from '../../../shared/kube/errors.ts';
import { optimisticUpdate, SKIP } from '../../../shared/kube/optimistic.ts';
import { kubeadmBootstrap } from './capi-bootstrap.ts';
import type { CapiContext } from './capi-context.ts';
import { bootstrapSecret, MACHINE_FINALIZER, ownerRefTo } from './capi-objects.ts';

type MachineSpec = {
  clusterName?: string;
  bootstrap?: { dataSecretName?: string; configRef?: { kind?: string; name?: string } };
  infrastructureRef?: { kind?: string; name?: string };
  providerID?: string;
};

export async function handleMachine(ctx: CapiContext, ns: string, name: string): Promise<void> {
  const { client } = ctx;
  let machine = await client.get(R.Machine, ns, name);
  if (!machine) return;
  machine.apiVersion ??= `${R.Machine.group}/${R.Machine.version}`;
  machine.kind ??= 'Machine';
  const spec = (machine.spec ?? {}) as MachineSpec;
  const infraName =
    spec.infrastructureRef?.kind === 'Metal3Machine' ? spec.infrastructureRef.name : undefined;
  const clusterName = spec.clusterName ?? machine.metadata.labels?.[CLUSTER_NAME_LABEL] ?? '';

  if (machine.metadata.deletionTimestamp) {
    const m3m = infraName ? await client.get(R.Metal3Machine, ns, infraName) : undefined;
    if (m3m) {
      if (!m3m.metadata.deletionTimestamp) await client.delete(R.Metal3Machine, ns, infraName!);
      return; // the Metal3Machine's deletion event brings us back
    }
    await optimisticUpdate(client, R.Machine, ns, name, (o) => {
      if (!o.metadata.finalizers?.includes(MACHINE_FINALIZER)) return SKIP;
      o.metadata.finalizers = o.metadata.finalizers.filter((f) => f !== MACHINE_FINALIZER);
    });
    return;
  }

  // Bootstrap data: the bootstrap provider's Secret, then dataSecretName and the finalizer.
  let dataSecretName = spec.bootstrap?.dataSecretName;
  const configRef = spec.bootstrap?.configRef;
  if (!dataSecretName && configRef?.name) {
    if (configRef.kind === 'KubeadmConfig')
      dataSecretName = await kubeadmBootstrap(ctx, machine, configRef.name, clusterName);
    else
      ctx.log?.warn('capi sim: no simulated bootstrap provider', {
        machine: `${ns}/${name}`,
        kind: configRef.kind,
      });
  } else if (!dataSecretName) {
    try {
      await client.create(R.Secret, bootstrapSecret(machine, clusterName));
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
    dataSecretName = `${name}-bootstrap`;
  }
  const upd = await optimisticUpdate(
    client,
    R.Machine,
    ns,
    name,
    (o) => {
      const s = (o.spec ?? {}) as MachineSpec;
      const f = o.metadata.finalizers ?? [];
      const labels = o.metadata.labels ?? {};
      const wantData = dataSecretName && !s.bootstrap?.dataSecretName;
      // Cluster API's defaulting: a Machine carries its cluster's name as a label (and passes it
      // on to its Metal3Machine below), which is how the Cluster's watchers find it.
      const wantLabel = clusterName && labels[CLUSTER_NAME_LABEL] !== clusterName;
      if (!wantData && !wantLabel && f.includes(MACHINE_FINALIZER)) return SKIP;
      if (wantData) s.bootstrap = { ...(s.bootstrap ?? {}), dataSecretName };
      o.spec = s;
      if (wantLabel) o.metadata.labels = { ...labels, [CLUSTER_NAME_LABEL]: clusterName };
      if (!f.includes(MACHINE_FINALIZER)) o.metadata.finalizers = [...f, MACHINE_FINALIZER];
    },
    { current: machine },
  );
  if (upd.outcome === 'gone') return;
  machine = upd.object;
  const bootstrapReady = Boolean((machine.spec as MachineSpec).bootstrap?.dataSecretName);

  // The infrastructure machine: ownerRef to the Machine, the Machine's labels.
  if (!infraName) return;
  let m3m = await client.get(R.Metal3Machine, ns, infraName);
  if (m3m && !m3m.metadata.deletionTimestamp) {
    const res = await optimisticUpdate(
      client,
      R.Metal3Machine,
      ns,
      infraName,
      (o) => {
        const owners = o.metadata.ownerReferences ?? [];
        const labels = o.metadata.labels ?? {};
        const want = machine!.metadata.labels ?? {};
        const hasOwner = owners.some((x) => x.kind === 'Machine' && x.uid === machine!.metadata.uid);
        const hasLabels = Object.entries(want).every(([k, v]) => labels[k] === v);
        if (hasOwner && hasLabels) return SKIP;
        if (!hasOwner)
          o.metadata.ownerReferences = [...owners.filter((x) => x.kind !== 'Machine'), ownerRefTo(machine!)];
        o.metadata.labels = { ...labels, ...want };
      },
      { current: m3m },
    );
    if (res.outcome !== 'gone') m3m = res.object;
  }

  // Infrastructure ready => providerID, addresses; a Node with that providerID => nodeRef, Running.
  const m3mSpec = (m3m?.spec ?? {}) as { providerID?: string };
  const m3mStatus = (m3m?.status ?? {}) as { ready?: boolean; addresses?: unknown[] };
  const infraReady = Boolean(m3mSpec.providerID && m3mStatus.ready);
  if (infraReady) {
    const r = await optimisticUpdate(
      client,
      R.Machine,
      ns,
      name,
      (o) => {
        const s = (o.spec ?? {}) as MachineSpec;
        if (s.providerID === m3mSpec.providerID) return SKIP;
        s.providerID = m3mSpec.providerID;
        o.spec = s;
      },
      { current: machine },
    );
    if (r.outcome !== 'gone') machine = r.object;
  }
  const providerID = (machine.spec as MachineSpec).providerID;
  let nodeRef: { apiVersion: string; kind: string; name: string; uid: string } | undefined;
  if (infraReady && providerID && clusterName) {
    try {
      let node: { name: string; uid: string } | undefined | 'unknown' = ctx.nodeByProviderID
        ? ctx.nodeByProviderID(ns, clusterName, providerID)
        : 'unknown';
      if (node === 'unknown') {
        const wc = await ctx.workloadClient(ns, clusterName);
        const found = (await wc.list(R.Node)).items.find(
          (n) => (n.spec as { providerID?: string } | undefined)?.providerID === providerID,
        );
        node = found ? { name: found.metadata.name!, uid: found.metadata.uid! } : undefined;
      }
      if (node) nodeRef = { apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid };
    } catch {
      // No workload cluster yet: the Node watch (or a later event) brings us back.
    }
  }
  await optimisticUpdate(
    client,
    R.Machine,
    ns,
    name,
    (o) => {
      o.status ??= {};
      const st = o.status as Record<string, unknown>;
      st.bootstrapReady = bootstrapReady;
      st.infrastructureReady = infraReady;
      if (infraReady && m3mStatus.addresses) st.addresses = m3mStatus.addresses;
      if (nodeRef) st.nodeRef = nodeRef;
      st.phase = st.nodeRef
        ? 'Running'
        : infraReady
          ? 'Provisioned'
          : bootstrapReady
            ? 'Provisioning'
            : 'Pending';
    },
    { status: true, current: machine },
  );
}
