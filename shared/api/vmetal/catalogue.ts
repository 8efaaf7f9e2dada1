/**
 * The supporting vMetal kinds: NodeEnvironment (namespaced, beside the tenant's claims), OSImage,
 * SSHKey and MachineConfigTemplate (cluster-scoped catalogue objects the properties name).
 */
import { z } from 'zod';
import { ObjectMetaSchema, StringMapSchema } from '../meta.ts';
import { parseObject } from '../parse.ts';
import { catalogueFields, vmetalStatusFields } from './common.ts';

export const NodeEnvironmentSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('NodeEnvironment').optional(),
    metadata: ObjectMetaSchema,
    spec: z.looseObject({
      properties: StringMapSchema.optional().describe('Properties between the NodeType and the claim'),
      providerRef: z.string().optional(),
      vClusterRef: z.string().optional(),
    }),
    status: z.looseObject({ ...vmetalStatusFields }).optional(),
  }),
);
export type NodeEnvironment = z.infer<typeof NodeEnvironmentSchema>;

export const OSImageSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('OSImage').optional(),
    metadata: ObjectMetaSchema,
    spec: z.looseObject({
      ...catalogueFields,
      properties: StringMapSchema.optional().describe(
        'metal3.vcluster.com/image-url, -checksum, -checksum-type',
      ),
      connectorRef: z.string().optional().describe('Accepted, not acted on'),
      format: z.string().optional().describe('Accepted, not acted on (qcow2)'),
    }),
  }),
);
export type OSImage = z.infer<typeof OSImageSchema>;

export const SSHKeySchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('SSHKey').optional(),
    metadata: ObjectMetaSchema,
    spec: z.looseObject({
      ...catalogueFields,
      publicKey: z.string().optional().describe('One OpenSSH public key line'),
    }),
  }),
);
export type SSHKey = z.infer<typeof SSHKeySchema>;

export const MachineConfigTemplateSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('MachineConfigTemplate').optional(),
    metadata: ObjectMetaSchema,
    spec: z.looseObject({
      ...catalogueFields,
      cloudInitTemplate: z.string().optional().describe('Go text/template (sprig) of the user data'),
      networkDataTemplate: z.string().optional().describe('Go text/template (sprig) of the network data'),
    }),
  }),
);
export type MachineConfigTemplate = z.infer<typeof MachineConfigTemplateSchema>;

export function parseNodeEnvironment(obj: unknown): NodeEnvironment {
  return parseObject(NodeEnvironmentSchema, 'NodeEnvironment', obj);
}
