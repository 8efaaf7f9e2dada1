/**
 * The conformance suite: one list of cases, run against the embedded server (embedded.test.ts)
 * and against a real cluster when a kubeconfig is given (real-cluster.test.ts). Cases drive the
 * server only through client-node (our KubeClient and client-node's Watch) and kubectl.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ApiServerHandle } from '../../infra/local/apiserver/index.ts';
import type { ResourceType } from '../../shared/api/resources.ts';
import { R } from '../../shared/api/resources.ts';
import type { KubeClient, WatchEvent } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { pythonClientMissing } from '../helpers/python.ts';
import { AUTH_IDENTITY_CASES } from './cases/auth-identity.ts';
import { AUTH_TOKEN_CASES } from './cases/auth-tokens.ts';
import { BUILTIN_VALIDATION_CASES } from './cases/builtin-validation.ts';
import { CONTROLLER_CASES } from './cases/controllers.ts';
import { CRUD_CASES } from './cases/crud.ts';
import { DELETE_CASES } from './cases/delete.ts';
import { FIELD_VALIDATION_CASES } from './cases/field-validation.ts';
import { HISTORY_CASES } from './cases/history.ts';
import { KUBECTL, KUBECTL_CASES, kubectlAvailable } from './cases/kubectl.ts';
import { LIST_CASES } from './cases/list.ts';
import { PATCH_CASES } from './cases/patch.ts';
import { RATCHETING_CASES } from './cases/ratcheting.ts';
import { RESPONSE_CASES } from './cases/responses.ts';
import { SCALE_CASES } from './cases/scale.ts';
import { SSA_CASES } from './cases/ssa.ts';
import { STRATEGIC_MERGE_CASES } from './cases/strategic-merge.ts';
import { VALIDATION_CASES } from './cases/validation.ts';
import { WATCH_CASES } from './cases/watch.ts';
import { eventually, GADGET_CRD, WIDGET_CRD } from './fixtures.ts';

export interface Target {
  client: KubeClient;
  /** A kubeconfig file kubectl can use. */
  kubeconfigPath: string;
  /** Present only when the target is the embedded server (for cases that need its test hooks). */
  embedded?: ApiServerHandle;
  /** Moves the embedded server's clock forward (compaction and other time-driven behaviour, without sleeping). */
  advanceClock?: (ms: number) => void;
  /** The server's clock (the embedded one moves with advanceClock); default Date.now. */
  now?: () => number;
  teardown(): Promise<void>;
}

export interface CaseContext extends Omit<Target, 'teardown' | 'now'> {
  /** A fresh namespace for this case. */
  ns: string;
  /** The server's time: what times a case writes or verifies (token expiry) are relative to. */
  now: () => number;
}

export interface ConformanceCase {
  name: string;
  /** Set when the case needs the embedded server's hooks (fault injection, compaction, bookmarkNow). */
  embeddedOnly?: string;
  /** Clients the case drives besides client-node; it is skipped, saying why, where one is missing. */
  requires?: ('kubectl' | 'python')[];
  run(ctx: CaseContext): Promise<void>;
}

export const ALL_CASES: { area: string; cases: ConformanceCase[] }[] = [
  { area: 'crud', cases: CRUD_CASES },
  { area: 'list and selectors', cases: LIST_CASES },
  { area: 'watch', cases: WATCH_CASES },
  { area: 'history window', cases: HISTORY_CASES },
  { area: 'deletion and garbage collection', cases: DELETE_CASES },
  { area: 'controllers', cases: CONTROLLER_CASES },
  { area: 'patch', cases: PATCH_CASES },
  { area: 'server-side apply and field ownership', cases: SSA_CASES },
  { area: 'validation', cases: VALIDATION_CASES },
  { area: 'kubectl', cases: KUBECTL_CASES },
  { area: 'authentication: tokens', cases: AUTH_TOKEN_CASES },
  { area: 'authentication: identity and impersonation', cases: AUTH_IDENTITY_CASES },
  { area: 'field validation', cases: FIELD_VALIDATION_CASES },
  { area: 'built-in validation', cases: BUILTIN_VALIDATION_CASES },
  { area: 'strategic merge patch', cases: STRATEGIC_MERGE_CASES },
  { area: 'responses', cases: RESPONSE_CASES },
  { area: 'scale subresource', cases: SCALE_CASES },
  { area: 'validation ratcheting', cases: RATCHETING_CASES },
];

