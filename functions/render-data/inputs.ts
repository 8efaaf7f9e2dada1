/**
 * The objects a Metal3Data renders from: claim -> Metal3Machine (the claim's controller owner) ->
 * its Machine (owner of kind Machine) -> the BareMetalHost named by the machine's
 * `metal3.io/BareMetalHost` annotation. Missing links that other steps will create are waits
 * (the object's event wakes us); a claim without a Metal3Machine owner is bad input.
 */

import { ownerOfKind } from '../../shared/allocation/objects.ts';
import type { Metal3Data, Metal3DataClaim } from '../../shared/api/index.ts';
import { CAPI_GROUP, INFRA_GROUP, R } from '../../shared/api/resources.ts';
import { hostRefOf } from '../../shared/api/wellknown.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { TerminalError } from '../../shared/reconcile/errors.ts';
import type { RenderObjects } from '../../shared/render/index.ts';

export type GatherResult =
  | { kind: 'ready'; objects: RenderObjects; claim: Metal3DataClaim }
  | { kind: 'wait'; reason: string };

export async function gatherObjects(client: KubeClient, data: Metal3Data): Promise<GatherResult> {
  const ns = data.metadata.namespace!;
  const claimKey = { ns: data.spec.claim.namespace || ns, name: data.spec.claim.name };
  const claim = await client.get(R.Metal3DataClaim, claimKey.ns, claimKey.name);
  if (!claim) return { kind: 'wait', reason: `Metal3DataClaim ${claimKey.ns}/${claimKey.name} not found` };
  const m3mRef = ownerOfKind(claim, 'Metal3Machine', INFRA_GROUP);
  if (!m3mRef) {
    throw new TerminalError(
      'InvalidConfiguration',
      `Metal3DataClaim ${claimKey.ns}/${claimKey.name} has no Metal3Machine owner reference`,
    );
  }
  const m3m = await client.get(R.Metal3Machine, claim.metadata.namespace, m3mRef.name);
  if (!m3m) return { kind: 'wait', reason: `Metal3Machine ${claimKey.ns}/${m3mRef.name} not found` };
  const machineRef = ownerOfKind(m3m, 'Machine', CAPI_GROUP);
  if (!machineRef) return { kind: 'wait', reason: `Metal3Machine ${m3mRef.name} has no Machine owner yet` };
  const machine = await client.get(R.Machine, m3m.metadata.namespace, machineRef.name);
  if (!machine) return { kind: 'wait', reason: `Machine ${machineRef.name} not found` };
  const hostRef = hostRefOf(m3m);
  if (hostRef.kind === 'absent')
    return { kind: 'wait', reason: `Metal3Machine ${m3mRef.name} is not associated with a host yet` };
  if (hostRef.kind === 'invalid') throw new TerminalError('InvalidConfiguration', hostRef.message);
  const hostKey = hostRef.host;
  const bmh = await client.get(R.BareMetalHost, hostKey.namespace, hostKey.name);
  if (!bmh) return { kind: 'wait', reason: `BareMetalHost ${hostKey.namespace}/${hostKey.name} not found` };
  return {
    kind: 'ready',
    claim,
    objects: { machine, metal3Machine: m3m, bmh },
  };
}
