/**
 * Kinds read by selectHost through a narrower schema than their own (shared/api/resources.ts
 * `view`): where it acts on objects the full schema would reject.
 */
import { z } from 'zod';
import { ObjectMetaSchema } from '../../shared/api/meta.ts';
import { K, view } from '../../shared/api/resources.ts';

/**
 * A Metal3Machine as the template's automatedCleaningMode propagation reads it: the machines of
 * the namespace are listed, and one whose spec fails its schema must not stop the others.
 */
export const MACHINE_FOR_PROPAGATION = view(
  K.Metal3Machine,
  z.looseObject({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: ObjectMetaSchema,
    spec: z.looseObject({ automatedCleaningMode: z.string().optional() }).optional(),
  }),
);
