/**
 * baremetal-operator simulator stages (kwok "stages" style, pure): given a host, the next change
 * the operator would make and after how long. Test and dev only; never imported by product code.
 *
 *   ''/registering --register--> available (hardware nics + hostname, poweredOn false)
 *   available|ready + image + consumerRef --provision--> provisioning --provisioned--> provisioned
 *   provisioning|provisioned without image --deprovision--> deprovisioning --deprovisioned--> available
 *   poweredOn follows spec.online in stable states
 */
import type { KubeObject } from '../../../shared/kube/types.ts';

export interface BmoDelays {
  registeringMs?: number;
  provisioningMs?: number;
  deprovisioningMs?: number;
  powerMs?: number;
}

export type StageName =
  | 'register'
  | 'provision'
  | 'provisioned'
  | 'provision-error'
  | 'deprovision'
  | 'deprovisioned'
  | 'power';

export interface Stage {
  name: StageName;
  delayMs: number;
  /** Mutates the host's status in place. */
  apply(h: KubeObject): void;
}

type Status = {
  provisioning?: { state?: string; image?: unknown };
  poweredOn?: boolean;
  errorMessage?: string;
  errorType?: string;
  operationalStatus?: string;
  hardware?: { hostname?: string; nics?: { name?: string; mac?: string; ip?: string }[] };
  [k: string]: unknown;
};
type Spec = {
  image?: { url?: string };
  customDeploy?: { method?: string };
  consumerRef?: unknown;
  online?: boolean;
  bootMACAddress?: string;
};

const statusOf = (h: KubeObject): Status => (h.status ?? {}) as Status;
const specOf = (h: KubeObject): Spec => (h.spec ?? {}) as Spec;
export const simState = (h: KubeObject): string => statusOf(h).provisioning?.state ?? '';
const wantsImage = (h: KubeObject): boolean =>
  Boolean(specOf(h).image?.url || specOf(h).customDeploy?.method);
const STABLE = new Set(['available', 'ready', 'provisioned', 'externally provisioned']);

function setState(h: KubeObject, state: string): Status {
  h.status ??= {};
  const s = h.status as Status;
  s.provisioning = { ...(s.provisioning ?? {}), state };
  return s;
}

/** Default hardware for a host: one NIC with the boot MAC and an address derived from it. */
export function defaultHardware(h: KubeObject): NonNullable<Status['hardware']> {
  const mac = specOf(h).bootMACAddress ?? '00:00:00:00:00:01';
  const last = Number.parseInt(mac.split(':').pop() ?? '1', 16) || 1;
  const prev = Number.parseInt(mac.split(':').at(-2) ?? '0', 16) || 0;
  return {
    hostname: h.metadata.name!,
    nics: [{ name: 'eth0', mac, ip: `192.168.${111 + (prev % 100)}.${(last % 250) + 2}` }],
  };
}

/**
 * The next stage for a host, or undefined when it is at rest. `fail` decides whether a
 * provisioning run ends in an error (error injection).
 */
export function nextStage(h: KubeObject, delays: BmoDelays = {}, fail = false): Stage | undefined {
  if (h.metadata.deletionTimestamp) return undefined;
  const state = simState(h);
  const st = statusOf(h);
  const online = specOf(h).online ?? false;
  if (state === '' || state === 'registering') {
    return {
      name: 'register',
      delayMs: delays.registeringMs ?? 0,
      apply(x) {
        const s = setState(x, 'available');
        s.hardware ??= defaultHardware(x);
        s.poweredOn = false;
        s.errorMessage = '';
        s.operationalStatus = 'OK';
      },
    };
  }
  if ((state === 'available' || state === 'ready') && wantsImage(h) && specOf(h).consumerRef) {
    return { name: 'provision', delayMs: 0, apply: (x) => void setState(x, 'provisioning') };
  }
  if (state === 'provisioning' && wantsImage(h) && !st.errorMessage) {
    if (fail) {
      return {
        name: 'provision-error',
        delayMs: delays.provisioningMs ?? 0,
        apply(x) {
          const s = statusOf(x);
          s.errorMessage = 'simulated provisioning failure: image write failed';
          s.errorType = 'provisioning error';
          s.operationalStatus = 'error';
        },
      };
    }
    return {
      name: 'provisioned',
      delayMs: delays.provisioningMs ?? 0,
      apply(x) {
        const s = setState(x, 'provisioned');
        s.poweredOn = specOf(x).online ?? false;
      },
    };
  }
  if ((state === 'provisioning' || state === 'provisioned') && !wantsImage(h)) {
    return { name: 'deprovision', delayMs: 0, apply: (x) => void setState(x, 'deprovisioning') };
  }
  if (state === 'deprovisioning') {
    return {
      name: 'deprovisioned',
      delayMs: delays.deprovisioningMs ?? 0,
      apply(x) {
        const s = setState(x, 'available');
        s.poweredOn = specOf(x).online ?? false;
        s.errorMessage = '';
        delete s.errorType;
        s.operationalStatus = 'OK';
      },
    };
  }
  if (STABLE.has(state) && (st.poweredOn ?? false) !== online) {
    return {
      name: 'power',
      delayMs: delays.powerMs ?? 0,
      apply(x) {
        statusOf(x).poweredOn = specOf(x).online ?? false;
      },
    };
  }
  return undefined;
}

/**
 * meta_data as the real baremetal-operator builds it for the config drive: defaults from the host,
 * then the metaData secret's map (key `metaData`, fallback `value`, YAML or JSON) laid on top.
 */
export function buildMetaData(
  h: KubeObject,
  secretData: Record<string, unknown> | undefined,
): Record<string, string> {
  const meta: Record<string, string> = {
    uuid: h.metadata.uid ?? '',
    'metal3-namespace': h.metadata.namespace ?? '',
    'metal3-name': h.metadata.name ?? '',
    'local-hostname': h.metadata.name ?? '',
    local_hostname: h.metadata.name ?? '',
    name: h.metadata.name ?? '',
  };
  for (const [k, v] of Object.entries(secretData ?? {}))
    if (v !== null && v !== undefined) meta[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return meta;
}
