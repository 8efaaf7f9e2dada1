/**
 * User data (issue 19, Behaviour 4), pure: whatever source the claim's user data came from (see
 * sources.ts), the join and the SSH keys of `vcluster.com/ssh-keys` are ALWAYS added:
 *
 * - `#cloud-config` user data: merged as cloud-init merges with
 *   `list(append)+dict(no_replace,recurse_list)+str()`: lists concatenate with the user's entries
 *   first (`runcmd`, `write_files`, `ssh_authorized_keys`), maps merge, the user's scalar wins. A
 *   user value of a key we add that is not a list is refused (cloud-init would drop the join).
 * - any other user data (a shell script, a jinja template, a MIME message, ...): a MIME multipart
 *   message, the user's part first, ours a `text/cloud-config` part carrying that same Merge-Type
 *   header; the boundary is derived from the content (same input, same bytes).
 */
import { createHash } from 'node:crypto';
import { parse, YAMLParseError } from 'yaml';
import { fieldOf, listOf } from '../api/json.ts';
import type { KubeObject } from '../kube/types.ts';
import { toSecretYaml } from '../render/serialize.ts';
import { missingObject, propertyError, VMetalInputError } from './errors.ts';
import type { JoinPlan } from './join.ts';
import { PROP } from './names.ts';

export const CLOUD_CONFIG_HEADER = '#cloud-config';
/** How our part merges into the user's (cloud-init's Merge-Type syntax). */
export const MERGE_TYPE = 'list(append)+dict(no_replace,recurse_list)+str()';

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const PUBLIC_KEY =
  /^(ssh-(rsa|dss|ed25519)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) [A-Za-z0-9+/]+={0,3}( [^\r\n]*)?$/;

