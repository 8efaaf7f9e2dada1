/**
 * The Secret values. baremetal-operator YAML-parses them (Go, YAML 1.1 rules), so we write YAML
 * 1.1 with every ambiguous string double-quoted: metaData values stay strings (`index: "2"`,
 * `"on": "yes"`, `""`), mtu and vlan_id stay integers. Keys are sorted and nothing is folded or
 * aliased, so equal data gives byte-identical Secrets (idempotent writes).
 */
import { stringify } from 'yaml';
import type { MetaData } from './metadata.ts';
import type { NetworkData } from './networkdata.ts';

const OPTIONS = {
  version: '1.1',
  sortMapEntries: true,
  lineWidth: 0,
  aliasDuplicateObjects: false,
} as const;

export function toSecretYaml(value: unknown): string {
  return stringify(value, OPTIONS);
}

export function serializeMetaData(metaData: MetaData): string {
  return toSecretYaml(metaData);
}

export function serializeNetworkData(networkData: NetworkData): string {
  return toSecretYaml(networkData);
}
