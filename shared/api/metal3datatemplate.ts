import { z } from 'zod';
import { ObjectMetaSchema, StringMapSchema, TimestampSchema, withDefault } from './meta.ts';
import { IPAddressStringSchema, MacAddressSchema } from './net.ts';
import { parseObject } from './parse.ts';

/** Objects a template entry may read a name, label or annotation from. */
export const TemplateObjectKindSchema = z.lazy(() => z.enum(['machine', 'metal3machine', 'baremetalhost']));
export type TemplateObjectKind = z.infer<typeof TemplateObjectKindSchema>;

const Key = z.lazy(() => z.string().min(1, 'key must not be empty'));

// ---- metaData -------------------------------------------------------------------------------

export const MetaDataStringSchema = z.lazy(() => z.looseObject({ key: Key, value: z.string() }));
export const MetaDataObjectNameSchema = z.lazy(() =>
  z.looseObject({ key: Key, object: TemplateObjectKindSchema }),
);
export const MetaDataIndexSchema = z.lazy(() =>
  z.looseObject({
    key: Key,
    offset: withDefault(z.int().min(0, 'offset must be >= 0'), 0),
    // 0 (the default) means 1, as the reference does.
    step: withDefault(z.int().min(0, 'step must be >= 0'), 0),
    prefix: z.string().optional(),
    suffix: z.string().optional(),
  }),
);
export const MetaDataNamespaceSchema = z.lazy(() => z.looseObject({ key: Key }));
/** A metaData entry filled from an IPPool (v1beta1 spelling `...FromIPPool`). */
export const FromPoolSchema = z.lazy(() =>
  z.looseObject({
    key: Key,
    name: z.string().min(1, 'name (the IPPool) must not be empty'),
    apiGroup: z.string().optional(),
    kind: z.string().optional(),
  }),
);
export const MetaDataHostInterfaceSchema = z.lazy(() =>
  z
    .looseObject({ key: Key, interface: z.string().optional(), fromBootMAC: z.boolean().optional() })
    .refine((e) => Boolean(e.interface) || e.fromBootMAC === true, {
      message: 'set interface (a NIC name of the host) or fromBootMAC: true',
      path: ['interface'],
    }),
);
export const MetaDataFromLabelSchema = z.lazy(() =>
  z.looseObject({
    key: Key,
    object: TemplateObjectKindSchema,
    label: z.string().min(1),
  }),
);
export const MetaDataFromAnnotationSchema = z.lazy(() =>
  z.looseObject({
    key: Key,
    object: TemplateObjectKindSchema,
    annotation: z.string().min(1),
  }),
);

export const MetaDataTemplateSchema = z.lazy(() =>
  z.looseObject({
    strings: z.array(MetaDataStringSchema).optional(),
    objectNames: z.array(MetaDataObjectNameSchema).optional(),
    indexes: z.array(MetaDataIndexSchema).optional(),
    namespaces: z.array(MetaDataNamespaceSchema).optional(),
    ipAddressesFromIPPool: z.array(FromPoolSchema).optional(),
    prefixesFromIPPool: z.array(FromPoolSchema).optional(),
    gatewaysFromIPPool: z.array(FromPoolSchema).optional(),
    dnsServersFromIPPool: z.array(FromPoolSchema).optional(),
    fromHostInterfaces: z.array(MetaDataHostInterfaceSchema).optional(),
    fromLabels: z.array(MetaDataFromLabelSchema).optional(),
    fromAnnotations: z.array(MetaDataFromAnnotationSchema).optional(),
  }),
);
export type MetaDataTemplate = z.infer<typeof MetaDataTemplateSchema>;
export type MetaDataIndex = z.infer<typeof MetaDataIndexSchema>;
export type FromPool = z.infer<typeof FromPoolSchema>;

// ---- networkData ----------------------------------------------------------------------------

export const FromAnnotationSchema = z.lazy(() =>
  z.looseObject({
    object: TemplateObjectKindSchema,
    annotation: z.string().min(1),
  }),
);
export type FromAnnotation = z.infer<typeof FromAnnotationSchema>;

/** A pool named by reference (default ipam.metal3.io/IPPool). */
export const PoolReferenceSchema = z.lazy(() =>
  z.looseObject({
    name: z.string().min(1, 'name must not be empty'),
    apiGroup: z.string().optional(),
    kind: z.string().optional(),
  }),
);
export type PoolReference = z.infer<typeof PoolReferenceSchema>;

