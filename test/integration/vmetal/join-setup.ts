/**
 * Tenant clusters and provisioned claims for the join tests: embedded tenant API servers (TLS, so
 * they publish cluster-info, and RBAC enforced), real bootstrap-token Secrets in their kube-system,
 * and a claim holding a provisioned host whose user data is what renderData writes (composeUserData
 * of buildJoin), in `<claim>-user-data`.
 */
import { afterAll, beforeAll } from 'vitest';
import { type KubeletSimulator, startKubeletSimulator } from '../../../infra/local/sim/kubelet.ts';
import { type EmbeddedCluster, EmbeddedClusters } from '../../../infra/local/workload/embedded.ts';
import { R } from '../../../shared/api/resources.ts';
import type { NodeClaim } from '../../../shared/api/vmetal/nodeclaim.ts';
import {
  CONSUMER_LABEL,
  NODE_CLAIM_LABEL,
  VMETAL_CLAIM_UID_LABEL,
  VMETAL_HOST_ANNOTATION,
} from '../../../shared/api/wellknown.ts';
import { consumerLabelValue } from '../../../shared/hosts/consumer.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { WorkloadClusterUnavailableError } from '../../../shared/kube/workload.ts';
import { createLogger } from '../../../shared/observability/logger.ts';
import type { ReconcileContext } from '../../../shared/reconcile/context.ts';
import { buildJoin, type Taint } from '../../../shared/vmetal/join.ts';
import { composeUserData, defaultUserData } from '../../../shared/vmetal/userdata.ts';
import { clusterContext } from '../../helpers/context.ts';
import { createHosts, HOST_NS, PROJECT_NS } from './setup.ts';

/** Tenant API servers, stopped after the file's tests. */
export function useTenants(): EmbeddedClusters {
  const clusters = new EmbeddedClusters({ serverOptions: () => ({ tls: true, rbac: { tokens: {} } }) });
  afterAll(() => clusters.stopAll());
  return clusters;
}

/** A context whose workloadClient reaches the running tenants (others are unavailable, as without their Secret). */
export function tenantContext(client: KubeClient, clusters: EmbeddedClusters): ReconcileContext {
  return {
    ...clusterContext(client),
    workloadClient: async (ns, name) => {
      const c = clusters.lookup(ns, name);
      if (!c) throw new WorkloadClusterUnavailableError('SecretNotFound', ns, name, 'Secret not found');
      return c.admin;
    },
  };
}

/** Creates `kube-system/bootstrap-token-<id>` as kubeadm does (signing + authentication usages). */
export async function bootstrapToken(
  tenant: KubeClient,
  token: string,
  opts: { expiration?: string; authentication?: boolean } = {},
): Promise<void> {
  const [id, secret] = token.split('.') as [string, string];
  await tenant.create(R.Secret, {
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    stringData: {
      'token-id': id,
      'token-secret': secret,
      'usage-bootstrap-signing': 'true',
      ...(opts.authentication === false ? {} : { 'usage-bootstrap-authentication': 'true' }),
      'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
      ...(opts.expiration ? { expiration: opts.expiration } : {}),
    },
  });
}

export interface ClaimHostOptions {
  claim: string;
  nodeType: string;
  /** The tenant's URL and CA pin; the token written into the join line. */
  endpoint: string;
  caCertHash: string;
  token: string;
  taints?: Taint[];
  /** User data base (default: the generated cloud-config). */
  base?: string;
  ip?: string;
  state?: string;
  vClusterRef?: string;
}

/** The user data renderData writes for the claim: its join (and kubelet flags) into the base. */
export function renderedUserData(o: ClaimHostOptions): string {
  const plan = buildJoin({
    endpoint: o.endpoint,
    token: o.token,
    caCertHash: o.caCertHash,
    nodeName: o.claim,
    nodeLabels: { 'vcluster.com/node-type': o.nodeType, 'kubernetes.io/os': 'linux' },
    taints: o.taints,
  });
  return composeUserData(o.base ?? defaultUserData(o.claim), plan, [], 'user data');
}

/**
 * A claim (status as selectHost leaves it: Scheduled, host named) holding a fresh host with its
 * rendered user data; the host in `state` (default provisioned).
 */
