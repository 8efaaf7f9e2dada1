/**
 * What a NodeClaim's properties name, read from the cluster and checked (issue 19, Behaviour 9):
 * its network, image, SSH keys and the user-data / network-data sources with their template text.
 * Needs no host, so selectHost checks it all before claiming one and renderData uses it to render.
 * A missing object is a wait naming it; bad content is bad input naming the field.
 */
import { R } from '../api/resources.ts';
import type { NodeClaim } from '../api/vmetal/nodeclaim.ts';
import type { ObjectReader } from '../kube/client.ts';
import type { KubeObject } from '../kube/types.ts';
import { type HostImage, imageOfOSImage, resolveImageSource } from './image.ts';
import { parseNetwork, type VMetalNetwork } from './network.ts';
import {
  type DataSource,
  resolveNetworkDataSource,
  resolveUserDataSource,
  templateOfMachineConfigTemplate,
  templateOfSecret,
} from './sources.ts';
import { sshKeyNames, sshPublicKeys } from './userdata.ts';

export interface ResolvedSource {
  source: DataSource;
  /** The template text, for the template sources. */
  template?: string | undefined;
}

export interface ClaimInputs {
  network: VMetalNetwork | undefined;
  image: HostImage;
  sshKeys: string[];
  userData: ResolvedSource;
  networkData: ResolvedSource;
}

async function templateText(client: ObjectReader, source: DataSource): Promise<string | undefined> {
  switch (source.kind) {
    case 'machineConfigTemplate':
      return templateOfMachineConfigTemplate(
        source,
        await client.get(R.MachineConfigTemplate, undefined, source.name),
      );
    case 'secretTemplate':
      return templateOfSecret(source, await client.get(R.Secret, source.namespace, source.name));
    case 'inlineTemplate':
      return source.template;
    default:
      return undefined;
  }
}

export async function loadClaimInputs(
  client: ObjectReader,
  claim: NodeClaim,
  props: Readonly<Record<string, string>>,
): Promise<ClaimInputs> {
  const namespace = claim.metadata.namespace!;
  const network = parseNetwork(props);
  const imageSource = resolveImageSource(props);
  const image =
    imageSource.kind === 'osImage'
      ? imageOfOSImage(imageSource.name, await client.get(R.OSImage, undefined, imageSource.name))
      : imageSource.image;
  const keys = new Map<string, KubeObject | undefined>();
  for (const name of sshKeyNames(props)) keys.set(name, await client.get(R.SSHKey, undefined, name));
  const sshKeys = sshPublicKeys([...keys.keys()], (name) => keys.get(name));
  const userSource = resolveUserDataSource(props, namespace);
  const networkSource = resolveNetworkDataSource(props, namespace);
  return {
    network,
    image,
    sshKeys,
    userData: { source: userSource, template: await templateText(client, userSource) },
    networkData: { source: networkSource, template: await templateText(client, networkSource) },
  };
}
