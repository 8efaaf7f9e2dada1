/**
 * Network data (issue 19, Behaviour 5), pure: the generated OpenStack network_data.json for a
 * claim's address, and the check that an override or a rendered template is network data at all.
 * The document has the shape shared/render/networkdata.ts renders for CAPM3, so both models'
 * Secrets are written by one serializer.
 */
import { parse, YAMLParseError } from 'yaml';
import { fieldOf, isRecord } from '../api/json.ts';
import { MAC_PATTERN } from '../api/net.ts';
import { prefixToNetmask, tryParseIp } from '../ipam/ip.ts';
import type { KubeObject } from '../kube/types.ts';
import type { NetworkData } from '../render/networkdata.ts';
import { VMetalInputError } from './errors.ts';
import type { AddressAssignment } from './network.ts';

/** The one link's id in generated network data (an identifier: cloud-init matches the NIC by MAC). */
export const GENERATED_LINK_ID = 'eth0';
export const GENERATED_NETWORK_ID = 'network0';
export const GENERATED_MTU = 1500;

const MAC = new RegExp(MAC_PATTERN);

/** The host's `spec.bootMACAddress`, the NIC generated network data configures. */
export function bootMacAddress(host: KubeObject): string {
  const mac = fieldOf(host.spec, 'bootMACAddress');
  if (typeof mac !== 'string' || !MAC.test(mac)) {
    throw new VMetalInputError(
      `BareMetalHost ${host.metadata.namespace ?? ''}/${host.metadata.name ?? ''} spec.bootMACAddress`,
      mac === undefined || mac === ''
        ? 'is not set (generated network data keys on it)'
        : `${JSON.stringify(mac)} is not a MAC address`,
    );
  }
  return mac.toLowerCase();
}

/**
 * network_data.json for one static address: a `phy` link with the boot MAC, the network on it
 * with a default route via the gateway (none without a gateway), the DNS servers as services.
 */
export function generatedNetworkData(mac: string, a: AddressAssignment): NetworkData {
  const ip = tryParseIp(a.address);
  if (!ip) throw new VMetalInputError('address', `${JSON.stringify(a.address)} is not an IP address`);
  const v4 = ip.family === 4;
  const any = v4 ? '0.0.0.0' : '::';
  return {
    links: [{ id: GENERATED_LINK_ID, type: 'phy', mtu: GENERATED_MTU, ethernet_mac_address: mac }],
    networks: [
      {
        id: GENERATED_NETWORK_ID,
        type: v4 ? 'ipv4' : 'ipv6',
        link: GENERATED_LINK_ID,
        ip_address: a.address,
        netmask: prefixToNetmask(a.prefix, ip.family),
        routes: a.gateway ? [{ network: any, netmask: any, gateway: a.gateway, services: [] }] : [],
      },
    ],
    services: a.dnsServers.map((address) => ({ type: 'dns' as const, address })),
  };
}

/**
 * Network data given as text (the `metal3.vcluster.com/network-data` override, or a rendered
 * template): JSON or YAML (JSON is YAML; read as YAML 1.1, as baremetal-operator's Go YAML reads
 * it), one document, a mapping. Anything else is bad input naming `field`.
 */
export function parseNetworkDataText(text: string, field: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parse(text, { version: '1.1', uniqueKeys: true });
  } catch (e) {
    if (e instanceof YAMLParseError) {
      throw new VMetalInputError(field, `is not JSON or YAML: ${e.message.split('\n')[0]}`);
    }
    throw e;
  }
  if (!isRecord(value)) {
    throw new VMetalInputError(
      field,
      'must be a JSON or YAML mapping (network_data.json: links, networks, services)',
    );
  }
  for (const key of ['links', 'networks', 'services']) {
    const v = value[key];
    if (v !== undefined && v !== null && !Array.isArray(v))
      throw new VMetalInputError(field, `${key} must be a list`);
  }
  return value;
}
