/**
 * Where a claim's user data and network data come from (issue 19, Behaviours 4 and 5), as a
 * description the reconciler acts on (it does the reads and the rendering):
 *
 *   user data:    `vcluster.com/user-data` (used as is) > `vcluster.com/user-data-template-config`
 *                 (MachineConfigTemplate `spec.cloudInitTemplate`) > `vcluster.com/user-data-template`
 *                 (inline Go template) > `vcluster.com/user-data-template-secret` (Secret key
 *                 `template`, label `vcluster.com/user-data-template-type: cloud-config`) > generated
 *   network data: `metal3.vcluster.com/network-data` (used as is) > `vcluster.com/network-data-template-config`
 *                 (`spec.networkDataTemplate`) > `vcluster.com/network-data-template` >
 *                 `vcluster.com/network-data-template-secret` (label value `network-data`) > generated
 *
 * A property set to "" counts as unset. A template Secret is named `name` (the claim's namespace)
 * or `namespace/name`.
 */

import { fieldOf, stringOf } from '../api/json.ts';
import type { KubeObject } from '../kube/types.ts';
import { missingObject, propertyError, VMetalInputError, VMetalWait } from './errors.ts';
import { PROP, TEMPLATE_SECRET_KEY, TEMPLATE_TYPE_LABEL } from './names.ts';

export type TemplateField = 'cloudInitTemplate' | 'networkDataTemplate';
export type TemplateType = 'cloud-config' | 'network-data';

export type DataSource =
  /** The property's value is the data itself. */
  | { kind: 'literal'; property: string; text: string }
  /** Render `spec.<field>` of the (cluster-scoped) MachineConfigTemplate `name`. */
  | { kind: 'machineConfigTemplate'; property: string; name: string; field: TemplateField }
  /** Render the property's value. */
  | { kind: 'inlineTemplate'; property: string; template: string }
  /** Render key `template` of Secret `namespace/name`, which must carry the template-type label. */
  | { kind: 'secretTemplate'; property: string; namespace: string; name: string; templateType: TemplateType }
  /** Nothing set: the generated default. */
  | { kind: 'generated' };

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

function secretRef(
  property: string,
  value: string,
  claimNamespace: string,
): { namespace: string; name: string } {
  const parts = value.trim().split('/');
  const [namespace, name] = parts.length === 2 ? parts : [claimNamespace, parts[0]];
  if (parts.length > 2 || !DNS_LABEL.test(namespace ?? '') || !DNS_SUBDOMAIN.test(name ?? '')) {
    throw propertyError(property, `${JSON.stringify(value)} is not a Secret name or <namespace>/<name>`);
  }
  return { namespace: namespace!, name: name! };
}

function resolve(
  props: Readonly<Record<string, string>>,
  claimNamespace: string,
  keys: { literal: string; config: string; inline: string; secret: string },
  field: TemplateField,
  templateType: TemplateType,
): DataSource {
  const get = (k: string) => (props[k] ? props[k] : undefined);
  const literal = get(keys.literal);
  if (literal !== undefined) return { kind: 'literal', property: keys.literal, text: literal };
  const config = get(keys.config);
  if (config !== undefined) {
    if (!DNS_SUBDOMAIN.test(config.trim())) {
      throw propertyError(keys.config, `${JSON.stringify(config)} is not a MachineConfigTemplate name`);
    }
    return { kind: 'machineConfigTemplate', property: keys.config, name: config.trim(), field };
  }
  const inline = get(keys.inline);
  if (inline !== undefined) return { kind: 'inlineTemplate', property: keys.inline, template: inline };
  const secret = get(keys.secret);
  if (secret !== undefined) {
    return {
      kind: 'secretTemplate',
      property: keys.secret,
      ...secretRef(keys.secret, secret, claimNamespace),
      templateType,
    };
  }
  return { kind: 'generated' };
}

export function resolveUserDataSource(
  props: Readonly<Record<string, string>>,
  claimNamespace: string,
): DataSource {
  return resolve(
    props,
    claimNamespace,
    {
      literal: PROP.userData,
      config: PROP.userDataTemplateConfig,
      inline: PROP.userDataTemplate,
      secret: PROP.userDataTemplateSecret,
    },
    'cloudInitTemplate',
    'cloud-config',
  );
}

export function resolveNetworkDataSource(
  props: Readonly<Record<string, string>>,
  claimNamespace: string,
): DataSource {
  return resolve(
    props,
    claimNamespace,
    {
      literal: PROP.networkData,
      config: PROP.networkDataTemplateConfig,
      inline: PROP.networkDataTemplate,
      secret: PROP.networkDataTemplateSecret,
    },
    'networkDataTemplate',
    'network-data',
  );
}

/**
 * The template text of a MachineConfigTemplate source; `mct` is what the read returned (undefined
 * when not found: a wait). An empty or absent field is bad input.
 */
export function templateOfMachineConfigTemplate(
  source: Extract<DataSource, { kind: 'machineConfigTemplate' }>,
  mct: KubeObject | undefined,
): string {
  if (!mct) {
    throw missingObject(
      'TemplateNotFound',
      { kind: 'MachineConfigTemplate', name: source.name },
      ` (${source.property})`,
    );
  }
  const text = fieldOf(mct.spec, source.field);
  if (typeof text !== 'string' || text === '') {
    throw new VMetalInputError(
      `MachineConfigTemplate ${source.name} spec.${source.field}`,
      `is empty (named by ${source.property})`,
    );
  }
  return text;
}

/**
 * The template text of a Secret source; `secret` is what the read returned (undefined when not
 * found). A Secret without the template-type label is not a template Secret: the claim waits
 * until it is labelled (the label is how an administrator allows a Secret to be used).
 */
export function templateOfSecret(
  source: Extract<DataSource, { kind: 'secretTemplate' }>,
  secret: KubeObject | undefined,
): string {
  const object = { kind: 'Secret', namespace: source.namespace, name: source.name };
  if (!secret) throw missingObject('TemplateSecretNotFound', object, ` (${source.property})`);
  const label = secret.metadata.labels?.[TEMPLATE_TYPE_LABEL];
  if (label !== source.templateType) {
    throw new VMetalWait(
      'TemplateSecretNotFound',
      `Secret ${source.namespace}/${source.name} (${source.property}) is not labelled ${TEMPLATE_TYPE_LABEL}=${source.templateType}`,
      object,
    );
  }
  const stringData = stringOf(fieldOf(secret.stringData, TEMPLATE_SECRET_KEY));
  const data = stringOf(fieldOf(secret.data, TEMPLATE_SECRET_KEY));
  const text = stringData ?? (data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8'));
  if (text === undefined || text === '') {
    throw new VMetalInputError(
      `Secret ${source.namespace}/${source.name} data.${TEMPLATE_SECRET_KEY}`,
      `is missing or empty (named by ${source.property})`,
    );
  }
  return text;
}
