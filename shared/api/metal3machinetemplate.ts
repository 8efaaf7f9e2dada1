import { z } from 'zod';
import { ObjectMetaSchema, TemplateMetaSchema, withDefault } from './meta.ts';
import { Metal3MachineSpecSchema } from './metal3machine.ts';
import { parseObject } from './parse.ts';

export const Metal3MachineTemplateResourceSchema = z.lazy(() =>
  z.looseObject({
    metadata: TemplateMetaSchema.optional(),
    spec: Metal3MachineSpecSchema,
  }),
);

export const Metal3MachineTemplateSpecSchema = z.lazy(() =>
  z.looseObject({
    template: Metal3MachineTemplateResourceSchema,
    /** Book released hosts for the same KubeadmControlPlane/MachineDeployment (node-reuse label). */
    nodeReuse: withDefault(z.boolean(), false).describe(
      'Keep released hosts for the same KubeadmControlPlane or MachineDeployment',
    ),
  }),
);
export type Metal3MachineTemplateSpec = z.infer<typeof Metal3MachineTemplateSpecSchema>;

export const Metal3MachineTemplateSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('Metal3MachineTemplate').optional(),
    metadata: ObjectMetaSchema,
    spec: Metal3MachineTemplateSpecSchema,
  }),
);
export type Metal3MachineTemplate = z.infer<typeof Metal3MachineTemplateSchema>;

export function parseMetal3MachineTemplate(obj: unknown): Metal3MachineTemplate {
  return parseObject(Metal3MachineTemplateSchema, 'Metal3MachineTemplate', obj);
}
