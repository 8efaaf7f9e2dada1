/**
 * The routing model: an event (what the relay saw), a target (an object that gets a message) and
 * a route (which function a kind's events concern, for which objects, in which FIFO group).
 */
import type { FunctionName } from '../../events/envelope.ts';
import type { KindName } from '../api/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import type { CacheView } from './cache.ts';

export type RoutingEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface RoutingEvent {
  type: RoutingEventType;
  /** The object as the event carries it (for DELETED: its last state). */
  object: KubeObject;
  /** The previous state the relay saw, when it has one: lets routes react to changes only. */
  old?: KubeObject | undefined;
  /** A periodic re-list of an object that did not change. */
  resync?: boolean | undefined;
  /** `management` (default) or `<namespace>/<cluster>` for workload-cluster objects (Nodes). */
  cluster?: string | undefined;
  /** When the event was observed (ms since epoch): its messages carry it as `observedAt`. */
  observedAt?: number | undefined;
}

export interface Target {
  kind: KindName;
  object: KubeObject;
}

export interface Route {
  /** What the route does, in words (tests and docs name routes by it). */
  name: string;
  on: KindName;
  /** Where `on` lives (default management). */
  scope?: 'management' | 'workload';
  fn: FunctionName;
  /** Kinds this route reads from the cache (the relay watches them). */
  reads: readonly KindName[];
  /**
   * Of `reads`, the kinds it looks at a namespace's (or every) object of, not one by name: routing
   * by lookup LISTs these and GETs the others (shared/routing/lookup.ts; the routing RBAC role).
   */
  lists?: readonly KindName[];
  /** `self`: the event's object; otherwise the related objects that get a message. */
  targets: 'self' | ((ev: RoutingEvent, cache: CacheView) => Target[]);
  /** Only when this holds (default: always). */
  when?: (ev: RoutingEvent) => boolean;
  /** FIFO group (default: the target object's own key). */
  group?: (target: Target) => string;
}
