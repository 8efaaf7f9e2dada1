/** Resolving the `object: machine|metal3machine|baremetalhost` selector of template entries. */
import type { ObjectMeta } from '../api/index.ts';
import { RenderError } from './errors.ts';
import type { RenderObjects } from './inputs.ts';

/** The object kind as written in a template; compared lower-cased, as the reference does. */
export function objectMeta(objects: RenderObjects, kind: string, field: string): ObjectMeta {
  switch (typeof kind === 'string' ? kind.toLowerCase() : kind) {
    case 'machine':
      return objects.machine.metadata;
    case 'metal3machine':
      return objects.metal3Machine.metadata;
    case 'baremetalhost':
      return objects.bmh.metadata;
    default:
      throw new RenderError(
        field,
        `unknown object type ${JSON.stringify(kind)}: expected machine, metal3machine or baremetalhost`,
      );
  }
}

/** An annotation of the selected object, or "" when absent. */
export function annotationOf(
  objects: RenderObjects,
  source: { object: string; annotation: string },
  field: string,
): string {
  return objectMeta(objects, source.object, `${field}.object`).annotations?.[source.annotation] ?? '';
}

export function labelOf(
  objects: RenderObjects,
  source: { object: string; label: string },
  field: string,
): string {
  return objectMeta(objects, source.object, `${field}.object`).labels?.[source.label] ?? '';
}

/** MAC of the first host NIC with that name (BareMetalHost status.hardware.nics). */
export function hostNicMac(objects: RenderObjects, nicName: string, field: string): string {
  const nics = objects.bmh.status?.hardware?.nics;
  if (!nics || nics.length === 0) {
    throw new RenderError(
      field,
      `the BareMetalHost ${objects.bmh.metadata.name ?? ''} has no NICs in status.hardware.nics (not inspected yet?)`,
    );
  }
  const nic = nics.find((n) => n.name === nicName);
  if (!nic) {
    const names = nics.map((n) => n.name).join(', ');
    throw new RenderError(
      field,
      `NIC ${JSON.stringify(nicName)} not found on BareMetalHost ${objects.bmh.metadata.name ?? ''} (NICs: ${names})`,
    );
  }
  return nic.mac ?? '';
}