let nsCounter = 0;

/** Registers the whole suite with vitest against the target `setup` returns. */
export function defineConformanceSuite(title: string, setup: () => Promise<Target>): void {
  describe(title, () => {
    let target: Target;
    beforeAll(async () => {
      target = await setup();
      for (const crd of [WIDGET_CRD, GADGET_CRD]) {
        const existing = await target.client.get(R.CustomResourceDefinition, undefined, crd.metadata.name!);
        if (!existing) await target.client.create(R.CustomResourceDefinition, crd);
        await eventually(
          async () => {
            const c = await target.client.get<any>(R.CustomResourceDefinition, undefined, crd.metadata.name!);
            return c?.status?.conditions?.some((x: any) => x.type === 'Established' && x.status === 'True');
          },
          `CRD ${crd.metadata.name} established`,
          30_000,
        );
      }
    }, 60_000);
    afterAll(async () => {
      await target?.teardown();
    });
    for (const { area, cases } of ALL_CASES) {
      describe(area, () => {
        for (const c of cases) {
          it(c.name, async (testCtx) => {
            if (c.embeddedOnly && !target.embedded) {
              testCtx.skip(`embedded only: ${c.embeddedOnly}`);
              return;
            }
            if ((area === 'kubectl' || c.requires?.includes('kubectl')) && !kubectlAvailable()) {
              testCtx.skip(`kubectl not found (${KUBECTL}); set KUBECTL to its path`);
              return;
            }
            // Throws under CI=true, where .ci/run installs the client: a missing client fails there.
            const noPython = c.requires?.includes('python') ? pythonClientMissing() : undefined;
            if (noPython) {
              testCtx.skip(noPython);
              return;
            }
            const ns = `conf-${process.pid}-${++nsCounter}`;
            await target.client.create(R.Namespace, { metadata: { name: ns } });
            try {
              await c.run({
                client: target.client,
                kubeconfigPath: target.kubeconfigPath,
                embedded: target.embedded,
                advanceClock: target.advanceClock,
                now: target.now ?? Date.now,
                ns,
              });
            } finally {
              await target.client.delete(R.Namespace, undefined, ns).catch(() => undefined);
            }
          });
        }
      });
    }
  });
}

export const tempDir = (): string => mkdtempSync(join(tmpdir(), 'm3fn-conf-'));

/** A watch event as recorded (the object as the server sent it). */
export interface RecordedEvent<T extends KubeObject = KubeObject> {
  type: WatchEvent['type'];
  object: T;
}

/** A running watch that records its events. */
export interface Recorder<T extends KubeObject = KubeObject> {
  events: RecordedEvent<T>[];
  ended: Promise<unknown>;
  /** Resolves with the first event matching `pred` (from the start of the recording). */
  waitFor(
    pred: (e: RecordedEvent<T>) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<RecordedEvent<T>>;
  stop(): void;
}

export async function record<T extends KubeObject = KubeObject>(
  client: KubeClient,
  t: ResourceType,
  ns: string | undefined,
  params: Record<string, string | number | boolean | undefined>,
): Promise<Recorder<T>> {
  const events: RecordedEvent<T>[] = [];
  let endResolve!: (v: unknown) => void;
  const ended = new Promise((r) => {
    endResolve = r;
  });
  // client-node's Watch directly, so any query parameter (sendInitialEvents, ...) can be passed.
  const ctl = await new Watch(client.kc).watch(
    client.path(t, ns),
    { allowWatchBookmarks: false, ...params },
    (type, object) => events.push({ type: type as WatchEvent['type'], object }),
    (err) => endResolve(err ?? 'clean'),
  );
  return {
    events,
    ended,
    waitFor: async (pred, what, timeoutMs = 5000) =>
      (await eventually(() => events.find(pred), what, timeoutMs))!,
    stop: () => ctl.abort(),
  };
}
