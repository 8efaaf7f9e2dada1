/**
 * Kubernetes Events for what a user should see in `kubectl describe` / `kubectl get events`.
 * Named deterministically per object+reason so a repeat bumps `count` instead of piling up.
 */
import { createHash } from 'node:crypto';
import { messageOf } from '../api/json.ts';
import { apiVersionOf, R, resourceFor } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';
import { isAlreadyExists, isConflict } from '../kube/errors.ts';
import type { KubeObject } from '../kube/types.ts';
import type { Logger } from './logger.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventOptions {
  /**
   * Record it once: an Event already there for the same object, reason and message is left as it
   * is (no count bump). For failures recorded on every delivery of a message that cannot succeed.
   */
  once?: boolean;
}

export interface EventRecorder {
  record(
    obj: KubeObject,
    type: EventType,
    reason: string,
    message: string,
    opts?: EventOptions,
  ): Promise<void>;
}

export function createEventRecorder(client: KubeClient, component: string, log?: Logger): EventRecorder {
  return {
    async record(obj, type, reason, message, opts = {}) {
      const ns = obj.metadata.namespace ?? 'default';
      const name = `${obj.metadata.name}.${createHash('sha256')
        .update(`${obj.metadata.uid}/${type}/${reason}/${message}`)
        .digest('hex')
        .slice(0, 16)}`;
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const apiVersion =
        obj.apiVersion ?? (obj.kind ? apiVersionOf(resourceFor('', obj.kind) ?? R.Event) : '');
      try {
        try {
          await client.create(R.Event, {
            metadata: { name, namespace: ns },
            involvedObject: {
              apiVersion,
              kind: obj.kind,
              name: obj.metadata.name,
              namespace: obj.metadata.namespace,
              uid: obj.metadata.uid,
              resourceVersion: obj.metadata.resourceVersion,
            },
            type,
            reason,
            message: message.slice(0, 1024),
            source: { component },
            reportingComponent: component,
            reportingInstance: component,
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
          });
        } catch (e) {
          if (!isAlreadyExists(e)) throw e;
          if (opts.once) return;
          const existing = await client.get(R.Event, ns, name);
          if (!existing) return;
          await client.patch(R.Event, ns, name, {
            metadata: { resourceVersion: existing.metadata.resourceVersion },
            count: Number(existing.count ?? 1) + 1,
            lastTimestamp: now,
          });
        }
      } catch (e) {
        // Events are best effort: never fail a reconcile because an Event could not be written.
        if (!isConflict(e)) log?.warn('event not recorded', { reason, error: messageOf(e) });
      }
    },
  };
}

/** For tests and replays that must not write Events. */
export const noEvents: EventRecorder = { record: async () => {} };
