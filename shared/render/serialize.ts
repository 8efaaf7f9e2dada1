/**
 * The Secret values. baremetal-operator YAML-parses them (Go), so we write YAML with every
 * ambiguous string double-quoted: metaData values stay strings (`index: "2"`, `"on": "yes"`,
 * `""`), mtu and vlan_id stay integers. "Ambiguous" covers both YAML 1.1 (yes/on/sexagesimal,
 * what Go's yaml.v2 reads) and YAML 1.2 core (`0o17`, what yaml.v3 and others read). Keys are
 * sorted and nothing is folded or aliased, so equal data gives byte-identical Secrets.
 */
import { Document, Scalar, visit } from 'yaml';
import type { MetaData } from './metadata.ts';
import type { NetworkData } from './networkdata.ts';

/** Plain scalars the YAML 1.2 core schema resolves to something other than a string. */
const YAML12_NON_STRING =
  /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

export function toSecretYaml(value: unknown): string {
  // The 1.1 schema makes the writer quote every 1.1-ambiguous string by itself.
  const doc = new Document(value, { version: '1.1', sortMapEntries: true, aliasDuplicateObjects: false });
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && YAML12_NON_STRING.test(node.value))
        node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  return doc.toString({ lineWidth: 0 });
}

export function serializeMetaData(metaData: MetaData): string {
  return toSecretYaml(metaData);
}

export function serializeNetworkData(networkData: NetworkData): string {
  return toSecretYaml(networkData);
}
