/**
 * The machine's metaData / networkData (seed 001's hybrid rules): a spec.metaData / spec.networkData
 * secret overrides the template's for that part; with spec.dataTemplate a Metal3DataClaim named
 * after the machine is created and its rendered Metal3Data supplies the rest. Waits are
 * event-driven: the claim's, the Metal3Data's or the Secret's event wakes the machine again.
 */

import type { Metal3DataClaim } from '../../shared/api/metal3data.ts';
import type { Metal3Machine } from '../../shared/api/metal3machine.ts';
import type { SecretReference } from '../../shared/api/refs.ts';
import { apiVersionOf, K, R } from '../../shared/api/resources.ts';
import { FINALIZER } from '../../shared/api/wellknown.ts';
import { REASON } from '../../shared/capi/conditions.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { isAlreadyExists } from '../../shared/kube/errors.ts';

export type DataOutcome =
  | {
      kind: 'ready';
      metaData?: SecretReference | undefined;
      networkData?: SecretReference | undefined;
      renderedData?: { name: string; namespace: string } | undefined;
    }
  | { kind: 'wait'; reason: string; message: string; severity: 'Info' | 'Warning' | 'Error' };

/** Whether the template is needed at all: only when the user did not give both secrets. */
export const needsDataTemplate = (m3m: Metal3Machine): boolean =>
  Boolean(m3m.spec.dataTemplate?.name) && !(m3m.spec.metaData?.name && m3m.spec.networkData?.name);

const withNs = (ref: SecretReference | undefined, ns: string): SecretReference | undefined =>
  ref?.name ? { name: ref.name, namespace: ref.namespace || ns } : undefined;

/** The claim this machine creates (controller ownerRef to it, its labels, its and allocateIndex's finalizers). */
export function desiredDataClaim(m3m: Metal3Machine): Metal3DataClaim {
  const ns = m3m.metadata.namespace!;
  return {
    apiVersion: apiVersionOf(R.Metal3DataClaim),
    kind: 'Metal3DataClaim',
    metadata: {
      name: m3m.metadata.name!,
      namespace: ns,
      labels: { ...(m3m.metadata.labels ?? {}) },
      // allocateIndex's finalizer too: it would add it as its first write (one write fewer per machine).
      finalizers: [FINALIZER.machine, FINALIZER.dataClaim],
      ownerReferences: [
        {
          apiVersion: apiVersionOf(R.Metal3Machine),
          kind: 'Metal3Machine',
          name: m3m.metadata.name!,
          uid: m3m.metadata.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      template: { name: m3m.spec.dataTemplate!.name, namespace: m3m.spec.dataTemplate!.namespace || ns },
    },
  };
}

export async function resolveData(client: KubeClient, m3m: Metal3Machine): Promise<DataOutcome> {
  const ns = m3m.metadata.namespace!;
  const userMeta = withNs(m3m.spec.metaData, ns);
  const userNet = withNs(m3m.spec.networkData, ns);
  let metaData = userMeta;
  let networkData = userNet;
  let renderedData: { name: string; namespace: string } | undefined;

  if (needsDataTemplate(m3m)) {
    let claim = await client.get(R.Metal3DataClaim, ns, m3m.metadata.name!);
    if (!claim) {
      try {
        claim = await client.create(R.Metal3DataClaim, desiredDataClaim(m3m));
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
        claim = await client.get(R.Metal3DataClaim, ns, m3m.metadata.name!);
      }
    }
    if (!claim)
      return wait(
        REASON.WaitingForMetal3Data,
        `Metal3DataClaim ${ns}/${m3m.metadata.name} not found after create`,
      );
    const owner = claim.metadata.ownerReferences?.find((o) => o.kind === 'Metal3Machine' && o.controller);
    if (claim.metadata.deletionTimestamp || (owner && owner.uid !== m3m.metadata.uid)) {
      return wait(
        REASON.WaitingForMetal3Data,
        `Metal3DataClaim ${ns}/${claim.metadata.name} belongs to an earlier Metal3Machine and is being released`,
      );
    }
    const cs = claim.status ?? {};
    if (cs.errorMessage)
      return wait(
        REASON.Metal3DataFailed,
        `Metal3DataClaim ${ns}/${claim.metadata.name}: ${cs.errorMessage}`,
        'Error',
      );
    // One message for the whole wait (allocation, then rendering): the condition is written once
    // when the wait starts, not again at each step of the data pipeline.
    const waitingForData = `waiting for the Metal3Data of Metal3DataClaim ${ns}/${claim.metadata.name} to be allocated and rendered`;
    if (!cs.renderedData?.name) {
      // A template that does not exist yet is a wait (CAPM3 makes the claim and waits too): its
      // creation wakes the claim (allocateIndex), whose renderedData wakes this machine. Only its
      // existence matters here: a Table row is read, not the object (its status has an entry per machine).
      const t = m3m.spec.dataTemplate!;
      const tns = t.namespace || ns;
      if (!(await client.exists(K.Metal3DataTemplate, tns, t.name))) {
        return wait(
          REASON.WaitingForMetal3DataTemplate,
          `waiting for Metal3DataTemplate ${tns}/${t.name} (spec.dataTemplate) to exist`,
        );
      }
      return wait(REASON.WaitingForMetal3Data, waitingForData);
    }
    renderedData = { name: cs.renderedData.name, namespace: cs.renderedData.namespace || ns };
    const data = await client.get(R.Metal3Data, renderedData.namespace, renderedData.name);
    if (!data) return wait(REASON.WaitingForMetal3Data, waitingForData);
    const ds = data.status ?? {};
    if (ds.errorMessage)
      return wait(
        REASON.Metal3DataFailed,
        `Metal3Data ${renderedData.namespace}/${renderedData.name}: ${ds.errorMessage}`,
        'Error',
      );
    if (ds.ready !== true) return wait(REASON.WaitingForMetal3Data, waitingForData);
    const dspec = data.spec;
    metaData = userMeta ?? withNs(dspec.metaData, renderedData.namespace);
    networkData = userNet ?? withNs(dspec.networkData, renderedData.namespace);
  }

  // The user's own secrets must exist before the host is given them (seed 001).
  for (const [part, ref] of [
    ['metaData', userMeta],
    ['networkData', userNet],
  ] as const) {
    if (ref && !(await client.get(R.Secret, ref.namespace, ref.name))) {
      return wait(
        REASON.WaitingForSecrets,
        `waiting for the ${part} Secret ${ref.namespace}/${ref.name} (spec.${part})`,
      );
    }
  }
  return { kind: 'ready', metaData, networkData, renderedData };
}

const wait = (
  reason: string,
  message: string,
  severity: 'Info' | 'Warning' | 'Error' = 'Info',
): DataOutcome => ({
  kind: 'wait',
  reason,
  message,
  severity,
});
