import { z } from 'zod';
import { ChecksumTypeSchema, DiskFormatSchema } from './image.ts';
import { ObjectMetaSchema } from './meta.ts';
import { parseObject } from './parse.ts';
import { LooseObjectReferenceSchema } from './refs.ts';

// baremetal-operator owns this kind: every object here is passthrough, so a read-modify-write
// keeps the fields we do not model.

/** Provisioning states; other values may appear in newer operators, so the field stays a string. */
export const BMH_STATES = [
  '',
  'unmanaged',
  'registering',
  'match profile',
  'preparing',
  'ready',
  'available',
  'provisioning',
  'provisioned',
  'externally provisioned',
  'deprovisioning',
  'inspecting',
  'powering off before delete',
  'deleting',
] as const;
export type BareMetalHostState = (typeof BMH_STATES)[number];

export const BareMetalHostImageSchema = z.lazy(() =>
  z.looseObject({
    url: z.string().optional(),
    checksum: z.string().optional(),
    checksumType: z.union([ChecksumTypeSchema, z.literal('auto')]).optional(),
    format: DiskFormatSchema.optional(),
  }),
);
export type BareMetalHostImage = z.infer<typeof BareMetalHostImageSchema>;

const SecretRef = z.lazy(() =>
  z.looseObject({ name: z.string().optional(), namespace: z.string().optional() }),
);

export const NicSchema = z.lazy(() =>
  z.looseObject({
    name: z.string().optional(),
    mac: z.string().optional(),
    ip: z.string().optional(),
  }),
);
export type Nic = z.infer<typeof NicSchema>;

export const BareMetalHostSpecSchema = z.lazy(() =>
  z.looseObject({
    consumerRef: LooseObjectReferenceSchema.optional(),
    image: BareMetalHostImageSchema.optional(),
    customDeploy: z.looseObject({ method: z.string().optional() }).optional(),
    userData: SecretRef.optional(),
    metaData: SecretRef.optional(),
    networkData: SecretRef.optional(),
    online: z.boolean().optional(),
    automatedCleaningMode: z.enum(['metadata', 'disabled']).optional(),
    bootMACAddress: z.string().optional(),
    bmc: z
      .looseObject({
        address: z.string().optional(),
        credentialsName: z.string().optional(),
        disableCertificateVerification: z.boolean().optional(),
      })
      .optional(),
    disablePowerOff: z.boolean().optional(),
  }),
);
export type BareMetalHostSpec = z.infer<typeof BareMetalHostSpecSchema>;

export const BareMetalHostStatusSchema = z.lazy(() =>
  z.looseObject({
    provisioning: z.looseObject({ state: z.string().optional(), ID: z.string().optional() }).optional(),
    errorMessage: z.string().optional(),
    errorType: z.string().optional(),
    poweredOn: z.boolean().optional(),
    operationalStatus: z.string().optional(),
    hardware: z
      .looseObject({ hostname: z.string().optional(), nics: z.array(NicSchema).optional() })
      .optional(),
  }),
);
export type BareMetalHostStatus = z.infer<typeof BareMetalHostStatusSchema>;

export const BareMetalHostSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('BareMetalHost').optional(),
    metadata: ObjectMetaSchema,
    spec: BareMetalHostSpecSchema.optional(),
    status: BareMetalHostStatusSchema.optional(),
  }),
);
export type BareMetalHost = z.infer<typeof BareMetalHostSchema>;

export function parseBareMetalHost(obj: unknown): BareMetalHost {
  return parseObject(BareMetalHostSchema, 'BareMetalHost', obj);
}
