import { describe, expect, it } from 'vitest';
import { endpointProblem } from '../../../functions/metal3-cluster/endpoint.ts';

describe('endpointProblem', () => {
  it.each([
    [{ host: '192.168.111.249', port: 6443 }, undefined],
    [{ host: 'api.example.com', port: 1 }, undefined],
    [{ host: 'h', port: 65535 }, undefined],
    [undefined, 'spec.controlPlaneEndpoint is required'],
    [{ host: '', port: 6443 }, 'spec.controlPlaneEndpoint.host must not be empty'],
    [{ host: '  ', port: 6443 }, 'spec.controlPlaneEndpoint.host must not be empty'],
    [{ port: 6443 }, 'spec.controlPlaneEndpoint.host must not be empty'],
    [{ host: 'h', port: 0 }, 'spec.controlPlaneEndpoint.port must be an integer in 1..65535, got 0'],
    [{ host: 'h', port: 65536 }, 'spec.controlPlaneEndpoint.port must be an integer in 1..65535, got 65536'],
    [{ host: 'h', port: 1.5 }, 'spec.controlPlaneEndpoint.port must be an integer in 1..65535, got 1.5'],
    [
      { host: 'h', port: '6443' },
      'spec.controlPlaneEndpoint.port must be an integer in 1..65535, got "6443"',
    ],
    [{ host: 'h' }, 'spec.controlPlaneEndpoint.port must be an integer in 1..65535, got undefined'],
  ])('%j -> %s', (ep, expected) => {
    expect(endpointProblem(ep as never)).toBe(expected);
  });
});
