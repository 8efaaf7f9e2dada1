/**
 * ProviderID formats (seed 000): the generated `metal3://<namespace>/<bmh-name>/<m3m-name>` and the
 * legacy `metal3://<bmh-uid>`, which is accepted where a Node or machine already carries it and
 * refused with `--legacy-provider-ids=refuse` (the v1.14 behaviour). Pure functions only.
 */
export const PROVIDER_ID_SCHEME = 'metal3://';

export type ParsedProviderID =
  | { format: 'empty' }
  | { format: 'new'; namespace: string; host: string; machine: string }
  | { format: 'legacy'; uid: string }
  | { format: 'unsupported'; raw: string };

export const newProviderID = (namespace: string, host: string, machine: string): string =>
  `${PROVIDER_ID_SCHEME}${namespace}/${host}/${machine}`;

export const legacyProviderID = (hostUid: string): string => `${PROVIDER_ID_SCHEME}${hostUid}`;

/** `metal3://<ns>/<bmh>/`: every new-format ID ever generated for this host starts with it. */
export const hostProviderIDPrefix = (namespace: string, host: string): string =>
  `${PROVIDER_ID_SCHEME}${namespace}/${host}/`;

const SEGMENT = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const UID = /^[A-Za-z0-9][-A-Za-z0-9]*$/;

/** Classifies a providerID; anything that is not one of the two metal3 formats is `unsupported`. */
export function parseProviderID(id: string | undefined | null): ParsedProviderID {
  if (!id) return { format: 'empty' };
  if (!id.startsWith(PROVIDER_ID_SCHEME)) return { format: 'unsupported', raw: id };
  const rest = id.slice(PROVIDER_ID_SCHEME.length);
  if (rest.includes('/')) {
    const parts = rest.split('/');
    if (parts.length === 3 && parts.every((p) => SEGMENT.test(p))) {
      return { format: 'new', namespace: parts[0]!, host: parts[1]!, machine: parts[2]! };
    }
    return { format: 'unsupported', raw: id };
  }
  return UID.test(rest) ? { format: 'legacy', uid: rest } : { format: 'unsupported', raw: id };
}

export const isLegacyProviderID = (id: string | undefined): boolean =>
  parseProviderID(id).format === 'legacy';
