/**
 * The metric names and label values every runtime exports: client-go's names for the kube client,
 * and label values bounded to fixed sets (no object name, no free text ever becomes a label).
 */
import { describe, expect, it } from 'vitest';
import type { RequestObservation } from '../../../shared/kube/stats.ts';
import {
  codeLabel,
  REST_CLIENT_DURATION,
  REST_CLIENT_REQUESTS,
  restClientLabels,
} from '../../../shared/observability/metric-names.ts';

const obs = (o: Partial<RequestObservation>): RequestObservation => ({
  verb: 'get',
  resource: 'metal3machines',
  code: 200,
  seconds: 0.01,
  ...o,
});

describe('kube client metric names', () => {
  it("are client-go's", () => {
    expect(REST_CLIENT_REQUESTS).toBe('rest_client_requests_total');
    expect(REST_CLIENT_DURATION).toBe('rest_client_request_duration_seconds');
  });
});

describe('label values are bounded', () => {
  it('a request of a known verb and resource keeps both, and its status as the code', () => {
    expect(restClientLabels(obs({ verb: 'patch-status', resource: 'baremetalhosts', code: 409 }))).toEqual({
      verb: 'patch-status',
      resource: 'baremetalhosts',
      code: '409',
    });
    expect(restClientLabels(obs({ verb: 'list', resource: 'nodes', code: 200 }))).toEqual({
      verb: 'list',
      resource: 'nodes',
      code: '200',
    });
  });

  it('a resource outside the registry, or a name in its place, becomes `other`', () => {
    expect(restClientLabels(obs({ resource: 'widgets' })).resource).toBe('other');
    expect(restClientLabels(obs({ resource: 'metal3/worker-0' })).resource).toBe('other');
  });

  it('no response is `<error>`; a status outside 100–599 is `other`', () => {
    expect(codeLabel(0)).toBe('<error>');
    expect(codeLabel(201)).toBe('201');
    expect(codeLabel(99)).toBe('other');
    expect(codeLabel(600)).toBe('other');
    expect(codeLabel(200.5)).toBe('other');
  });

  it('an unknown verb becomes `other`', () => {
    expect(restClientLabels(obs({ verb: 'deletecollection' as RequestObservation['verb'] })).verb).toBe(
      'other',
    );
  });
});
