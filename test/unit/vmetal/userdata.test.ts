import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { buildJoin, type JoinPlan } from '../../../shared/vmetal/join.ts';
import {
  additionsCloudConfig,
  composeUserData,
  defaultUserData,
  mergeCloudConfig,
  sshKeyNames,
  sshPublicKeys,
} from '../../../shared/vmetal/userdata.ts';

import { inputError, waitError } from './helpers.ts';

const HASH = `sha256:${'ab'.repeat(32)}`;
const join: JoinPlan = buildJoin({
  endpoint: 'https://10.0.0.5:6443',
  token: 'abcdef.0123456789abcdef',
  caCertHash: HASH,
  nodeName: 'c1',
  nodeLabels: { 'vcluster.com/node-type': 'gpu' },
});
const JOIN_LINE = `kubeadm join 10.0.0.5:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash ${HASH} --node-name c1`;
const ENV = 'KUBELET_EXTRA_ARGS=--hostname-override=c1 --node-labels=vcluster.com/node-type=gpu';
const KEY_A = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA admin@example';
const KEY_B = 'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ== ops';
const F = 'properties["vcluster.com/user-data"]';

/** Our addition as YAML lines (keys sorted by the serializer), indented by `indent`. */
const OURS_YAML = (keys: string[]) =>
  [
    'runcmd:',
    `  - ${JOIN_LINE}`,
    ...(keys.length ? ['ssh_authorized_keys:', ...keys.map((k) => `  - ${k}`)] : []),
    'write_files:',
    '  - content: |',
    `      ${ENV}`,
    '    owner: root:root',
    '    path: /etc/default/kubelet',
    '    permissions: "0644"',
    '  - content: |',
    `      ${ENV}`,
    '    owner: root:root',
    '    path: /etc/sysconfig/kubelet',
    '    permissions: "0644"',
  ].join('\n');

describe('sshKeyNames / sshPublicKeys', () => {
  it.each([
    ['a,b', ['a', 'b']],
    [' a , ,b,a ', ['a', 'b']],
    ['', []],
  ])('%j -> %j', (value, expected) => {
    expect(sshKeyNames({ 'vcluster.com/ssh-keys': value })).toEqual(expected);
  });
  it('refuses a bad name', () => {
    expect(inputError(() => sshKeyNames({ 'vcluster.com/ssh-keys': 'ok,Not_OK' })).field).toBe(
      'properties["vcluster.com/ssh-keys"]',
    );
  });

  const keys: Record<string, KubeObject> = {
    a: { metadata: { name: 'a' }, spec: { publicKey: `${KEY_A}\n` } },
    b: { metadata: { name: 'b' }, spec: { publicKey: KEY_B } },
    same: { metadata: { name: 'same' }, spec: { publicKey: KEY_A } },
    bad: { metadata: { name: 'bad' }, spec: { publicKey: 'not a key' } },
    two: { metadata: { name: 'two' }, spec: { publicKey: `${KEY_A}\n${KEY_B}` } },
    none: { metadata: { name: 'none' }, spec: {} },
  };
  const lookup = (n: string) => keys[n];
  it('reads the keys, trimmed, without repeats', () => {
    expect(sshPublicKeys(['a', 'b', 'same'], lookup)).toEqual([KEY_A, KEY_B]);
  });
  it('a missing SSHKey is a wait naming it', () => {
    const e = waitError(() => sshPublicKeys(['a', 'gone'], lookup));
    expect(e.reason).toBe('SSHKeyNotFound');
    expect(e.object).toEqual({ kind: 'SSHKey', name: 'gone' });
    expect(e.message).toBe('SSHKey gone not found (vcluster.com/ssh-keys)');
  });
  it.each([['bad'], ['two'], ['none']])('refuses SSHKey %s', (name) => {
    expect(inputError(() => sshPublicKeys([name], lookup)).field).toBe(`SSHKey ${name} spec.publicKey`);
  });
});

