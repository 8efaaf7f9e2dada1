/**
 * `fieldValidation` (Strict | Warn | Ignore; Warn when absent) as the real server applies it to
 * what its strict decoder finds: unknown and duplicate fields. Strict refuses the write, Warn
 * drops the fields and answers `Warning: unknown field "dta"`, Ignore drops them silently.
 * Type errors are not strict errors: they fail the write whatever the directive.
 *
 * The answer depends on where the decoder ran (k8s.io/apiserver pkg/endpoints/handlers):
 * on a request body (create.go, update.go: 400 `<Kind> in version "v1" cannot be handled as a
 * <Kind>: ...`, transformDecodeError) or on a patched object (patch.go applyPatchToCurrentObject,
 * applyPatchToObject: 422 Invalid on field `patch`).
 */
import { builtinType } from './builtin-types.ts';
import { decodeTyped, goFormat } from './decode.ts';
import type { ServedKind } from './kinds.ts';
import { ApiError, badRequest, fmtValue, internalError, invalid } from './status.ts';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** A patch being applied: what the 422 answers show as the invalid value of field `patch`. */
export interface PatchSource {
  /** Strategic merge patch (its Go map printed), or JSON / merge patch (the patched object's JSON). */
  strategic: boolean;
  patch: unknown;
  /** The patched object before decoding, as JSON (computed only on the error path). */
  patched(): string;
}

export interface DecodeContext {
  fieldValidation?: FieldValidation | undefined;
  warnings?: string[] | undefined;
  /** Duplicate fields of the request body (paths), found by the strict decoder's scan. */
  duplicates?: string[] | undefined;
  /** Set when the object is the result of a patch. */
  patch?: PatchSource | undefined;
}

const OPTIONS_KINDS = { create: 'CreateOptions', update: 'UpdateOptions', patch: 'PatchOptions' } as const;

/** The `fieldValidation` query parameter, validated as ValidateFieldValidation does (422 on *Options). */
export function fieldValidationParam(value: string | null, verb: string): FieldValidation | undefined {
  if (value === null || value === '') return undefined;
  if (value === 'Strict' || value === 'Warn' || value === 'Ignore') return value;
  const optionsKind = OPTIONS_KINDS[verb as keyof typeof OPTIONS_KINDS] ?? 'CreateOptions';
  throw invalid({ kind: optionsKind, group: 'meta.k8s.io' }, '', [
    {
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${fmtValue(value)}: supported values: "", "Ignore", "Strict", "Warn"`,
      field: 'fieldValidation',
    },
  ]);
}

/** The 422 the patch handler answers when the patched object does not decode. */
function patchInvalid(p: PatchSource, message: string): ApiError {
  const value = fmtValue(p.strategic ? goFormat(p.patch) : p.patched());
  const cause = {
    reason: 'FieldValueInvalid',
    message: `Invalid value: ${value}: ${message}`,
    field: 'patch',
  };
  return new ApiError(422, 'Invalid', ` "" is invalid: patch: ${cause.message}`, { causes: [cause] });
}

/** A decoding failure that is not a strict error (a type mismatch): refused whatever fieldValidation says. */
export function decodeFailure(kind: ServedKind, message: string, ctx: DecodeContext): ApiError {
  if (ctx.patch) return patchInvalid(ctx.patch, message);
  return badRequest(
    `${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: ${message}`,
  );
}

/**
 * Applies the directive to the unknown fields found (and the body's duplicates): Strict throws,
 * Warn adds one warning per field, Ignore does nothing. The fields are already dropped.
 */
export function enforceFieldValidation(kind: ServedKind, unknown: string[], ctx: DecodeContext): void {
  const errors = [
    ...(ctx.duplicates ?? []).map((f) => `duplicate field ${JSON.stringify(f)}`),
    ...unknown.map((f) => `unknown field ${JSON.stringify(f)}`),
  ];
  if (errors.length === 0) return;
  const mode = ctx.fieldValidation ?? 'Warn';
  if (mode === 'Ignore') return;
  if (mode === 'Warn') {
    ctx.warnings?.push(...errors);
    return;
  }
  throw decodeFailure(kind, `strict decoding error: ${errors.join(', ')}`, ctx);
}

/**
 * Decodes a built-in object in place as its Go struct would: unknown fields dropped (or refused
 * under Strict), nulls turned to zero values, a type mismatch refused. Kinds without a schema in
 * the OpenAPI data are left as they are.
 */
export function decodeBuiltin(kind: ServedKind, obj: Record<string, unknown>, ctx: DecodeContext): void {
  const t = builtinType(kind.group, kind.version, kind.kind);
  if (!t) return;
  const r = decodeTyped(t, obj);
  if (r.error !== undefined) throw decodeFailure(kind, r.error, ctx);
  enforceFieldValidation(kind, r.unknown, ctx);
}

/**
 * Server-side apply of a built-in kind: the applied configuration is converted to a typed value
 * first (k8s.io/apimachinery managedfields structuredMergeManager.Apply), which refuses fields
 * the schema does not declare and values of the wrong type, whatever fieldValidation says.
 */
export function checkApplyPatch(
  kind: ServedKind,
  ns: string | undefined,
  name: string,
  patch: unknown,
): void {
  const t = builtinType(kind.group, kind.version, kind.kind);
  if (!t || !patch || typeof patch !== 'object') return;
  const r = decodeTyped(t, structuredClone(patch) as Record<string, unknown>);
  const errors = r.unknown.map((f) => `.${f}: field not declared in schema`);
  if (r.error !== undefined) errors.push(r.error);
  if (!errors.length) return;
  const gvk = `${kind.group}/${kind.version}, Kind=${kind.kind}`;
  const text = errors.length === 1 ? errors[0] : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n');
  throw internalError(`failed to create typed patch object (${ns ?? ''}/${name}; ${gvk}): ${text}`, false);
}