/** Where a link's MAC comes from; precedence string > fromHostInterface > fromAnnotation. */
export const MacAddressSourceSchema = z.lazy(() =>
  z.looseObject({
    string: MacAddressSchema.optional(),
    fromHostInterface: z.string().optional(),
    fromAnnotation: FromAnnotationSchema.optional(),
  }),
);
export type MacAddressSource = z.infer<typeof MacAddressSourceSchema>;

/** The MTU when a link does not set one (the CRD's default). */
export const DEFAULT_MTU = 1500;
const Mtu = z.lazy(() => withDefault(z.int().min(1).max(9000), DEFAULT_MTU));
/**
 * The interface name cloud-init gives the link (renames the interface with the link's MAC, or uses
 * the name directly without one); CAPM3 v1beta1's limits (a Linux interface name).
 */
const LinkName = z.lazy(() =>
  z
    .string()
    .max(15, 'an interface name has at most 15 characters')
    .regex(
      /^[a-zA-Z][a-zA-Z0-9._-]*$/,
      'an interface name starts with a letter, then letters, digits, ".", "_", "-"',
    )
    .optional(),
);

export const EthernetTypeSchema = z.lazy(() =>
  z.enum(['bridge', 'dvs', 'hw_veb', 'hyperv', 'ovs', 'tap', 'vhostuser', 'vif', 'phy']),
);
export const EthernetLinkSchema = z.lazy(() =>
  z.looseObject({
    type: EthernetTypeSchema,
    id: z.string().min(1),
    name: LinkName,
    mtu: Mtu,
    macAddress: MacAddressSourceSchema.optional(),
  }),
);
export type EthernetLink = z.infer<typeof EthernetLinkSchema>;

