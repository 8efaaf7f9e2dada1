/**
 * networkData: the OpenStack network_data.json document (capm3-spec §6). Arrays keep the
 * reference order: links = bonds, ethernets, vlans; networks = ipv4, ipv6, ipv4DHCP, ipv6DHCP,
 * ipv6SLAAC; each in template order. mtu and vlan_id are numbers, everything else strings.
 */
import {
  type BondLink,
  DEFAULT_MTU,
  type DynamicNetwork,
  type EthernetLink,
  type MacAddressSource,
  type NetworkServices,
  type Route,
  type StaticNetwork,
  type VlanLink,
} from '../api/index.ts';
import { IpamError } from '../ipam/errors.ts';
import { type IpFamily, prefixToNetmask } from '../ipam/ip.ts';
import { RenderError } from './errors.ts';
import type { RenderInputs, TemplateSpec } from './inputs.ts';
import { annotationOf, hostNicMac } from './objects.ts';
import { poolAddress, routeGatewayPool, staticNetworkPool } from './pools.ts';

export interface DnsService {
  type: 'dns';
  address: string;
}

export interface BondLinkOut {
  type: 'bond';
  id: string;
  name?: string;
  mtu: number;
  bond_mode: string;
  bond_xmit_hash_policy: string;
  bond_links: string[];
  ethernet_mac_address?: string;
  /** `bond_<parameter>`: the bond's extra parameters, verbatim JSON values. */
  [parameter: `bond_${string}`]: unknown;
}
export interface EthernetLinkOut {
  type: string;
  id: string;
  name?: string;
  mtu: number;
  ethernet_mac_address?: string;
}
export interface VlanLinkOut {
  type: 'vlan';
  id: string;
  name?: string;
  mtu: number;
  vlan_link: string;
  vlan_id: number;
  vlan_mac_address?: string;
}
export type NetworkLink = BondLinkOut | EthernetLinkOut | VlanLinkOut;

export interface RouteOut {
  network: string;
  netmask: string;
  gateway: string;
  services: DnsService[];
}
export interface StaticNetworkOut {
  type: 'ipv4' | 'ipv6';
  id: string;
  link: string;
  ip_address: string;
  netmask: string;
  routes: RouteOut[];
}
export interface DynamicNetworkOut {
  type: 'ipv4_dhcp' | 'ipv6_dhcp' | 'ipv6_slaac';
  id: string;
  link: string;
  routes: RouteOut[];
}
export type NetworkOut = StaticNetworkOut | DynamicNetworkOut;

export interface NetworkData {
  links: NetworkLink[];
  networks: NetworkOut[];
  services: DnsService[];
}

const MAC_RE = /^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$/;

/** string > fromHostInterface > fromAnnotation, then validated as a MAC. */
function linkMac(source: MacAddressSource, inputs: RenderInputs, field: string): string {
  let mac: string;
  let from: string;
  if (source.string !== undefined && source.string !== null) {
    mac = source.string;
    from = `${field}.string`;
  } else if (source.fromHostInterface !== undefined && source.fromHostInterface !== null) {
    from = `${field}.fromHostInterface`;
    mac = hostNicMac(inputs, source.fromHostInterface, from);
  } else if (source.fromAnnotation) {
    from = `${field}.fromAnnotation`;
    mac = annotationOf(inputs, source.fromAnnotation, from);
  } else {
    throw new RenderError(field, 'no MAC address source: set string, fromHostInterface or fromAnnotation');
  }
  if (typeof mac !== 'string' || !MAC_RE.test(mac)) {
    throw new RenderError(
      from,
      `bad MAC address ${JSON.stringify(mac)} (expected six hex pairs separated by ":" or "-")`,
    );
  }
  return mac;
}

function requiredNumber(value: unknown, field: string, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new RenderError(
      field,
      `${what} is required and must be an integer, got ${JSON.stringify(value ?? null)}`,
    );
  }
  return value;
}

/** The link's interface name, only when set (as CAPM3 renders it: cloud-init renames by it). */
const named = (link: { name?: string | undefined }): { name?: string } =>
  link.name ? { name: link.name } : {};

function renderBond(link: BondLink, inputs: RenderInputs, field: string): BondLinkOut {
  const out: BondLinkOut = {
    type: 'bond',
    id: link.id,
    ...named(link),
    mtu: requiredNumber(link.mtu ?? DEFAULT_MTU, `${field}.mtu`, 'mtu'),
    bond_mode: link.bondMode,
    bond_xmit_hash_policy: link.bondXmitHashPolicy ?? '',
    bond_links: [...(link.bondLinks ?? [])],
  };
  if (link.macAddress) out.ethernet_mac_address = linkMac(link.macAddress, inputs, `${field}.macAddress`);
  const parameters = Object.entries(link.parameters ?? {});
  const illegal = parameters.filter(([name]) => Object.hasOwn(out, `bond_${name}`)).map(([name]) => name);
  if (illegal.length > 0) {
    throw new RenderError(
      `${field}.parameters.${illegal[0]}`,
      `illegal bond parameter(s) ${illegal.map((n) => JSON.stringify(n)).join(', ')}: ` +
        `bond_${illegal[0]} is set from the structured field; remove it from parameters`,
    );
  }
  for (const [name, value] of parameters) out[`bond_${name}`] = value;
  return out;
}

function renderEthernet(link: EthernetLink, inputs: RenderInputs, field: string): EthernetLinkOut {
  const out: EthernetLinkOut = {
    type: link.type,
    id: link.id,
    ...named(link),
    mtu: requiredNumber(link.mtu ?? DEFAULT_MTU, `${field}.mtu`, 'mtu'),
  };
  if (link.macAddress) out.ethernet_mac_address = linkMac(link.macAddress, inputs, `${field}.macAddress`);
  return out;
}

