/**
 * Secret contents never reach a log.
 *
 *   1. The logger's redaction, table-driven: payload keys are redacted, object references pass,
 *      a data map that merely has a `name` key is not taken for a reference, child fields are
 *      redacted like any other, and what is nested deeper than the redactor looks is not printed.
 *   2. End to end: the whole system (runDev, 3 machines to Ready, then scale-down) with
 *      LOG_LEVEL=debug and every log line captured; the rendered Secrets
 *      (`infrastructure.cluster.x-k8s.io/secret`: metaData / networkData), the bootstrap data and the
 *      workload kubeconfig, base64 and decoded, appear in none of them, nor in the progress output.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { runDev } from '../../infra/local/dev/run.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { createLogger, redact } from '../../shared/observability/logger.ts';

const SECRET = 'c2VjcmV0LXBheWxvYWQ='; // base64 of "secret-payload"

describe('logger redaction', () => {
  const CASES: { name: string; fields: Record<string, unknown>; leaks: string[]; keeps?: string[] }[] = [
    { name: 'a Secret data map', fields: { data: { metaData: SECRET } }, leaks: [SECRET] },
    { name: 'userData as a value', fields: { userData: SECRET }, leaks: [SECRET] },
    { name: 'a token', fields: { token: 'tok-123456' }, leaks: ['tok-123456'] },
    {
      name: 'an authorization header',
      fields: { headers: { Authorization: 'Bearer abc.def' } },
      leaks: ['abc.def'],
    },
    {
      name: 'a data map with a key called name is not a reference',
      fields: { data: { name: SECRET, password: 'hunter2' } },
      leaks: [SECRET, 'hunter2'],
    },
    {
      name: 'a whole Secret object',
      fields: {
        secret: {
          metadata: { name: 's' },
          type: 'infrastructure.cluster.x-k8s.io/secret',
          data: { networkData: SECRET },
        },
      },
      leaks: [SECRET],
      keeps: ['infrastructure.cluster.x-k8s.io/secret'],
    },
    {
      name: 'a SecretReference passes (it names, it does not carry)',
      fields: {
        userData: { name: 'm-0-bootstrap', namespace: 'metal3' },
        metaData: { name: 'm-0-metadata-0' },
      },
      leaks: [],
      keeps: ['m-0-bootstrap', 'm-0-metadata-0'],
    },
    {
      name: 'deeper than the redactor looks is not printed',
      fields: { a: { b: { c: { d: { e: { f: { g: { h: { password: 'deep-secret' } } } } } } } } },
      leaks: ['deep-secret'],
    },
  ];

  it.each(CASES)('$name', (c) => {
    const lines: string[] = [];
    const log = createLogger({ level: 'debug', write: (l) => lines.push(l) });
    log.info('message', c.fields);
    log.child(c.fields).info('from a child');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      for (const leak of c.leaks) expect(line).not.toContain(leak);
      for (const keep of c.keeps ?? []) expect(line).toContain(keep);
    }
  });

  it('redact leaves plain values alone', () => {
    expect(redact({ host: 'metal3/node-0', n: 3, ok: true })).toEqual({
      host: 'metal3/node-0',
      n: 3,
      ok: true,
    });
  });
});

describe('end to end: no Secret value in any log line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metal3fn-secret-logs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('3 machines to Ready and back, LOG_LEVEL=debug: every rendered, bootstrap and kubeconfig value absent', async () => {
    const dump = join(dir, 'state.json');
    const captured: string[] = [];
    const out = new Writable({
      write(chunk, _e, cb) {
        captured.push(String(chunk));
        cb();
      },
    }) as unknown as NodeJS.WriteStream;
    const originalWrite = process.stderr.write.bind(process.stderr);
    const originalLevel = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = 'debug';
    process.stderr.write = ((chunk: string | Uint8Array) => {
      captured.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    }) as typeof process.stderr.write;
    let result: Awaited<ReturnType<typeof runDev>>;
    try {
      result = await runDev({
        machines: 3,
        scaleDown: true,
        serve: false,
        simDelayMs: 20,
        timeoutSeconds: 45,
        concurrency: 8,
        legacyProviderIds: 'accept',
        out,
        dumpState: dump,
        queuePrefix: `secretlogs${process.pid}-`,
      });
    } finally {
      process.stderr.write = originalWrite;
      if (originalLevel === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = originalLevel;
    }
    if (result.summary?.ready !== 3) console.log(captured.join('').slice(-3000));
    expect(result.summary?.ready).toBe(3);

    const state = JSON.parse(readFileSync(dump, 'utf8')) as {
      atReady?: { management: KubeObject[] };
      management: KubeObject[];
    };
    const objects = [...(state.atReady?.management ?? []), ...state.management];
    const secrets = objects.filter(
      (o) =>
        o.kind === 'Secret' &&
        ['infrastructure.cluster.x-k8s.io/secret', 'cluster.x-k8s.io/secret'].includes(
          String((o as { type?: string }).type),
        ),
    );
    const rendered = secrets.filter(
      (s) => (s as { type?: string }).type === 'infrastructure.cluster.x-k8s.io/secret',
    );
    expect(rendered.length, 'the run rendered metaData and networkData Secrets').toBeGreaterThanOrEqual(6);

    const needles = new Set<string>();
    for (const s of secrets) {
      for (const [key, b64] of Object.entries((s.data ?? {}) as Record<string, string>)) {
        if (key === 'format') continue; // "cloud-config": a format name, not a secret
        const text = Buffer.from(b64, 'base64').toString('utf8');
        needles.add(b64);
        needles.add(text);
        needles.add(JSON.stringify(text).slice(1, -1)); // as it would appear inside a JSON log line
      }
    }
    expect(needles.size).toBeGreaterThanOrEqual(12);
    const logText = captured.join('');
    const logLines = logText.split('\n').filter((l) => l.startsWith('{'));
    expect(logLines.length, 'debug logs were captured').toBeGreaterThan(10);
    const found = [...needles].filter((n) => n.length >= 8 && logText.includes(n));
    expect(found.map((n) => n.slice(0, 60))).toEqual([]);
  }, 90_000);
});