export async function claimWithHost(
  client: KubeClient,
  o: ClaimHostOptions,
): Promise<{ claim: NodeClaim; host: string }> {
  const claim = await client.create(R.NodeClaim, {
    metadata: { name: o.claim, namespace: PROJECT_NS },
    spec: { typeRef: o.nodeType, vClusterRef: o.vClusterRef ?? 'tenant-a' },
  });
  const [host] = await createHosts(client, `h-${o.claim}`, 1, () => ({ pool: `join-${o.claim}` }));
  const hostName = host!.metadata.name!;
  await client.replaceStatus(R.NodeClaim, {
    ...claim,
    status: {
      phase: 'Pending',
      nodeType: o.nodeType,
      host: hostName,
      hostNamespace: HOST_NS,
      conditions: [
        {
          type: 'Scheduled',
          status: 'True',
          lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        },
      ],
    },
  });
  const userData = renderedUserData(o);
  await client.create(R.Secret, {
    metadata: {
      name: `${o.claim}-user-data`,
      namespace: HOST_NS,
      labels: { [VMETAL_CLAIM_UID_LABEL]: claim.metadata.uid! },
    },
    data: { userData: Buffer.from(userData).toString('base64') },
  });
  const fresh = (await client.get(R.BareMetalHost, HOST_NS, hostName))!;
  await client.replace(R.BareMetalHost, {
    ...fresh,
    metadata: {
      ...fresh.metadata,
      // What selectHost's takeHost writes: the consumer label and the node-claim label.
      labels: {
        ...fresh.metadata.labels,
        [CONSUMER_LABEL]: consumerLabelValue(o.claim),
        [NODE_CLAIM_LABEL]: claim.metadata.uid!,
      },
      annotations: {
        ...fresh.metadata.annotations,
        ...(o.ip ? { [VMETAL_HOST_ANNOTATION.ipAddress]: `${o.ip}/24` } : {}),
      },
    },
    spec: {
      ...fresh.spec,
      consumerRef: {
        apiVersion: 'vmetal.metal3fn.io/v1alpha1',
        kind: 'NodeClaim',
        name: o.claim,
        namespace: PROJECT_NS,
      },
      userData: { name: `${o.claim}-user-data`, namespace: HOST_NS },
      online: true,
    },
  });
  await setHostState(client, hostName, o.state ?? 'provisioned');
  return { claim, host: hostName };
}

/** Sets the host's provisioning state (and other status fields), as baremetal-operator reports it. */
export async function setHostState(
  client: KubeClient,
  host: string,
  state: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const fresh = (await client.get(R.BareMetalHost, HOST_NS, host))!;
  await client.replaceStatus(R.BareMetalHost, {
    ...fresh,
    status: { ...fresh.status, ...extra, provisioning: { ...fresh.status?.provisioning, state } },
  });
}

/** The token the tenant of useJoinEnv accepts. */
export const TOKEN = 'abcdef.0123456789abcdef';

export interface JoinEnv {
  tenant: EmbeddedCluster;
  /** A context reaching the running tenants. */
  ctx: ReconcileContext;
  /** The kubelet simulator's log lines (JSON), when it runs. */
  lines: Record<string, unknown>[];
  /** Options for claimWithHost: type gpu, the tenant's endpoint and pin, TOKEN. */
  opts(claim: string, over?: Partial<ClaimHostOptions>): ClaimHostOptions;
  /** Resolves when the simulator handled every host event seen so far. */
  idle(): Promise<void>;
}

/**
 * Tenant `tenant-a` of the project namespace with TOKEN in its kube-system, a context reaching it,
 * and (with `sim`) the kubelet simulator on the management cluster's hosts; filled in by beforeAll.
 */
export function useJoinEnv(management: () => KubeClient, o: { sim?: boolean } = {}): JoinEnv {
  const tenants = useTenants();
  const env = { lines: [], idle: async () => sim?.idle() } as Partial<JoinEnv> as JoinEnv;
  let sim: KubeletSimulator | undefined;
  beforeAll(async () => {
    const tenant = await tenants.ensure(PROJECT_NS, 'tenant-a');
    await bootstrapToken(tenant.admin, TOKEN);
    env.tenant = tenant;
    env.ctx = tenantContext(management(), tenants);
    env.opts = (claim, over = {}) => ({
      claim,
      nodeType: 'gpu',
      endpoint: tenant.server.url,
      caCertHash: tenant.server.auth.caCertHash(),
      token: TOKEN,
      ...over,
    });
    if (!o.sim) return;
    sim = startKubeletSimulator({
      management: management(),
      workloadClient: async (ns, c) => tenants.lookup(ns, c)!.admin,
      namespace: HOST_NS,
      log: createLogger({
        level: 'info',
        write: (l) => env.lines.push(JSON.parse(l) as Record<string, unknown>),
      }),
    });
    await sim.ready;
  }, 30_000);
  afterAll(() => sim?.stop());
  return env;
}
