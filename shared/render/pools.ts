/**
 * Which pools a template needs (capm3-spec §6 "Pools"): one address claim per pool NAME per
 * Metal3Data, so references are deduplicated by name; the same name with another apiGroup/kind
 * is a template error (it would need two claims with one name).
 */
import type { FromAnnotation, PoolReference, RouteGateway, StaticNetwork } from '../api/index.ts';
import { IPAM_GROUP } from '../api/resources.ts';
import type { AllocatedAddress } from '../ipam/allocate.ts';
import { RenderError } from './errors.ts';
import type { RenderInputs, RenderObjects, TemplateSpec } from './inputs.ts';
import { annotationOf } from './objects.ts';

export const METAL3_POOL_KIND = 'IPPool';

export interface PoolRef {
  name: string;
  /** `ipam.metal3.io` for a Metal3 IPPool (claimed with an IPClaim); else a CAPI IPAM provider. */
  apiGroup: string;
  kind: string;
}

export function isMetal3Pool(ref: PoolRef): boolean {
  return ref.apiGroup === IPAM_GROUP && ref.kind === METAL3_POOL_KIND;
}

function metal3Pool(name: string): PoolRef {
  return { name, apiGroup: IPAM_GROUP, kind: METAL3_POOL_KIND };
}

function fromReference(ref: PoolReference): PoolRef {
  return { name: ref.name, apiGroup: ref.apiGroup || IPAM_GROUP, kind: ref.kind || METAL3_POOL_KIND };
}

/** The pool an annotation names (its value is the pool name; empty is an error). */
function fromAnnotation(objects: RenderObjects, source: FromAnnotation, field: string): PoolRef {
  const name = annotationOf(objects, source, field);
  if (name === '') {
    throw new RenderError(
      field,
      `annotation ${JSON.stringify(source.annotation)} of the ${source.object} is missing or empty; it must name the IP pool`,
    );
  }
  return metal3Pool(name);
}

/** The pool of a static network: fromPoolAnnotation > fromPoolRef > ipAddressFromIPPool. */
export function staticNetworkPool(
  network: StaticNetwork,
  objects: RenderObjects,
  field: string,
): PoolRef | undefined {
  if (network.fromPoolAnnotation) {
    return fromAnnotation(objects, network.fromPoolAnnotation, `${field}.fromPoolAnnotation`);
  }
  if (network.fromPoolRef?.name) return fromReference(network.fromPoolRef);
  if (network.ipAddressFromIPPool) return metal3Pool(network.ipAddressFromIPPool);
  return undefined;
}

/**
 * The pool a route gateway is taken from: fromPoolAnnotation > fromPoolRef > fromIPPool. The
 * pool is claimed even when a `string` gateway wins at render time, as the reference does.
 * (The reference ignores fromPoolAnnotation on DHCP/SLAAC routes when claiming, then fails to
 * render them; we use one precedence for every route.)
 */
export function routeGatewayPool(
  gateway: RouteGateway | undefined,
  objects: RenderObjects,
  field: string,
): PoolRef | undefined {
  if (!gateway) return undefined;
  if (gateway.fromPoolAnnotation) {
    return fromAnnotation(objects, gateway.fromPoolAnnotation, `${field}.fromPoolAnnotation`);
  }
  if (gateway.fromPoolRef?.name) return fromReference(gateway.fromPoolRef);
  if (gateway.fromIPPool) return metal3Pool(gateway.fromIPPool);
  return undefined;
}

/** The address claimed from a pool, or a RenderError naming the entry that needs it. */
export function poolAddress(inputs: RenderInputs, name: string | undefined, field: string): AllocatedAddress {
  const address = name ? inputs.addresses[name] : undefined;
  if (!address) {
    throw new RenderError(
      field,
      `no address from pool ${JSON.stringify(name ?? '')} (pool not found in the claimed addresses)`,
    );
  }
  return address;
}

class PoolSet {
  readonly #byName = new Map<string, { ref: PoolRef; field: string }>();
  add(ref: PoolRef | undefined, field: string): void {
    if (!ref || ref.name === '') return;
    const seen = this.#byName.get(ref.name);
    if (!seen) {
      this.#byName.set(ref.name, { ref, field });
      return;
    }
    if (seen.ref.apiGroup !== ref.apiGroup || seen.ref.kind !== ref.kind) {
      throw new RenderError(
        field,
        `pool ${JSON.stringify(ref.name)} is referenced as ${ref.kind}.${ref.apiGroup} here but as ` +
          `${seen.ref.kind}.${seen.ref.apiGroup} at ${seen.field}; one name can only be one pool`,
      );
    }
  }
  list(): PoolRef[] {
    return [...this.#byName.values()].map((v) => v.ref);
  }
}

const METADATA_POOL_LISTS = [
  'ipAddressesFromIPPool',
  'prefixesFromIPPool',
  'gatewaysFromIPPool',
  'dnsServersFromIPPool',
] as const;

const STATIC_NETWORKS = ['ipv4', 'ipv6'] as const;
const DYNAMIC_NETWORKS = ['ipv4DHCP', 'ipv6DHCP', 'ipv6SLAAC'] as const;

/**
 * Every pool the template needs, deduplicated by name, in order of first reference: metaData
 * (addresses, prefixes, gateways, DNS), then networks ipv4, ipv6, ipv4DHCP, ipv6DHCP, ipv6SLAAC
 * (address pool, then each route's gateway and DNS pools), then the top-level DNS pool.
 * metaData pool entries always mean Metal3 IPPools (their apiGroup/kind are ignored, as in the
 * reference since v1.13).
 */
export function referencedPools(template: TemplateSpec, objects: RenderObjects): PoolRef[] {
  const pools = new PoolSet();
  const metaData = template.metaData;
  for (const list of METADATA_POOL_LISTS) {
    (metaData?.[list] ?? []).forEach((entry, i) => {
      pools.add(metal3Pool(entry.name), `spec.metaData.${list}[${i}].name`);
    });
  }
  const networkData = template.networkData;
  const networks = networkData?.networks;
  const addRoutes = (routes: StaticNetwork['routes'], field: string) => {
    (routes ?? []).forEach((route, r) => {
      const routeField = `${field}.routes[${r}]`;
      pools.add(routeGatewayPool(route.gateway, objects, `${routeField}.gateway`), `${routeField}.gateway`);
      const dnsPool = route.services?.dnsFromIPPool;
      if (dnsPool) pools.add(metal3Pool(dnsPool), `${routeField}.services.dnsFromIPPool`);
    });
  };
  for (const type of STATIC_NETWORKS) {
    (networks?.[type] ?? []).forEach((network, i) => {
      const field = `spec.networkData.networks.${type}[${i}]`;
      pools.add(staticNetworkPool(network, objects, field), field);
      addRoutes(network.routes, field);
    });
  }
  for (const type of DYNAMIC_NETWORKS) {
    (networks?.[type] ?? []).forEach((network, i) => {
      addRoutes(network.routes, `spec.networkData.networks.${type}[${i}]`);
    });
  }
  const dnsPool = networkData?.services?.dnsFromIPPool;
  if (dnsPool) pools.add(metal3Pool(dnsPool), 'spec.networkData.services.dnsFromIPPool');
  return pools.list();
}
