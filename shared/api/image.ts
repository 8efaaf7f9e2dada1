import { z } from 'zod';

export const ChecksumTypeSchema = z.lazy(() => z.enum(['md5', 'sha256', 'sha512']));
export type ChecksumType = z.infer<typeof ChecksumTypeSchema>;

export const DiskFormatSchema = z.lazy(() => z.enum(['raw', 'qcow2', 'vdi', 'vmdk', 'live-iso']));
export type DiskFormat = z.infer<typeof DiskFormatSchema>;

/**
 * The OS image to write (v1beta1 key `format`). Whether url/checksum are required depends on the
 * rest of the spec (customDeploy, live-iso), so that rule lives on the Metal3Machine spec.
 */
export const ImageSchema = z.lazy(() =>
  z.looseObject({
    url: z.string().optional(),
    checksum: z.string().optional(),
    checksumType: ChecksumTypeSchema.optional(),
    format: DiskFormatSchema.optional(),
  }),
);
export type Image = z.infer<typeof ImageSchema>;

export const CustomDeploySchema = z.lazy(() => z.looseObject({ method: z.string() }));
export type CustomDeploy = z.infer<typeof CustomDeploySchema>;