/** The SSHKey names of `vcluster.com/ssh-keys` (comma-separated), in order, without repeats. */
export function sshKeyNames(props: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  for (const raw of (props[PROP.sshKeys] ?? '').split(',')) {
    const name = raw.trim();
    if (name === '') continue;
    if (!DNS_SUBDOMAIN.test(name))
      throw propertyError(PROP.sshKeys, `${JSON.stringify(name)} is not an SSHKey name`);
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

/**
 * The public keys of the named SSHKeys (cluster-scoped; `lookup` returns undefined when one does
 * not exist: a wait naming it). A key that is not one OpenSSH public key line is bad input.
 */
export function sshPublicKeys(
  names: readonly string[],
  lookup: (name: string) => KubeObject | undefined,
): string[] {
  const out: string[] = [];
  for (const name of names) {
    const key = lookup(name);
    if (!key) throw missingObject('SSHKeyNotFound', { kind: 'SSHKey', name }, ` (${PROP.sshKeys})`);
    const text = fieldOf(key.spec, 'publicKey');
    const line = typeof text === 'string' ? text.trim() : '';
    if (!PUBLIC_KEY.test(line)) {
      throw new VMetalInputError(
        `SSHKey ${name} spec.publicKey`,
        'is not one OpenSSH public key line (e.g. ssh-ed25519 AAAA... comment)',
      );
    }
    if (!out.includes(line)) out.push(line);
  }
  return out;
}

/** The user data when no source is set: a cloud-config naming the host after the claim. */
export function defaultUserData(claimName: string): string {
  return `${CLOUD_CONFIG_HEADER}\n${toSecretYaml({ hostname: claimName })}`;
}

/** What we add, as a cloud-config mapping. */
export function additionsCloudConfig(join: JoinPlan, sshKeys: readonly string[]): Record<string, unknown> {
  return {
    ...(sshKeys.length > 0 ? { ssh_authorized_keys: [...sshKeys] } : {}),
    write_files: join.kubeletEnvFiles.map((f) => ({
      path: f.path,
      owner: 'root:root',
      permissions: '0644',
      content: f.content,
    })),
    runcmd: [join.command],
  };
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * cloud-init's `list(append)+dict(no_replace,recurse_list)+str()` of `ours` into `user`: keys only
 * ours are added, lists concatenate (user's first), maps merge, otherwise the user's value stays.
 * A user `null` counts as absent. `required` keys must be lists in the user's data (else refused).
 */
export function mergeCloudConfig(
  user: Record<string, unknown>,
  ours: Record<string, unknown>,
  field: string,
  required: readonly string[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...user };
  for (const [k, mine] of Object.entries(ours)) {
    const theirs = out[k];
    if (theirs === undefined || theirs === null) out[k] = mine;
    else if (Array.isArray(theirs) && Array.isArray(mine)) out[k] = [...listOf(theirs), ...listOf(mine)];
    else if (isMap(theirs) && isMap(mine)) out[k] = mergeCloudConfig(theirs, mine, field);
    else if (required.includes(k)) {
      throw new VMetalInputError(field, `${k} must be a list (the join and SSH keys are added to it)`);
    }
  }
  return out;
}

/** cloud-init's content types by the first bytes of a part (longest prefix first). */
const PART_TYPES: readonly [string, string][] = [
  ['#cloud-config-archive', 'text/cloud-config-archive'],
  ['#cloud-config-jsonp', 'text/cloud-config-jsonp'],
  ['#cloud-boothook', 'text/cloud-boothook'],
  ['#include-once', 'text/x-include-once-url'],
  ['#include', 'text/x-include-url'],
  ['#part-handler', 'text/part-handler'],
  ['#upstart-job', 'text/upstart-job'],
  ['## template: jinja', 'text/jinja2'],
  ['#!', 'text/x-shellscript'],
];

const firstLine = (text: string): string => (text.split('\n', 1)[0] ?? '').replace(/\r$/, '').trimEnd();

/** Whether cloud-init reads the text as a MIME message (its own test: `mime-version:` near the top). */
const isMime = (text: string): boolean => text.slice(0, 4096).toLowerCase().includes('mime-version:');

/** One MIME part's headers and body; non-ASCII bodies go base64 (cloud-init decodes the payload). */
function mimePart(contentType: string, filename: string, body: string, extra: string[] = []): string {
  const ascii = !/[^\x20-\x7e\t\r\n]/.test(body);
  const encoded = ascii
    ? body
    : (
        Buffer.from(body, 'utf8')
          .toString('base64')
          .match(/.{1,76}/g) ?? []
      ).join('\n');
  return [
    `Content-Type: ${contentType}; charset="utf-8"`,
    'MIME-Version: 1.0',
    `Content-Transfer-Encoding: ${ascii ? '7bit' : 'base64'}`,
    `Content-Disposition: attachment; filename="${filename}"`,
    ...extra,
    '',
    encoded,
  ].join('\n');
}

function multipart(parts: string[]): string {
  const digest = createHash('sha256');
  for (const p of parts) digest.update(p).update('\0');
  const hash = digest.digest('hex');
  let boundary = `==vmetal-${hash.slice(0, 24)}==`;
  for (let n = 1; parts.some((p) => p.includes(boundary)); n++)
    boundary = `==vmetal-${hash.slice(0, 24)}-${n}==`;
  return [
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    'MIME-Version: 1.0',
    '',
    ...parts.map((p) => `--${boundary}\n${p}`),
    `--${boundary}--`,
    '',
  ].join('\n');
}

function parseCloudConfig(text: string, field: string): Record<string, unknown> {
  let value: unknown;
  try {
    // YAML 1.1: what cloud-init's PyYAML reads (yes/no booleans, 0644 octal).
    value = parse(text, { version: '1.1', uniqueKeys: true, merge: true });
  } catch (e) {
    if (e instanceof YAMLParseError)
      throw new VMetalInputError(field, `is #cloud-config but not YAML: ${e.message.split('\n')[0]}`);
    throw e;
  }
  if (value === null || value === undefined) return {};
  if (!isMap(value)) throw new VMetalInputError(field, 'is #cloud-config but not a YAML mapping');
  return value;
}

/**
 * The final user data: `base` (the resolved user data; `field` names its source in errors) with
 * the join and the SSH keys added.
 */
export function composeUserData(
  base: string,
  join: JoinPlan,
  sshKeys: readonly string[],
  field: string,
): string {
  const ours = additionsCloudConfig(join, sshKeys);
  if (base.trim() === '' || firstLine(base) === CLOUD_CONFIG_HEADER) {
    const merged = mergeCloudConfig(parseCloudConfig(base, field), ours, field, Object.keys(ours));
    return `${CLOUD_CONFIG_HEADER}\n${toSecretYaml(merged)}`;
  }
  const ourPart = mimePart(
    'text/cloud-config',
    'vmetal-join.cfg',
    `${CLOUD_CONFIG_HEADER}\n${toSecretYaml(ours)}`,
    [`Merge-Type: ${MERGE_TYPE}`],
  );
  if (isMime(base)) return multipart([base, ourPart]);
  const type = PART_TYPES.find(([prefix]) => base.startsWith(prefix))?.[1];
  if (!type) {
    throw new VMetalInputError(
      field,
      `is not user data cloud-init reads: start it with #cloud-config, #! (a script), ## template: jinja, #include, #cloud-boothook or a MIME header (it starts with ${JSON.stringify(firstLine(base).slice(0, 40))})`,
    );
  }
  return multipart([mimePart(type, 'user-data', base), ourPart]);
}
