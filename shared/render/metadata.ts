/**
 * metaData: a flat string map (capm3-spec §6), filled in the reference order, later entries
 * overwriting earlier ones with the same key, `providerid` last. Every value is a string.
 */
import type { FromPool } from '../api/index.ts';
import type { AllocatedAddress } from '../ipam/allocate.ts';
import { RenderError } from './errors.ts';
import type { RenderInputs, TemplateSpec } from './inputs.ts';
import { annotationOf, hostNicMac, labelOf, objectMeta } from './objects.ts';
import { poolAddress } from './pools.ts';

export type MetaData = Record<string, string>;

/** `prefix + (offset + index*step) + suffix`; step 0 means 1; negative offset/step are errors. */
function renderIndex(
  entry: { offset?: number; step?: number; prefix?: string; suffix?: string },
  index: number,
  field: string,
): string {
  const offset = entry.offset ?? 0;
  const step = entry.step ? entry.step : 1;
  if (!Number.isInteger(offset) || offset < 0) {
    throw new RenderError(`${field}.offset`, `offset must be an integer >= 0, got ${String(entry.offset)}`);
  }
  if (!Number.isInteger(step) || step < 0) {
    throw new RenderError(
      `${field}.step`,
      `step must be an integer >= 1 (0 means 1), got ${String(entry.step)}`,
    );
  }
  return `${entry.prefix ?? ''}${offset + index * step}${entry.suffix ?? ''}`;
}

function fromPools(
  out: Map<string, string>,
  entries: FromPool[] | undefined,
  list: string,
  inputs: RenderInputs,
  value: (address: AllocatedAddress) => string,
): void {
  (entries ?? []).forEach((entry, i) => {
    const field = `spec.metaData.${list}[${i}]`;
    out.set(entry.key, value(poolAddress(inputs, entry.name, `${field}.name`)));
  });
}

/**
 * Renders the metaData map. The order is the reference's: fromHostInterfaces, IP addresses,
 * prefixes, gateways, (DNS servers), indexes, namespaces, objectNames, fromLabels,
 * fromAnnotations, strings, and always `providerid` = `<m3mNs>/<bmhName>/<m3mName>` last (it
 * overrides a user key of that name). Rendered even without a metaData template, because the
 * providerid key is what kubelet's --provider-id is built from.
 *
 * dnsServersFromIPPool: seed 001 documents it as "renders a dns servers list" while the
 * reference claims the pool and renders nothing. metaData values are strings, so we render the
 * pool's DNS servers comma-separated (`8.8.8.8,8.8.4.4`; "" when the pool has none), right after
 * the gateways.
 */
export function renderMetaData(template: TemplateSpec, inputs: RenderInputs): MetaData {
  const meta = template.metaData;
  const out = new Map<string, string>();

  (meta?.fromHostInterfaces ?? []).forEach((entry, i) => {
    const field = `spec.metaData.fromHostInterfaces[${i}]`;
    if (entry.fromBootMAC) {
      const mac = inputs.bmh.spec?.bootMACAddress ?? '';
      if (mac === '') {
        throw new RenderError(
          `${field}.fromBootMAC`,
          `the BareMetalHost ${inputs.bmh.metadata.name ?? ''} has no spec.bootMACAddress`,
        );
      }
      out.set(entry.key, mac);
    } else {
      out.set(entry.key, hostNicMac(inputs, entry.interface ?? '', `${field}.interface`));
    }
  });

  fromPools(out, meta?.ipAddressesFromIPPool, 'ipAddressesFromIPPool', inputs, (a) => a.address);
  fromPools(out, meta?.prefixesFromIPPool, 'prefixesFromIPPool', inputs, (a) => String(a.prefix));
  fromPools(out, meta?.gatewaysFromIPPool, 'gatewaysFromIPPool', inputs, (a) => a.gateway ?? '');
  fromPools(out, meta?.dnsServersFromIPPool, 'dnsServersFromIPPool', inputs, (a) => a.dnsServers.join(','));

  (meta?.indexes ?? []).forEach((entry, i) => {
    out.set(entry.key, renderIndex(entry, inputs.index, `spec.metaData.indexes[${i}]`));
  });
  (meta?.namespaces ?? []).forEach((entry) => {
    out.set(entry.key, inputs.namespace);
  });
  (meta?.objectNames ?? []).forEach((entry, i) => {
    out.set(entry.key, objectMeta(inputs, entry.object, `spec.metaData.objectNames[${i}].object`).name ?? '');
  });
  (meta?.fromLabels ?? []).forEach((entry, i) => {
    out.set(entry.key, labelOf(inputs, entry, `spec.metaData.fromLabels[${i}]`));
  });
  (meta?.fromAnnotations ?? []).forEach((entry, i) => {
    out.set(entry.key, annotationOf(inputs, entry, `spec.metaData.fromAnnotations[${i}]`));
  });
  (meta?.strings ?? []).forEach((entry) => {
    out.set(entry.key, String(entry.value ?? ''));
  });

  out.set('providerid', providerIdPath(inputs));
  // Object.fromEntries defines own properties, so a key like "__proto__" stays a plain key.
  return Object.fromEntries(out);
}

/** `<m3mNs>/<bmhName>/<m3mName>`: the providerID without its `metal3://` scheme. */
export function providerIdPath(inputs: RenderInputs): string {
  const m3m = inputs.metal3Machine.metadata;
  return `${m3m.namespace ?? inputs.namespace}/${inputs.bmh.metadata.name ?? ''}/${m3m.name ?? ''}`;
}
