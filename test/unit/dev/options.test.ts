/** `metal3fn dev`'s options: every check before anything starts, one message form. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OptionError, parseDevOptions } from '../../../infra/local/dev/options.ts';

const dir = mkdtempSync(join(tmpdir(), 'metal3fn-options-'));

describe('parseDevOptions', () => {
  it('gives the defaults', () => {
    expect(parseDevOptions({})).toEqual({
      machines: 5,
      hosts: undefined,
      manifests: undefined,
      kubeconfig: undefined,
      kubeconfigOut: undefined,
      sqsEndpoint: undefined,
      simulators: undefined,
      simDelayMs: 300,
      scaleDown: false,
      dumpState: undefined,
      summaryJson: undefined,
      serve: false,
      timeoutSeconds: 120,
      concurrency: 16,
      legacyProviderIds: 'accept',
      rbac: undefined,
      direct: false,
      lambda: false,
      vmetal: false,
    });
  });

  it('takes --vmetal alone, and refuses it with --manifests (the manifests bring their vMetal objects)', () => {
    expect(parseDevOptions({ vmetal: true })).toMatchObject({ vmetal: true });
    expect(() => parseDevOptions({ vmetal: true, manifests: dir })).toThrow(
      new OptionError(
        '--vmetal adds the built-in vMetal sample; with --manifests your manifests bring the vMetal objects (they run whenever present)',
      ),
    );
  });

  it('reads what it is given', () => {
    expect(
      parseDevOptions({
        machines: '7',
        hosts: '9',
        'sim-delay': '0',
        timeout: '30',
        concurrency: '4',
        rbac: 'enforce',
        'legacy-provider-ids': 'refuse',
        'scale-down': true,
      }),
    ).toMatchObject({
      machines: 7,
      hosts: 9,
      simDelayMs: 0,
      timeoutSeconds: 30,
      concurrency: 4,
      rbac: 'enforce',
      legacyProviderIds: 'refuse',
      scaleDown: true,
    });
  });

  it.each([
    [{}, { direct: false, lambda: false }],
    [{ runtime: 'worker' }, { direct: false, lambda: false }],
    [{ runtime: 'lambda' }, { direct: false, lambda: true }],
    [{ runtime: 'direct' }, { direct: true, lambda: false }],
    [{ direct: true }, { direct: true, lambda: false }],
  ])('chooses the runtime from %j', (values, runtime) => {
    expect(parseDevOptions(values)).toMatchObject(runtime);
  });

  it.each([
    [{ machines: '0' }, "--machines must be a whole number ≥ 1, not '0'"],
    [{ machines: 'abc' }, "--machines must be a whole number ≥ 1, not 'abc'"],
    [{ machines: '-2' }, "--machines must be a whole number ≥ 1, not '-2'"],
    [{ machines: '2.5' }, "--machines must be a whole number ≥ 1, not '2.5'"],
    [{ machines: '1e3' }, "--machines must be a whole number ≥ 1, not '1e3'"],
    [{ machines: '' }, "--machines must be a whole number ≥ 1, not ''"],
    [{ machines: '4', hosts: '3' }, "--hosts must be a whole number ≥ --machines (4), not '3'"],
    [{ hosts: 'many' }, "--hosts must be a whole number ≥ --machines (5), not 'many'"],
    [{ 'sim-delay': '-1' }, "--sim-delay must be a whole number ≥ 0, not '-1'"],
    [{ timeout: '0' }, "--timeout must be a whole number ≥ 1, not '0'"],
    [{ concurrency: 'x' }, "--concurrency must be a whole number ≥ 1, not 'x'"],
    [{ rbac: 'on' }, "--rbac must be observe or enforce, not 'on'"],
    [{ 'legacy-provider-ids': 'maybe' }, "--legacy-provider-ids must be accept or refuse, not 'maybe'"],
    [{ 'sqs-endpoint': 'not a url' }, "--sqs-endpoint must be a URL (http://host:port), not 'not a url'"],
    [
      { manifests: join(dir, 'missing') },
      `--manifests must be an existing file or directory, not '${join(dir, 'missing')}'`,
    ],
    [
      { kubeconfig: join(dir, 'nope') },
      `--kubeconfig must be an existing kubeconfig file, not '${join(dir, 'nope')}'`,
    ],
    [
      { manifests: dir, machines: '3' },
      '--machines sizes the built-in sample; with --manifests your manifests say how many machines and hosts there are',
    ],
    [{ direct: true, 'sqs-endpoint': 'http://127.0.0.1:9' }, '--direct uses no queues; drop --sqs-endpoint'],
    [{ runtime: 'fargate' }, "--runtime must be worker or lambda or direct, not 'fargate'"],
    [{ runtime: 'lambda', direct: true }, '--direct is --runtime direct; drop it or --runtime lambda'],
    [
      { runtime: 'direct', 'sqs-endpoint': 'http://127.0.0.1:9' },
      '--direct uses no queues; drop --sqs-endpoint',
    ],
  ])('refuses %j: %s', (values, message) => {
    expect(() => parseDevOptions(values)).toThrow(OptionError);
    expect(() => parseDevOptions(values)).toThrow(message);
  });
});
