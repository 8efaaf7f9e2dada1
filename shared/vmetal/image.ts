/**
 * The host's image (issue 19, Behaviour 6), pure: `vcluster.com/os-image` names an OSImage (whose
 * `spec.properties` carry the image keys), else the `metal3.vcluster.com/image-url`, `-checksum`
 * and `-checksum-type` properties give it directly. Checked before any host is claimed.
 */

import { fieldOf, isRecord } from '../api/json.ts';
import type { KubeObject } from '../kube/types.ts';
import { missingObject, propertyField, VMetalInputError } from './errors.ts';
import { PROP } from './names.ts';

export interface HostImage {
  url: string;
  checksum: string;
  checksumType?: 'md5' | 'sha256' | 'sha512';
}

export type ImageSource = { kind: 'osImage'; name: string } | { kind: 'properties'; image: HostImage };

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const URL_FORM = /^[a-z][a-z0-9+.-]*:\/\/\S+$/i;
const CHECKSUM_TYPES = ['md5', 'sha256', 'sha512'] as const;
type ChecksumType = (typeof CHECKSUM_TYPES)[number];
const isChecksumType = (t: string): t is ChecksumType => CHECKSUM_TYPES.some((c) => c === t);
/** The string values of a map (an OSImage's properties); anything else is left out. */
const stringMapOf = (v: unknown): Record<string, string> =>
  isRecord(v)
    ? Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'))
    : {};

/** The image keys of a property map; `where` prefixes field names (`` for a claim, `OSImage x spec.` for an OSImage). */
function imageOf(props: Readonly<Record<string, string>>, where: string): HostImage {
  const field = (k: string) => `${where}${propertyField(k)}`;
  const url = (props[PROP.imageUrl] ?? '').trim();
  if (url === '') {
    if (where !== '') throw new VMetalInputError(field(PROP.imageUrl), 'is required');
    throw new VMetalInputError(
      propertyField(PROP.osImage),
      `no image: set ${PROP.osImage} (an OSImage) or ${PROP.imageUrl} and ${PROP.imageChecksum}`,
    );
  }
  if (!URL_FORM.test(url))
    throw new VMetalInputError(field(PROP.imageUrl), `${JSON.stringify(url)} is not a URL`);
  const checksum = (props[PROP.imageChecksum] ?? '').trim();
  if (checksum === '')
    throw new VMetalInputError(field(PROP.imageChecksum), `is required with ${PROP.imageUrl}`);
  const type = (props[PROP.imageChecksumType] ?? '').trim();
  if (type !== '' && !isChecksumType(type)) {
    throw new VMetalInputError(
      field(PROP.imageChecksumType),
      `${JSON.stringify(type)} is not md5, sha256 or sha512`,
    );
  }
  return { url, checksum, ...(isChecksumType(type) ? { checksumType: type } : {}) };
}

/** Where the claim's image comes from; throws VMetalInputError when neither way is set (or set badly). */
export function resolveImageSource(props: Readonly<Record<string, string>>): ImageSource {
  const name = (props[PROP.osImage] ?? '').trim();
  if (name !== '') {
    if (!DNS_SUBDOMAIN.test(name))
      throw new VMetalInputError(
        propertyField(PROP.osImage),
        `${JSON.stringify(name)} is not an OSImage name`,
      );
    return { kind: 'osImage', name };
  }
  return { kind: 'properties', image: imageOf(props, '') };
}

/** The image an OSImage describes; `osImage` is what the read returned (undefined: a wait naming it). */
export function imageOfOSImage(name: string, osImage: KubeObject | undefined): HostImage {
  if (!osImage) throw missingObject('OSImageNotFound', { kind: 'OSImage', name }, ` (${PROP.osImage})`);
  const props = stringMapOf(fieldOf(osImage.spec, 'properties'));
  return imageOf(props, `OSImage ${name} spec.`);
}
