/**
 * What a vMetal decision reports when it cannot go on (issue 19, Behaviour 9), as types the
 * reconcilers map to conditions:
 * - VMetalInputError: bad input (a bad property, template, CIDR, selector, ...). The claim (or
 *   provider) is Failed with a condition naming the field; never retried until the input changes.
 * - VMetalWait: something the claim needs does not exist yet or is used up (an SSHKey, OSImage,
 *   template, template Secret, NodeEnvironment, a free address, an eligible host). The claim stays
 *   Pending with a condition naming the object, and resumes when it appears or frees up.
 */
import { TerminalError } from '../reconcile/errors.ts';

/** Bad input. `field` names where to look, e.g. `properties["metal3.vcluster.com/network-cidr"]`. */
export class VMetalInputError extends TerminalError {
  readonly field: string;
  /** The problem without the field prefix. */
  readonly detail: string;
  constructor(field: string, detail: string, reason = 'InvalidConfiguration') {
    super(reason, `${field}: ${detail}`);
    this.field = field;
    this.detail = detail;
  }
}

/** How a property is named in messages: `properties["<key>"]`. */
export const propertyField = (key: string): string => `properties[${JSON.stringify(key)}]`;

/** A VMetalInputError about one property. */
export const propertyError = (key: string, detail: string): VMetalInputError =>
  new VMetalInputError(propertyField(key), detail);

export type WaitReason =
  | 'SSHKeyNotFound'
  | 'OSImageNotFound'
  | 'TemplateNotFound'
  | 'TemplateSecretNotFound'
  | 'NodeEnvironmentNotFound'
  | 'AddressesExhausted'
  | 'NoEligibleHost'
  | 'PinnedHostUnavailable'
  | 'NoNodeTypeAvailable'
  /** The tenant cluster's kubeconfig Secret (`<vClusterRef>-kubeconfig`) is missing or has no key `value`. */
  | 'TenantClusterNotFound'
  /** A Secret of the claim's data name belongs to another claim (one of the same name being released). */
  | 'DataSecretInUse';

/** The object a wait is for (absent for waits on capacity). */
export interface WaitingFor {
  kind: string;
  name: string;
  namespace?: string | undefined;
}

/** A wait: Pending with a condition naming `object` (or the capacity) until it appears or frees up. */
export class VMetalWait extends Error {
  override readonly name = 'VMetalWait';
  readonly reason: WaitReason;
  readonly object: WaitingFor | undefined;
  constructor(reason: WaitReason, message: string, object?: WaitingFor) {
    super(message);
    this.reason = reason;
    this.object = object;
  }
}

/** A wait for a missing object, with the standard message `<Kind> <ns/name> not found<why>`. */
export function missingObject(reason: WaitReason, object: WaitingFor, why = ''): VMetalWait {
  const where = object.namespace ? `${object.namespace}/${object.name}` : object.name;
  return new VMetalWait(reason, `${object.kind} ${where} not found${why}`, object);
}

/** What a claim's status shows for an error a decision raised; undefined for anything else (a bug, I/O). */
export interface ClaimOutcome {
  phase: 'Pending' | 'Failed';
  reason: string;
  message: string;
}

export function outcomeOf(e: unknown): ClaimOutcome | undefined {
  if (e instanceof VMetalWait) return { phase: 'Pending', reason: e.reason, message: e.message };
  if (e instanceof VMetalInputError) return { phase: 'Failed', reason: e.reason, message: e.message };
  return undefined;
}
