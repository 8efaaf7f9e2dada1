/**
 * `metal3fn template` as a user runs it: a child process on files, stdout exactly the rendered
 * text (compared with Go's output for the same fixture case), Go's error texts on stderr.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXPECTED_FILE, loadCases } from '../../scripts/gen-gotemplate-fixtures.ts';
import { runMetal3fnSplit } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'metal3fn-template-'));
const file = (name: string, content: string | Buffer) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('metal3fn template', () => {
  it('prints exactly what Go renders for a cloud-config template, nothing added', async () => {
    const c = loadCases().find((x) => x.name === 'cloudconfig/cloud-config')!;
    const expected = (JSON.parse(readFileSync(EXPECTED_FILE, 'utf8')) as Record<string, { output: string }>)[
      c.name
    ]!;
    const r = await runMetal3fnSplit([
      'template',
      '--template',
      file('cc.tmpl', c.template),
      '--values',
      file('cc.json', c.values),
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(expected.output);
  });

  it('adds no trailing newline', async () => {
    const r = await runMetal3fnSplit([
      'template',
      '--template',
      file('nl.tmpl', '{{ .Values.n }}'),
      '--values',
      file('nl.json', '{"n":1000000}'),
    ]);
    expect(r).toEqual({ code: 0, stdout: '1e+06', stderr: '' });
  });

  it("a missing key exits 1 with Go's message naming the field, nothing on stdout", async () => {
    const r = await runMetal3fnSplit([
      'template',
      '--template',
      file('miss.tmpl', 'hostname: {{ .Values.NodeClaim.Name }}\nzone: {{ .Values.NodeClaim.Zone }}\n'),
      '--values',
      file('miss.json', '{"NodeClaim":{"Name":"n1"}}'),
    ]);
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'template: user-data:2:16: executing "user-data" at <.Values.NodeClaim.Zone>: map has no entry for key "Zone"\n',
    });
  });

  it('an unknown or removed function exits 1 naming it (parse error)', async () => {
    const r = await runMetal3fnSplit([
      'template',
      '--template',
      file('env.tmpl', '{{ env "AWS_SECRET_ACCESS_KEY" }}'),
      '--values',
      file('e.json', '{}'),
    ]);
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'template: user-data:1: function "env" not defined\n' });
  });

  it('--name sets the template name of the messages', async () => {
    const r = await runMetal3fnSplit([
      'template',
      '--name',
      'my.tmpl',
      '--template',
      file('f.tmpl', '{{ fail "no" }}'),
      '--values',
      file('f.json', '{}'),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'template: my.tmpl:1:3: executing "my.tmpl" at <fail "no">: error calling fail: no\n',
    );
  });

  it("bad values JSON exits 1 with Go's decoding error", async () => {
    const r = await runMetal3fnSplit([
      'template',
      '--template',
      file('v.tmpl', 'x'),
      '--values',
      file('bad.json', '{"a":'),
    ]);
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'values: unexpected end of JSON input\n' });
  });

  it('refuses a template that is not UTF-8 (Go would copy the raw bytes)', async () => {
    const r = await runMetal3fnSplit([
      'template',
      '--template',
      file('bin.tmpl', Buffer.from([0x61, 0xff, 0x62])),
      '--values',
      file('b.json', '{}'),
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/bin\.tmpl is not valid UTF-8/);
  });

  it('keeps a byte order mark: text in a template, a JSON error in values (as Go)', async () => {
    const bom = '\ufeff';
    const ok = await runMetal3fnSplit([
      'template',
      '--template',
      file('bom.tmpl', `${bom}x`),
      '--values',
      file('ok.json', '{}'),
    ]);
    expect(ok).toEqual({ code: 0, stdout: `${bom}x`, stderr: '' });
    const bad = await runMetal3fnSplit([
      'template',
      '--template',
      file('x.tmpl', 'x'),
      '--values',
      file('bom.json', `${bom}{}`),
    ]);
    expect(bad).toEqual({
      code: 1,
      stdout: '',
      stderr: "values: invalid character 'ï' looking for beginning of value\n",
    });
  });

  it('missing options exit 2 with the usage', async () => {
    const r = await runMetal3fnSplit(['template', '--template', file('u.tmpl', 'x')]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/--template and --values are required[\s\S]*usage: metal3fn template/);
  });
});