describe('mergeCloudConfig: cloud-init list(append)+dict(no_replace,recurse_list)+str()', () => {
  it.each([
    ['a key only ours is added', { a: 1 }, { b: [2] }, { a: 1, b: [2] }],
    [
      'lists concatenate, the user first',
      { runcmd: ['u1', 'u2'] },
      { runcmd: ['o1'] },
      { runcmd: ['u1', 'u2', 'o1'] },
    ],
    ['the user scalar wins', { hostname: 'mine' }, { hostname: 'ours' }, { hostname: 'mine' }],
    [
      'maps merge',
      { apt: { a: 1, s: { x: 1 } } },
      { apt: { b: 2, s: { y: 2 } } },
      { apt: { a: 1, b: 2, s: { x: 1, y: 2 } } },
    ],
    ['lists inside maps concatenate', { m: { l: [1] } }, { m: { l: [2] } }, { m: { l: [1, 2] } }],
    ['a user null counts as absent', { runcmd: null }, { runcmd: ['o'] }, { runcmd: ['o'] }],
    ['the user value of another type wins (not required)', { m: 'str' }, { m: { x: 1 } }, { m: 'str' }],
  ])('%s', (_n, user, ours, expected) => {
    expect(mergeCloudConfig(user, ours, F)).toEqual(expected);
  });
  it.each([
    [{ runcmd: 'echo hi' }, 'runcmd must be a list (the join and SSH keys are added to it)'],
    [{ write_files: { path: '/x' } }, 'write_files must be a list (the join and SSH keys are added to it)'],
    [
      { ssh_authorized_keys: 'ssh-rsa AAAA' },
      'ssh_authorized_keys must be a list (the join and SSH keys are added to it)',
    ],
  ])('refuses a user %j where we add a list', (user, detail) => {
    const e = inputError(() =>
      mergeCloudConfig(user, additionsCloudConfig(join, [KEY_A]), F, [
        'runcmd',
        'write_files',
        'ssh_authorized_keys',
      ]),
    );
    expect(e.field).toBe(F);
    expect(e.detail).toBe(detail);
  });
});

describe('composeUserData: #cloud-config', () => {
  it('the generated default', () => {
    expect(composeUserData(defaultUserData('c1'), join, [KEY_A], 'generated')).toBe(
      `#cloud-config\nhostname: c1\n${OURS_YAML([KEY_A])}\n`,
    );
  });

  it('no SSH keys: no ssh_authorized_keys', () => {
    expect(composeUserData('#cloud-config\n', join, [], F)).toBe(`#cloud-config\n${OURS_YAML([])}\n`);
  });

  it("the user's entries first, their scalars kept, other keys untouched", () => {
    const user = [
      '#cloud-config',
      '# a comment',
      'hostname: my-host',
      'package_upgrade: yes',
      'packages: [htop]',
      'runcmd:',
      '  - echo first',
      '  - [sh, -c, "echo second"]',
      'ssh_authorized_keys:',
      `  - ${KEY_B}`,
      'write_files:',
      '  - path: /etc/motd',
      '    content: hello',
      '    permissions: 0600',
      '',
    ].join('\n');
    expect(composeUserData(user, join, [KEY_A], F)).toBe(
      [
        '#cloud-config',
        'hostname: my-host',
        'package_upgrade: true',
        'packages:',
        '  - htop',
        'runcmd:',
        '  - echo first',
        '  - - sh',
        '    - -c',
        '    - echo second',
        `  - ${JOIN_LINE}`,
        'ssh_authorized_keys:',
        `  - ${KEY_B}`,
        `  - ${KEY_A}`,
        'write_files:',
        '  - content: hello',
        '    path: /etc/motd',
        '    permissions: 384',
        '  - content: |',
        `      ${ENV}`,
        '    owner: root:root',
        '    path: /etc/default/kubelet',
        '    permissions: "0644"',
        '  - content: |',
        `      ${ENV}`,
        '    owner: root:root',
        '    path: /etc/sysconfig/kubelet',
        '    permissions: "0644"',
        '',
      ].join('\n'),
    );
  });

  it('CRLF and trailing spaces on the header line still mean #cloud-config', () => {
    expect(composeUserData('#cloud-config  \r\nhostname: h\r\n', join, [], F)).toBe(
      `#cloud-config\nhostname: h\n${OURS_YAML([])}\n`,
    );
  });

  it('empty user data: ours only', () => {
    expect(composeUserData('  \n', join, [], F)).toBe(`#cloud-config\n${OURS_YAML([])}\n`);
  });

  it.each([
    ['not YAML', '#cloud-config\nruncmd: [a\n', 'is #cloud-config but not YAML: '],
    ['a list', '#cloud-config\n- a\n', 'is #cloud-config but not a YAML mapping'],
    ['duplicate keys', '#cloud-config\na: 1\na: 2\n', 'is #cloud-config but not YAML: '],
    [
      'runcmd a string',
      '#cloud-config\nruncmd: reboot\n',
      'runcmd must be a list (the join and SSH keys are added to it)',
    ],
  ])('refuses %s, naming the source', (_n, user, detail) => {
    const e = inputError(() => composeUserData(user, join, [], F));
    expect(e.field).toBe(F);
    expect(e.detail.startsWith(detail)).toBe(true);
  });
});