function renderVlan(link: VlanLink, inputs: RenderInputs, field: string): VlanLinkOut {
  const out: VlanLinkOut = {
    type: 'vlan',
    id: link.id,
    ...named(link),
    mtu: requiredNumber(link.mtu ?? DEFAULT_MTU, `${field}.mtu`, 'mtu'),
    vlan_link: link.vlanLink,
    vlan_id: requiredNumber(link.vlanID, `${field}.vlanID`, 'vlanID'),
  };
  if (link.macAddress) out.vlan_mac_address = linkMac(link.macAddress, inputs, `${field}.macAddress`);
  return out;
}

function netmask(prefix: number, family: IpFamily, field: string): string {
  try {
    return prefixToNetmask(prefix, family);
  } catch (e) {
    if (e instanceof IpamError) throw new RenderError(field, e.message);
    throw e;
  }
}

function dnsServices(
  services: NetworkServices | undefined,
  inputs: RenderInputs,
  field: string,
): DnsService[] {
  const out: DnsService[] = (services?.dns ?? []).map((address) => ({ type: 'dns', address }));
  if (services?.dnsFromIPPool) {
    const pool = poolAddress(inputs, services.dnsFromIPPool, `${field}.dnsFromIPPool`);
    for (const address of pool.dnsServers) out.push({ type: 'dns', address });
  }
  return out;
}

/**
 * A route. The mask family is the enclosing network's (ipv4* -> IPv4, ipv6* -> IPv6), as the
 * reference does; the prefix length is `prefix`, else `netmask` (seed 001's name), else 0.
 */
function renderRoute(route: Route, family: IpFamily, inputs: RenderInputs, field: string): RouteOut {
  const prefix = route.prefix ?? route.netmask ?? 0;
  const prefixField =
    route.prefix !== undefined && route.prefix !== null ? `${field}.prefix` : `${field}.netmask`;
  let gateway = '';
  const gw = route.gateway;
  if (gw?.string !== undefined && gw.string !== null) {
    gateway = gw.string;
  } else {
    const pool = routeGatewayPool(gw, inputs, `${field}.gateway`);
    if (pool) gateway = poolAddress(inputs, pool.name, `${field}.gateway`).gateway ?? '';
  }
  return {
    network: route.network,
    netmask: netmask(prefix, family, prefixField),
    gateway,
    services: dnsServices(route.services, inputs, `${field}.services`),
  };
}

function renderRoutes(routes: Route[] | undefined, family: IpFamily, inputs: RenderInputs, field: string) {
  return (routes ?? []).map((route, i) => renderRoute(route, family, inputs, `${field}.routes[${i}]`));
}

function renderStatic(
  network: StaticNetwork,
  type: 'ipv4' | 'ipv6',
  inputs: RenderInputs,
  field: string,
): StaticNetworkOut {
  const family: IpFamily = type === 'ipv4' ? 4 : 6;
  const ref = staticNetworkPool(network, inputs, field);
  if (!ref) {
    throw new RenderError(
      `${field}.ipAddressFromIPPool`,
      'a static network needs its address pool: set ipAddressFromIPPool, fromPoolRef or fromPoolAnnotation',
    );
  }
  const address = poolAddress(inputs, ref.name, `${field}.ipAddressFromIPPool`);
  return {
    type,
    id: network.id,
    link: network.link,
    ip_address: address.address,
    netmask: netmask(address.prefix, family, `${field}.ipAddressFromIPPool`),
    routes: renderRoutes(network.routes, family, inputs, field),
  };
}

const DYNAMIC = [
  ['ipv4DHCP', 'ipv4_dhcp', 4],
  ['ipv6DHCP', 'ipv6_dhcp', 6],
  ['ipv6SLAAC', 'ipv6_slaac', 6],
] as const;

function renderDynamic(
  network: DynamicNetwork,
  type: DynamicNetworkOut['type'],
  family: IpFamily,
  inputs: RenderInputs,
  field: string,
): DynamicNetworkOut {
  return {
    type,
    id: network.id,
    link: network.link,
    routes: renderRoutes(network.routes, family, inputs, field),
  };
}

/** Renders the whole document; all three keys are always present (`[]` when empty). */
export function renderNetworkData(template: TemplateSpec, inputs: RenderInputs): NetworkData {
  const nd = template.networkData;
  const links: NetworkLink[] = [];
  (nd?.links?.bonds ?? []).forEach((link, i) => {
    links.push(renderBond(link, inputs, `spec.networkData.links.bonds[${i}]`));
  });
  (nd?.links?.ethernets ?? []).forEach((link, i) => {
    links.push(renderEthernet(link, inputs, `spec.networkData.links.ethernets[${i}]`));
  });
  (nd?.links?.vlans ?? []).forEach((link, i) => {
    links.push(renderVlan(link, inputs, `spec.networkData.links.vlans[${i}]`));
  });

  const networks: NetworkOut[] = [];
  for (const type of ['ipv4', 'ipv6'] as const) {
    (nd?.networks?.[type] ?? []).forEach((network, i) => {
      networks.push(renderStatic(network, type, inputs, `spec.networkData.networks.${type}[${i}]`));
    });
  }
  for (const [key, type, family] of DYNAMIC) {
    (nd?.networks?.[key] ?? []).forEach((network, i) => {
      networks.push(renderDynamic(network, type, family, inputs, `spec.networkData.networks.${key}[${i}]`));
    });
  }

  return { links, networks, services: dnsServices(nd?.services, inputs, 'spec.networkData.services') };
}
