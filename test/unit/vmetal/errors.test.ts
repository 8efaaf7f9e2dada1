import { describe, expect, it } from 'vitest';
import { TerminalError } from '../../../shared/reconcile/errors.ts';
import {
  missingObject,
  outcomeOf,
  propertyError,
  VMetalInputError,
  VMetalWait,
} from '../../../shared/vmetal/errors.ts';

describe('outcomeOf', () => {
  it.each([
    [
      new VMetalInputError('spec.taints[0].effect', 'bad'),
      { phase: 'Failed', reason: 'InvalidConfiguration', message: 'spec.taints[0].effect: bad' },
    ],
    [
      propertyError('metal3.vcluster.com/network-cidr', '"x" is not a CIDR'),
      {
        phase: 'Failed',
        reason: 'InvalidConfiguration',
        message: 'properties["metal3.vcluster.com/network-cidr"]: "x" is not a CIDR',
      },
    ],
    [
      new VMetalWait('AddressesExhausted', 'no free address in IPPool metal3/p'),
      { phase: 'Pending', reason: 'AddressesExhausted', message: 'no free address in IPPool metal3/p' },
    ],
    [
      missingObject('SSHKeyNotFound', { kind: 'SSHKey', name: 'admin' }),
      { phase: 'Pending', reason: 'SSHKeyNotFound', message: 'SSHKey admin not found' },
    ],
    [
      missingObject('TemplateSecretNotFound', { kind: 'Secret', namespace: 'p-a', name: 's' }, ' (x)'),
      { phase: 'Pending', reason: 'TemplateSecretNotFound', message: 'Secret p-a/s not found (x)' },
    ],
    [new Error('boom'), undefined],
    [new TerminalError('Other', 'not ours'), undefined],
  ])('%s', (e, expected) => {
    expect(outcomeOf(e)).toEqual(expected);
  });

  it('a bad-input error is terminal (never retried)', () => {
    expect(new VMetalInputError('f', 'd')).toBeInstanceOf(TerminalError);
  });
});
