/** Name and metadata validation with the real server's messages (apimachinery validation). */
import { fieldError, type StatusCause } from './status.ts';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

export function validateName(name: string, label: boolean, field = 'metadata.name'): StatusCause[] {
  if (label) {
    if (name.length > 63) return [fieldError('Invalid', field, 'must be no more than 63 characters', name)];
    if (!DNS1123_LABEL.test(name)) return [fieldError('Invalid', field, LABEL_MSG, name)];
  } else {
    if (name.length > 253) return [fieldError('Invalid', field, 'must be no more than 253 characters', name)];
    if (!DNS1123_SUBDOMAIN.test(name)) return [fieldError('Invalid', field, SUBDOMAIN_MSG, name)];
  }
  return [];
}

/** path.IsValidPathSegmentName (ValidateRBACName): not "." or "..", no "/" or "%". */
export function validatePathSegmentName(name: string, field = 'metadata.name'): StatusCause[] {
  if (name === '.' || name === '..') return [fieldError('Invalid', field, `may not be '${name}'`, name)];
  return ['/', '%']
    .filter((c) => name.includes(c))
    .map((c) => fieldError('Invalid', field, `may not contain '${c}'`, name));
}

export function validateQualifiedName(key: string, field: string): StatusCause[] {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const out: StatusCause[] = [];
  if (prefix !== undefined && (!prefix || !DNS1123_SUBDOMAIN.test(prefix) || prefix.length > 253)) {
    out.push(fieldError('Invalid', field, `prefix part ${SUBDOMAIN_MSG}`, key));
  }
  if (!name || name.length > 63 || !QUALIFIED_NAME.test(name)) {
    out.push(
      fieldError(
        'Invalid',
        field,
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        key,
      ),
    );
  }
  return out;
}

/** Object metadata checks every kind shares: labels, annotations, finalizers, ownerReferences. */
export function validateObjectMeta(meta: any): StatusCause[] {
  const out: StatusCause[] = [];
  for (const [k, v] of Object.entries((meta.labels ?? {}) as Record<string, unknown>)) {
    out.push(...validateQualifiedName(k, 'metadata.labels'));
    if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v)) {
      out.push(
        fieldError(
          'Invalid',
          'metadata.labels',
          "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
          v,
        ),
      );
    }
  }
  let annSize = 0;
  for (const [k, v] of Object.entries((meta.annotations ?? {}) as Record<string, unknown>)) {
    out.push(...validateQualifiedName(k.toLowerCase(), 'metadata.annotations'));
    if (typeof v !== 'string')
      out.push(fieldError('Invalid', `metadata.annotations.${k}`, 'must be a string', v));
    annSize += k.length + String(v).length;
  }
  if (annSize > 256 * 1024)
    out.push(fieldError('TooLong', 'metadata.annotations', 'may not be more than 262144 bytes'));
  const fins: unknown[] = meta.finalizers ?? [];
  fins.forEach((f, i) => {
    if (typeof f !== 'string')
      out.push(fieldError('Invalid', `metadata.finalizers[${i}]`, 'must be a string', f));
    else out.push(...validateQualifiedName(f, `metadata.finalizers[${i}]`));
  });
  const refs: any[] = meta.ownerReferences ?? [];
  let controllers = 0;
  refs.forEach((r, i) => {
    const f = `metadata.ownerReferences[${i}]`;
    if (!r?.apiVersion)
      out.push(fieldError('Invalid', `${f}.apiVersion`, 'version must not be empty', r?.apiVersion ?? ''));
    if (!r?.kind) out.push(fieldError('Invalid', `${f}.kind`, 'kind must not be empty', r?.kind ?? ''));
    if (!r?.name) out.push(fieldError('Invalid', `${f}.name`, 'name must not be empty', r?.name ?? ''));
    if (!r?.uid) out.push(fieldError('Invalid', `${f}.uid`, 'uid must not be empty', r?.uid ?? ''));
    if (r?.controller) controllers++;
  });
  if (controllers > 1) {
    out.push(
      fieldError(
        'Invalid',
        'metadata.ownerReferences',
        'Only one reference can have Controller set to true',
        refs,
      ),
    );
  }
  return out;
}
