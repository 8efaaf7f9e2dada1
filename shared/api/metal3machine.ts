import { z } from 'zod';
import { ConditionsSchema } from './conditions.ts';
import { HostSelectorSchema } from './hostselector.ts';
import { CustomDeploySchema, type Image, ImageSchema } from './image.ts';
import { ObjectMetaSchema, TimestampSchema } from './meta.ts';
import { parseObject } from './parse.ts';
import { foreignNamespaceIssues, ObjectReferenceSchema, SecretReferenceSchema } from './refs.ts';

export const AutomatedCleaningModeSchema = z.lazy(() => z.enum(['metadata', 'disabled']));
export type AutomatedCleaningMode = z.infer<typeof AutomatedCleaningModeSchema>;

export const MachineAddressTypeSchema = z.lazy(() =>
  z.enum(['Hostname', 'ExternalIP', 'InternalIP', 'ExternalDNS', 'InternalDNS']),
);
export const MachineAddressSchema = z.lazy(() =>
  z.looseObject({ type: MachineAddressTypeSchema, address: z.string() }),
);
export type MachineAddress = z.infer<typeof MachineAddressSchema>;

/**
 * Why an image is not usable, or undefined. Without customDeploy an image needs url and checksum;
 * live-iso and oci:// images carry no checksum (the reference webhook's rule).
 */
export function imageProblem(image: Image | undefined): { path: string[]; message: string } | undefined {
  if (!image?.url)
    return {
      path: image ? ['image', 'url'] : ['image'],
      message: 'image.url is required unless customDeploy.method is set',
    };
  const checksumOptional = image.format === 'live-iso' || image.url.startsWith('oci://');
  if (!checksumOptional && !image.checksum)
    return {
      path: ['image', 'checksum'],
      message: 'image.checksum is required unless format is live-iso or customDeploy.method is set',
    };
  return undefined;
}

const Metal3MachineSpecShape = z.lazy(() =>
  z.looseObject({
    providerID: z
      .string()
      .optional()
      .describe('metal3://<namespace>/<host>/<machine>, set once the host is provisioned'),
    image: ImageSchema.optional().describe(
      'OS image written to the host; url and checksum required unless customDeploy is set',
    ),
    customDeploy: CustomDeploySchema.optional().describe(
      'Custom deploy method of the host, instead of an image',
    ),
    userData: SecretReferenceSchema.optional().describe(
      'Secret with user data; defaults to the Machine bootstrap data',
    ),
    metaData: SecretReferenceSchema.optional().describe(
      'Secret with metaData given directly (overrides the template)',
    ),
    networkData: SecretReferenceSchema.optional().describe(
      'Secret with networkData given directly (overrides the template)',
    ),
    hostSelector: HostSelectorSchema.optional().describe('Which BareMetalHosts this machine may take'),
    dataTemplate: ObjectReferenceSchema.optional().describe(
      'Metal3DataTemplate rendering metaData and networkData',
    ),
    automatedCleaningMode: AutomatedCleaningModeSchema.optional().describe(
      'Ironic automated cleaning: metadata (on) or disabled',
    ),
    failureDomain: z
      .string()
      .optional()
      .describe('Failure domain of the host (label infrastructure.cluster.x-k8s.io/failure-domain)'),
  }),
);

export const Metal3MachineSpecSchema = z.lazy(() =>
  Metal3MachineSpecShape.superRefine((spec, ctx) => {
    if (spec.customDeploy?.method) return;
    const problem = imageProblem(spec.image);
    if (problem) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  }),
);
export type Metal3MachineSpec = z.infer<typeof Metal3MachineSpecSchema>;

export const Metal3MachineStatusSchema = z.lazy(() =>
  z.looseObject({
    ready: z.boolean().optional(),
    failureReason: z.string().optional(),
    failureMessage: z.string().optional(),
    addresses: z.array(MachineAddressSchema).optional(),
    conditions: ConditionsSchema.optional(),
    lastUpdated: TimestampSchema.optional(),
    userData: SecretReferenceSchema.optional(),
    metaData: SecretReferenceSchema.optional(),
    networkData: SecretReferenceSchema.optional(),
    renderedData: ObjectReferenceSchema.optional(),
    /** Free-form progress for humans (`kubectl get`); nothing reads it. */
    phase: z.string().optional(),
  }),
);
export type Metal3MachineStatus = z.infer<typeof Metal3MachineStatusSchema>;

export const Metal3MachineSchema = z.lazy(() =>
  z
    .looseObject({
      apiVersion: z.string().optional(),
      kind: z.literal('Metal3Machine').optional(),
      metadata: ObjectMetaSchema,
      spec: Metal3MachineSpecSchema,
      status: Metal3MachineStatusSchema.optional(),
    })
    .superRefine((m3m, ctx) => {
      const { spec } = m3m;
      for (const issue of foreignNamespaceIssues(m3m.metadata.namespace, [
        [['spec', 'userData'], spec.userData],
        [['spec', 'metaData'], spec.metaData],
        [['spec', 'networkData'], spec.networkData],
        [['spec', 'dataTemplate'], spec.dataTemplate],
      ]))
        ctx.addIssue({ code: 'custom', ...issue });
    }),
);
export type Metal3Machine = z.infer<typeof Metal3MachineSchema>;

export function parseMetal3Machine(obj: unknown): Metal3Machine {
  return parseObject(Metal3MachineSchema, 'Metal3Machine', obj);
}
