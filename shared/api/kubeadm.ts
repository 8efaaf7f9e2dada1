import { z } from 'zod';
import { ObjectMetaSchema } from './meta.ts';
import { parseObject } from './parse.ts';

// CABPK kinds (bootstrap.cluster.x-k8s.io/v1beta1): opaque to us, only stored for the local
// system and the seed fixtures. spec and status keep whatever they hold.

const Opaque = z.lazy(() => z.record(z.string(), z.unknown()));

export const KubeadmConfigSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('KubeadmConfig').optional(),
    metadata: ObjectMetaSchema,
    spec: Opaque.optional(),
    status: z
      .looseObject({ ready: z.boolean().optional(), dataSecretName: z.string().optional() })
      .optional(),
  }),
);
export type KubeadmConfig = z.infer<typeof KubeadmConfigSchema>;

export const KubeadmConfigTemplateSchema = z.lazy(() =>
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.literal('KubeadmConfigTemplate').optional(),
    metadata: ObjectMetaSchema,
    spec: z.looseObject({ template: z.looseObject({ spec: Opaque.optional() }).optional() }).optional(),
  }),
);
export type KubeadmConfigTemplate = z.infer<typeof KubeadmConfigTemplateSchema>;

export function parseKubeadmConfig(obj: unknown): KubeadmConfig {
  return parseObject(KubeadmConfigSchema, 'KubeadmConfig', obj);
}
export function parseKubeadmConfigTemplate(obj: unknown): KubeadmConfigTemplate {
  return parseObject(KubeadmConfigTemplateSchema, 'KubeadmConfigTemplate', obj);
}