const BOUNDARY = /^Content-Type: multipart\/mixed; boundary="(==vmetal-[0-9a-f]{24}==)"\n/;
const boundaryOf = (text: string) => BOUNDARY.exec(text)?.[1] ?? '';

const OUR_PART = (b: string) =>
  [
    `--${b}`,
    'Content-Type: text/cloud-config; charset="utf-8"',
    'MIME-Version: 1.0',
    'Content-Transfer-Encoding: 7bit',
    'Content-Disposition: attachment; filename="vmetal-join.cfg"',
    'Merge-Type: list(append)+dict(no_replace,recurse_list)+str()',
    '',
    '#cloud-config',
    OURS_YAML([KEY_A]),
    '',
    `--${b}--`,
    '',
  ].join('\n');

describe('composeUserData: anything else becomes MIME multipart, the user part first', () => {
  const script = '#!/bin/bash\necho hello\n';

  it('a shell script', () => {
    const out = composeUserData(script, join, [KEY_A], F);
    const b = boundaryOf(out);
    expect(b).not.toBe('');
    expect(out).toBe(
      [
        `Content-Type: multipart/mixed; boundary="${b}"`,
        'MIME-Version: 1.0',
        '',
        `--${b}`,
        'Content-Type: text/x-shellscript; charset="utf-8"',
        'MIME-Version: 1.0',
        'Content-Transfer-Encoding: 7bit',
        'Content-Disposition: attachment; filename="user-data"',
        '',
        '#!/bin/bash',
        'echo hello',
        '',
        OUR_PART(b),
      ].join('\n'),
    );
  });

  it('the boundary is the same for the same input and differs for another', () => {
    const a = composeUserData(script, join, [KEY_A], F);
    expect(composeUserData(script, join, [KEY_A], F)).toBe(a);
    expect(boundaryOf(composeUserData('#!/bin/sh\necho other\n', join, [KEY_A], F))).not.toBe(boundaryOf(a));
  });

  it.each([
    ['## template: jinja\n#cloud-config\nhostname: {{ v1.local_hostname }}\n', 'text/jinja2'],
    ['#cloud-boothook\n#!/bin/sh\necho boot\n', 'text/cloud-boothook'],
    ['#include\nhttps://example.com/ud\n', 'text/x-include-url'],
    ['#include-once\nhttps://example.com/ud\n', 'text/x-include-once-url'],
    ['#cloud-config-archive\n- type: text/x-shellscript\n  content: echo\n', 'text/cloud-config-archive'],
    ['#part-handler\ndef list_types(): return []\n', 'text/part-handler'],
  ])('the user part type by its first bytes: %j', (user, type) => {
    const out = composeUserData(user, join, [KEY_A], F);
    expect(out).toContain(`\nContent-Type: ${type}; charset="utf-8"\n`);
    expect(out.endsWith(OUR_PART(boundaryOf(out)))).toBe(true);
  });

  it('non-ASCII content goes base64', () => {
    const out = composeUserData('#!/bin/sh\necho grüße\n', join, [KEY_A], F);
    expect(out).toContain(
      [
        'Content-Transfer-Encoding: base64',
        'Content-Disposition: attachment; filename="user-data"',
        '',
        'IyEvYmluL3NoCmVjaG8gZ3LDvMOfZQo=',
        '',
      ].join('\n'),
    );
  });

  it('a MIME message is embedded whole as the first part', () => {
    const mime = [
      'Content-Type: multipart/mixed; boundary="XYZ"',
      'MIME-Version: 1.0',
      '',
      '--XYZ',
      'Content-Type: text/x-shellscript',
      '',
      '#!/bin/sh',
      'echo a',
      '--XYZ--',
      '',
    ].join('\n');
    const out = composeUserData(mime, join, [KEY_A], F);
    const b = boundaryOf(out);
    expect(out).toBe(
      [
        `Content-Type: multipart/mixed; boundary="${b}"`,
        'MIME-Version: 1.0',
        '',
        `--${b}`,
        mime,
        OUR_PART(b),
      ].join('\n'),
    );
  });

  it.each([['hello world\n'], [' #!/bin/sh\n'], ['{"a": 1}']])(
    'refuses %j (cloud-init would ignore it)',
    (user) => {
      const e = inputError(() => composeUserData(user, join, [KEY_A], F));
      expect(e.field).toBe(F);
      expect(e.detail.startsWith('is not user data cloud-init reads')).toBe(true);
    },
  );
});

