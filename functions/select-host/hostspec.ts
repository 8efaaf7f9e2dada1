/**
 * Pure decisions about a host's spec and a machine's addresses (spec §4 step 10, §5 setHostSpec).
 */

import type { BareMetalHost, BareMetalHostImage, BareMetalHostSpec } from '../../shared/api/baremetalhost.ts';
import type { MachineAddress, Metal3Machine } from '../../shared/api/metal3machine.ts';
import type { SecretReference } from '../../shared/api/refs.ts';

export interface DataRefs {
  userData: SecretReference;
  metaData?: SecretReference | undefined;
  networkData?: SecretReference | undefined;
}

const hasImage = (spec: BareMetalHostSpec | undefined): boolean =>
  Boolean(spec?.image?.url || spec?.customDeploy?.method);

/**
 * Sets image (or customDeploy), userData, metaData, networkData on a host that has no image yet, in
 * place. An existing image is never changed (nor the data it was provisioned with). A ref that is
 * unset stays unset. On every pass, as CAPM3's setHostSpec: online=true, and automatedCleaningMode
 * when the machine sets it (administrators power a held host off with baremetal-operator's
 * `reboot.metal3.io/poweroff` annotation, which we never touch).
 */
export function applyHostSpec(host: BareMetalHost, m3m: Metal3Machine, refs: DataRefs): void {
  host.spec ??= {};
  const spec = host.spec;
  if (!hasImage(spec)) {
    const img = m3m.spec.image;
    if (m3m.spec.customDeploy?.method) {
      spec.customDeploy = { method: m3m.spec.customDeploy.method };
      if (img?.url) spec.image = imageOf(img);
    } else if (img?.url) {
      spec.image = imageOf(img);
    }
    spec.userData = { ...refs.userData };
    if (refs.metaData) spec.metaData = { ...refs.metaData };
    if (refs.networkData) spec.networkData = { ...refs.networkData };
  }
  spec.online = true;
  if (m3m.spec.automatedCleaningMode) spec.automatedCleaningMode = m3m.spec.automatedCleaningMode;
}

function imageOf(img: NonNullable<Metal3Machine['spec']['image']>): BareMetalHostImage {
  return {
    url: img.url,
    checksum: img.checksum ?? '',
    ...(img.checksumType ? { checksumType: img.checksumType } : {}),
    ...(img.format ? { format: img.format } : {}),
  };
}

/** InternalIP per NIC with an IP, then Hostname and InternalDNS from the hardware hostname. */
export function hostAddresses(host: BareMetalHost): MachineAddress[] {
  const hw = host.status?.hardware;
  const out: MachineAddress[] = [];
  for (const nic of hw?.nics ?? []) if (nic?.ip) out.push({ type: 'InternalIP', address: nic.ip });
  if (hw?.hostname) {
    out.push({ type: 'Hostname', address: hw.hostname });
    out.push({ type: 'InternalDNS', address: hw.hostname });
  }
  return out;
}

/**
 * Why the machine's references are bad input, or undefined: secret refs and the data template
 * must be in the machine's namespace (baremetal-operator reads secrets from the host namespace).
 */
export function crossNamespaceProblem(m3m: Metal3Machine): string | undefined {
  const ns = m3m.metadata.namespace ?? '';
  for (const field of ['userData', 'metaData', 'networkData', 'dataTemplate'] as const) {
    const ref = m3m.spec[field];
    if (ref?.namespace && ref.namespace !== ns) {
      return `spec.${field}.namespace "${ref.namespace}" differs from the Metal3Machine namespace "${ns}": references must stay in the machine's namespace`;
    }
  }
  return undefined;
}