export const BondModeSchema = z.lazy(() =>
  z.enum([
    '802.3ad',
    'balance-rr',
    'active-backup',
    'balance-xor',
    'broadcast',
    'balance-tlb',
    'balance-alb',
  ]),
);
export const BondLinkSchema = z.lazy(() =>
  z.looseObject({
    id: z.string().min(1),
    name: LinkName,
    mtu: Mtu,
    macAddress: MacAddressSourceSchema.optional(),
    bondMode: BondModeSchema,
    bondXmitHashPolicy: z.enum(['layer2', 'layer3+4', 'layer2+3', '']).optional(),
    bondLinks: withDefault(z.array(z.string()), []),
    /** Extra bond options rendered as `bond_<name>: <value>`; any JSON value. */
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
);
export type BondLink = z.infer<typeof BondLinkSchema>;

export const VlanLinkSchema = z.lazy(() =>
  z.looseObject({
    id: z.string().min(1),
    name: LinkName,
    mtu: Mtu,
    macAddress: MacAddressSourceSchema.optional(),
    vlanID: z
      .int()
      .min(0, 'vlanID must be between 0 and 4094')
      .max(4094, 'vlanID must be between 0 and 4094'),
    vlanLink: z.string().min(1),
  }),
);
export type VlanLink = z.infer<typeof VlanLinkSchema>;

export const NetworkLinksSchema = z.lazy(() =>
  z.looseObject({
    ethernets: z.array(EthernetLinkSchema).optional(),
    bonds: z.array(BondLinkSchema).optional(),
    vlans: z.array(VlanLinkSchema).optional(),
  }),
);

/** DNS services of a route or of the whole networkData. */
export const NetworkServicesSchema = z.lazy(() =>
  z.looseObject({
    dns: z.array(IPAddressStringSchema).optional(),
    dnsFromIPPool: z.string().optional(),
  }),
);
export type NetworkServices = z.infer<typeof NetworkServicesSchema>;

/** Route gateway; precedence string > fromPoolAnnotation > fromPoolRef > fromIPPool. */
export const RouteGatewaySchema = z.lazy(() =>
  z.looseObject({
    string: IPAddressStringSchema.optional(),
    fromIPPool: z.string().optional(),
    fromPoolRef: PoolReferenceSchema.optional(),
    fromPoolAnnotation: FromAnnotationSchema.optional(),
  }),
);
export type RouteGateway = z.infer<typeof RouteGatewaySchema>;

/**
 * A route. The prefix length is `prefix` (the reference implementation's field) or `netmask`
 * (as seed 001 writes it); both integers, `prefix` wins when both are set.
 */
export const RouteSchema = z.lazy(() =>
  z.looseObject({
    network: IPAddressStringSchema,
    prefix: z.int().min(0).max(128).optional(),
    netmask: z.int().min(0).max(128).optional(),
    gateway: RouteGatewaySchema.optional(),
    services: NetworkServicesSchema.optional(),
  }),
);
export type Route = z.infer<typeof RouteSchema>;

/** A statically addressed network; the address comes from fromPoolAnnotation > fromPoolRef > ipAddressFromIPPool. */
export const StaticNetworkSchema = z.lazy(() =>
  z
    .looseObject({
      id: z.string().min(1),
      link: z.string().min(1),
      ipAddressFromIPPool: z.string().optional(),
      fromPoolRef: PoolReferenceSchema.optional(),
      fromPoolAnnotation: FromAnnotationSchema.optional(),
      routes: z.array(RouteSchema).optional(),
    })
    .refine((n) => Boolean(n.ipAddressFromIPPool || n.fromPoolRef || n.fromPoolAnnotation), {
      message:
        'a static network needs its address pool: set ipAddressFromIPPool, fromPoolRef or fromPoolAnnotation',
      path: ['ipAddressFromIPPool'],
    }),
);
export type StaticNetwork = z.infer<typeof StaticNetworkSchema>;

export const DynamicNetworkSchema = z.lazy(() =>
  z.looseObject({
    id: z.string().min(1),
    link: z.string().min(1),
    routes: z.array(RouteSchema).optional(),
  }),
);
export type DynamicNetwork = z.infer<typeof DynamicNetworkSchema>;

export const NetworksSchema = z.lazy(() =>
  z.looseObject({
    ipv4: z.array(StaticNetworkSchema).optional(),
    ipv6: z.array(StaticNetworkSchema).optional(),
    ipv4DHCP: z.array(DynamicNetworkSchema).optional(),
    ipv6DHCP: z.array(DynamicNetworkSchema).optional(),
    ipv6SLAAC: z.array(DynamicNetworkSchema).optional(),
  }),
);

export const NetworkDataTemplateSchema = z.lazy(() =>
  z.looseObject({
    links: NetworkLinksSchema.optional(),
    networks: NetworksSchema.optional(),
    services: NetworkServicesSchema.optional(),
  }),
);
export type NetworkDataTemplate = z.infer<typeof NetworkDataTemplateSchema>;

// ---- the kind --------------------------------------------------------------------------------

export const Metal3DataTemplateSpecSchema = z.lazy(() =>
  z.looseObject({
    /** Deprecated upstream, kept for the v1beta1 shape. */
    clusterName: z.string().optional(),
    /** Links templates that replace one another (seed 001). */
    templateReference: z.string().optional(),
    metaData: MetaDataTemplateSchema.optional().describe(
      'Template of the metaData (a flat string map) rendered per machine',
    ),
    networkData: NetworkDataTemplateSchema.optional().describe(
      'Template of the networkData (OpenStack network_data.json) rendered per machine',
    ),
  }),
);
export type Metal3DataTemplateSpec = z.infer<typeof Metal3DataTemplateSpecSchema>;

export const Metal3DataTemplateStatusSchema = z.lazy(() =>
  z.looseObject({
    /** index (as a string key) -> claim name, as seed 001 shows. */
    indexes: StringMapSchema.optional().describe('Allocated indexes: index -> Metal3DataClaim name'),
    /** claim name -> Metal3Data name. */
    dataNames: StringMapSchema.optional().describe('Metal3DataClaim name -> Metal3Data name'),
    /**
     * Claims whose allocation is under way during a burst (ADR 012): claim name -> when it joined.
     * Each one's rank is the number of unserved claims that joined before it.
     */
    allocating: StringMapSchema.optional().describe(
      'Metal3DataClaims being allocated in a burst: claim name -> time they joined (ADR 012)',
    ),
    lastUpdated: TimestampSchema.optional(),
  }),
);
export type Metal3DataTemplateStatus = z.infer<typeof Metal3DataTemplateStatusSchema>;

export const Metal3DataTemplateSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('Metal3DataTemplate').optional(),
    metadata: ObjectMetaSchema,
    spec: Metal3DataTemplateSpecSchema,
    status: Metal3DataTemplateStatusSchema.optional(),
  }),
);
export type Metal3DataTemplate = z.infer<typeof Metal3DataTemplateSchema>;

export function parseMetal3DataTemplate(obj: unknown): Metal3DataTemplate {
  return parseObject(Metal3DataTemplateSchema, 'Metal3DataTemplate', obj);
}
