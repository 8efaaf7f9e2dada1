/** Kinds deprovision reads through a narrower schema than their own (shared/api/resources.ts `view`). */
import { z } from 'zod';
import { ObjectMetaSchema } from '../../shared/api/meta.ts';
import { K, view } from '../../shared/api/resources.ts';

const Ref = z.looseObject({ name: z.string().optional(), namespace: z.string().optional() });
const DataRefs = z.looseObject({
  userData: Ref.optional(),
  metaData: Ref.optional(),
  networkData: Ref.optional(),
});

/**
 * A deleting Metal3Machine as its release reads it: metadata and its data refs. Its host is
 * released and its finalizer dropped whatever the rest of its spec says (a machine that fails its
 * full schema must not keep its host for ever).
 */
export const MachineForReleaseSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: DataRefs.optional(),
  status: DataRefs.optional(),
});
export type MachineForRelease = z.infer<typeof MachineForReleaseSchema>;
export const MACHINE_FOR_RELEASE = view(K.Metal3Machine, MachineForReleaseSchema);
