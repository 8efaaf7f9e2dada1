/**
 * Struct types for callers that hand templates Go structs (vMetal's NodeClaim with an embedded
 * ObjectMeta, so `.Values.NodeClaim.Name` is promoted as in Go).
 */
import type { GoType, StructField } from './types.ts';
import { GoValue, type RV } from './value.ts';

/** A struct type named as Go prints it (`v1.NodeClaim`); its values list fields in this order. */
export function structType(name: string, fields: StructField[]): GoType & { make(values: RV[]): GoValue } {
  const t: GoType = { kind: 'struct', name, fields };
  return Object.assign(t, {
    make(values: RV[]): GoValue {
      if (values.length !== fields.length) throw new TypeError(`${name} has ${fields.length} fields`);
      return new GoValue(t, values);
    },
  });
}
