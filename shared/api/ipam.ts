import { z } from 'zod';
import { tryParseIp } from '../ipam/ip.ts';
import { ObjectMetaSchema, TimestampSchema } from './meta.ts';
import { CIDRSchema, IPAddressStringSchema, isIPAddress, isOrderedRange, PrefixLengthSchema } from './net.ts';
import { parseObject } from './parse.ts';
import { ObjectReferenceSchema } from './refs.ts';

// ip-address-manager (ipam.metal3.io/v1alpha1). We implement its allocation, so its kinds are
// typed strictly like ours (see docs/adr/003-api-shapes.md).

/** One range of an IPPool; `start`..`end` (inclusive) and/or `subnet`, with per-entry overrides. */
export const IPPoolEntrySchema = z.lazy(() =>
  z
    .looseObject({
      start: IPAddressStringSchema.optional(),
      end: IPAddressStringSchema.optional(),
      subnet: CIDRSchema.optional(),
      prefix: PrefixLengthSchema.optional(),
      gateway: IPAddressStringSchema.optional(),
      dnsServers: z.array(IPAddressStringSchema).optional(),
    })
    .superRefine((entry, ctx) => {
      // Only when both parse: a bad address is already reported on its own field.
      const { start, end } = entry;
      if (start && end && isIPAddress(start) && isIPAddress(end) && !isOrderedRange(start, end))
        ctx.addIssue({
          code: 'custom',
          path: ['end'],
          message: `end ${end} must be >= start ${start}, of the same IP family`,
        });
    }),
);
export type IPPoolEntry = z.infer<typeof IPPoolEntrySchema>;

export const AllocationStrategySchema = z.lazy(() => z.enum(['sequential', 'random']));

export const IPPoolSpecSchema = z.lazy(() =>
  z
    .looseObject({
      clusterName: z.string().optional(),
      namePrefix: z.string().min(1, 'namePrefix must not be empty'),
      pools: z.array(IPPoolEntrySchema).optional(),
      prefix: PrefixLengthSchema.optional(),
      gateway: IPAddressStringSchema.optional(),
      dnsServers: z.array(IPAddressStringSchema).optional(),
      /** claim name -> IP reserved for it. */
      preAllocations: z.record(z.string(), IPAddressStringSchema).optional(),
      allocationStrategy: AllocationStrategySchema.optional(),
    })
    .superRefine((spec, ctx) => {
      // One address reserved for two claims could never be honoured for both (the webhook's rule).
      const claimOf = new Map<string, string>();
      for (const [claim, ip] of Object.entries(spec.preAllocations ?? {})) {
        const parsed = tryParseIp(ip);
        if (!parsed) continue;
        const key = `${parsed.family}/${parsed.value}`;
        const other = claimOf.get(key);
        if (other !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['preAllocations', claim],
            message: `${ip} is already pre-allocated to ${other}`,
          });
        else claimOf.set(key, claim);
      }
    }),
);
export type IPPoolSpec = z.infer<typeof IPPoolSpecSchema>;

export const IPPoolStatusSchema = z.lazy(() =>
  z.looseObject({
    /** claim name -> allocated IP (Go field Allocations, JSON key `indexes`). */
    indexes: z.record(z.string(), z.string()).optional(),
    /**
     * Ours, not ip-address-manager's (ADR 012): IPClaims being allocated in a burst, claim name ->
     * time they joined. Its CRD prunes the field; our allocation then ranks by its page.
     */
    allocating: z
      .record(z.string(), z.string())
      .optional()
      .describe('IPClaims being allocated in a burst: claim name -> time they joined (ADR 012)'),
    lastUpdated: TimestampSchema.optional(),
  }),
);
export type IPPoolStatus = z.infer<typeof IPPoolStatusSchema>;

export const IPPoolSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('IPPool').optional(),
    metadata: ObjectMetaSchema,
    spec: IPPoolSpecSchema,
    status: IPPoolStatusSchema.optional(),
  }),
);
export type IPPool = z.infer<typeof IPPoolSchema>;

export const IPClaimSpecSchema = z.lazy(() => z.looseObject({ pool: ObjectReferenceSchema }));
export const IPClaimStatusSchema = z.lazy(() =>
  z.looseObject({
    address: ObjectReferenceSchema.optional(),
    errorMessage: z.string().optional(),
  }),
);
export const IPClaimSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('IPClaim').optional(),
    metadata: ObjectMetaSchema,
    spec: IPClaimSpecSchema,
    status: IPClaimStatusSchema.optional(),
  }),
);
export type IPClaim = z.infer<typeof IPClaimSchema>;
export type IPClaimSpec = z.infer<typeof IPClaimSpecSchema>;
export type IPClaimStatus = z.infer<typeof IPClaimStatusSchema>;

export const IPAddressSpecSchema = z.lazy(() =>
  z.looseObject({
    address: IPAddressStringSchema,
    prefix: PrefixLengthSchema,
    gateway: IPAddressStringSchema.optional(),
    dnsServers: z.array(IPAddressStringSchema).optional(),
    pool: ObjectReferenceSchema,
    claim: ObjectReferenceSchema,
  }),
);
export type IPAddressSpec = z.infer<typeof IPAddressSpecSchema>;

export const IPAddressSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('IPAddress').optional(),
    metadata: ObjectMetaSchema,
    spec: IPAddressSpecSchema,
  }),
);
export type IPAddress = z.infer<typeof IPAddressSchema>;

export function parseIPPool(obj: unknown): IPPool {
  return parseObject(IPPoolSchema, 'IPPool', obj);
}
export function parseIPClaim(obj: unknown): IPClaim {
  return parseObject(IPClaimSchema, 'IPClaim', obj);
}
export function parseIPAddress(obj: unknown): IPAddress {
  return parseObject(IPAddressSchema, 'IPAddress', obj);
}