/**
 * Cross-check with what cloud-init itself uses: Python's email parser (walk, decoded payloads,
 * the Merge-Type header) and PyYAML's safe_load. Skipped where no python3 with PyYAML exists.
 */
const PY = `
import sys, json, email, yaml
data = sys.stdin.read()
if 'mime-version:' in data[:4096].lower():
    msg = email.message_from_string(data)
    out = []
    for part in msg.walk():
        if part.get_content_maintype() == 'multipart':
            continue
        out.append({'type': part.get_content_type(), 'merge': part.get('Merge-Type'),
                    'payload': part.get_payload(decode=True).decode('utf-8')})
    print(json.dumps(out))
else:
    print(json.dumps(yaml.safe_load(data), default=str))
`;
const python = spawnSync('python3', ['-c', 'import yaml, email'], { encoding: 'utf8' }).status === 0;
const readAsCloudInit = (text: string): unknown =>
  JSON.parse(execFileSync('python3', ['-c', PY], { input: text, encoding: 'utf8' }));

describe.skipIf(!python)('read back as cloud-init reads (python3: email, PyYAML)', () => {
  const oursParsed = {
    runcmd: [JOIN_LINE],
    ssh_authorized_keys: [KEY_A],
    write_files: [
      { content: `${ENV}\n`, owner: 'root:root', path: '/etc/default/kubelet', permissions: '0644' },
      { content: `${ENV}\n`, owner: 'root:root', path: '/etc/sysconfig/kubelet', permissions: '0644' },
    ],
  };

  it('a merged cloud-config', () => {
    const user =
      '#cloud-config\npackage_upgrade: yes\nruncmd: [echo first]\nwrite_files:\n  - path: /etc/motd\n    content: hi\n    permissions: 0600\n';
    expect(readAsCloudInit(composeUserData(user, join, [KEY_A], F))).toEqual({
      package_upgrade: true,
      runcmd: ['echo first', JOIN_LINE],
      ssh_authorized_keys: [KEY_A],
      write_files: [{ path: '/etc/motd', content: 'hi', permissions: 0o600 }, ...oursParsed.write_files],
    });
  });

  it('a multipart message: the user part first, decoded; ours with its Merge-Type', () => {
    const script = '#!/bin/sh\necho grüße\n';
    const parts = readAsCloudInit(composeUserData(script, join, [KEY_A], F)) as {
      type: string;
      merge: string | null;
      payload: string;
    }[];
    expect(parts.map((p) => [p.type, p.merge])).toEqual([
      ['text/x-shellscript', null],
      ['text/cloud-config', 'list(append)+dict(no_replace,recurse_list)+str()'],
    ]);
    expect(parts[0]!.payload).toBe(script);
    expect(readAsCloudInit(parts[1]!.payload)).toEqual(oursParsed);
  });

  it('an embedded MIME message: its parts first, then ours', () => {
    const mime =
      'Content-Type: multipart/mixed; boundary="XYZ"\nMIME-Version: 1.0\n\n--XYZ\nContent-Type: text/x-shellscript\n\n#!/bin/sh\necho a\n--XYZ--\n';
    const parts = readAsCloudInit(composeUserData(mime, join, [KEY_A], F)) as {
      type: string;
      payload: string;
    }[];
    expect(parts.map((p) => [p.type, p.payload.slice(0, 9)])).toEqual([
      ['text/x-shellscript', '#!/bin/sh'],
      ['text/cloud-config', '#cloud-co'],
    ]);
  });
});
