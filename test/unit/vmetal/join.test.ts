import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { VMetalInputError } from '../../../shared/vmetal/errors.ts';
import {
  buildJoin,
  type JoinInput,
  joinEndpoint,
  parseJoinCommand,
  shellQuote,
  shellWords,
} from '../../../shared/vmetal/join.ts';
import { inputError } from './helpers.ts';

const TOKEN = 'abcdef.0123456789abcdef';
const HASH = `sha256:${'ab'.repeat(32)}`;

const input = (over: Partial<JoinInput> = {}): JoinInput => ({
  endpoint: 'https://10.0.0.5:6443',
  token: TOKEN,
  caCertHash: HASH,
  nodeName: 'team-gpu-x7k2p',
  nodeLabels: {},
  ...over,
});

describe('joinEndpoint', () => {
  it.each([
    ['https://10.0.0.5:6443', '10.0.0.5:6443'],
    ['https://api.tenant.example.com', 'api.tenant.example.com:443'],
    ['https://api.tenant.example.com/', 'api.tenant.example.com:443'],
    ['https://[2001:db8::5]:6443', '[2001:db8::5]:6443'],
    ['10.0.0.5:6443', '10.0.0.5:6443'],
    ['tenant-a.vcluster.svc', 'tenant-a.vcluster.svc:443'],
  ])('%s -> %s', (server, expected) => {
    expect(joinEndpoint(server)).toBe(expected);
  });
  it.each([
    ['http://10.0.0.5:6443'],
    ['https://10.0.0.5:6443/prefix'],
    ['https://'],
    ['https://10.0.0.5:6443?x=1'],
    ['https://u:p@h'],
  ])('refuses %s', (server) => {
    expect(inputError(() => joinEndpoint(server)).field).toBe('tenant kubeconfig server');
  });
});

describe('buildJoin', () => {
  it('the command, the kubelet flags, the env files', () => {
    const plan = buildJoin(
      input({
        nodeLabels: {
          'vcluster.com/node-type': 'gpu',
          'kubernetes.io/os': 'linux',
          'topology.kubernetes.io/zone': 'rack-3',
        },
        taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }],
        startupTaints: [{ key: 'example.com/init', effect: 'NoExecute' }],
        kubeletArgs: { 'max-pods': '250', 'eviction-hard': 'memory.available<500Mi,nodefs.available<10%' },
      }),
    );
    expect(plan.argv).toEqual([
      'kubeadm',
      'join',
      '10.0.0.5:6443',
      '--token',
      TOKEN,
      '--discovery-token-ca-cert-hash',
      HASH,
      '--node-name',
      'team-gpu-x7k2p',
    ]);
    expect(plan.command).toBe(
      `kubeadm join 10.0.0.5:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash ${HASH} --node-name team-gpu-x7k2p`,
    );
    expect(plan.kubeletFlags).toEqual([
      '--hostname-override=team-gpu-x7k2p',
      '--node-labels=kubernetes.io/os=linux,topology.kubernetes.io/zone=rack-3,vcluster.com/node-type=gpu',
      '--register-with-taints=dedicated=gpu:NoSchedule,example.com/init:NoExecute',
      '--eviction-hard=memory.available<500Mi,nodefs.available<10%',
      '--max-pods=250',
    ]);
    const content =
      'KUBELET_EXTRA_ARGS=--hostname-override=team-gpu-x7k2p ' +
      '--node-labels=kubernetes.io/os=linux,topology.kubernetes.io/zone=rack-3,vcluster.com/node-type=gpu ' +
      '--register-with-taints=dedicated=gpu:NoSchedule,example.com/init:NoExecute ' +
      '--eviction-hard=memory.available<500Mi,nodefs.available<10% --max-pods=250\n';
    expect(plan.kubeletEnvFiles).toEqual([
      { path: '/etc/default/kubelet', content },
      { path: '/etc/sysconfig/kubelet', content },
    ]);
  });

  it('no labels, no taints: only the hostname override', () => {
    expect(buildJoin(input()).kubeletFlags).toEqual(['--hostname-override=team-gpu-x7k2p']);
  });

  it('a bare CA hash gets its prefix, lower-cased', () => {
    expect(buildJoin(input({ caCertHash: 'AB'.repeat(32) })).argv[6]).toBe(HASH);
  });

  it('redacts the token (after checking it)', () => {
    const plan = buildJoin(input(), { redactToken: true });
    expect(plan.argv[4]).toBe('<redacted>');
    expect(plan.command).toContain("--token '<redacted>' ");
    expect(() => buildJoin(input({ token: 'bad' }), { redactToken: true })).toThrow(VMetalInputError);
  });

  it.each([
    [{ token: 'abcdef0123456789abcdef' }, 'bootstrap token'],
    [{ token: 'ABCDEF.0123456789abcdef' }, 'bootstrap token'],
    [{ caCertHash: 'sha256:abc' }, 'CA certificate hash'],
    [{ nodeName: 'Bad_Name' }, 'node name'],
    [{ endpoint: 'ftp://x' }, 'tenant kubeconfig server'],
    [{ nodeLabels: { 'bad key': 'x' } }, 'Node label "bad key"'],
    [{ taints: [{ key: 'a', effect: 'Sometimes' }] }, 'spec.taints[0].effect'],
    [{ taints: [{ key: 'a b', effect: 'NoSchedule' }] }, 'spec.taints[0].key'],
    [{ startupTaints: [{ key: 'a', value: 'x y', effect: 'NoSchedule' }] }, 'spec.startupTaints[0].value'],
    [
      {
        taints: [{ key: 'a', effect: 'NoSchedule' }],
        startupTaints: [{ key: 'a', value: 'v', effect: 'NoSchedule' }],
      },
      'spec.startupTaints[0]',
    ],
    [{ kubeletArgs: { '--max-pods': '10' } }, 'spec.kubeletArgs["--max-pods"]'],
    [{ kubeletArgs: { 'node-labels': 'a=b' } }, 'spec.kubeletArgs["node-labels"]'],
    [{ kubeletArgs: { 'hostname-override': 'x' } }, 'spec.kubeletArgs["hostname-override"]'],
    [{ kubeletArgs: { 'register-with-taints': 'a:NoSchedule' } }, 'spec.kubeletArgs["register-with-taints"]'],
    [{ kubeletArgs: { 'system-reserved': 'cpu=1, memory=1Gi' } }, 'spec.kubeletArgs["system-reserved"]'],
    [{ kubeletArgs: { x: 'a"b' } }, 'spec.kubeletArgs["x"]'],
    [{ kubeletArgs: { x: "a'b" } }, 'spec.kubeletArgs["x"]'],
    [{ kubeletArgs: { x: 'a\\b' } }, 'spec.kubeletArgs["x"]'],
    [{ kubeletArgs: { x: 'a\nb' } }, 'spec.kubeletArgs["x"]'],
  ] as [Partial<JoinInput>, string][])('refuses %j naming %s', (over, field) => {
    expect(inputError(() => buildJoin(input(over))).field).toBe(field);
  });
});

describe('shellQuote / shellWords', () => {
  const words = [
    'plain',
    '',
    'with space',
    "it's",
    '$(rm -rf /)',
    'a"b',
    'back\\slash',
    'tab\there',
    '<redacted>',
    'ümlaut',
    '#hash',
  ];
  it.each(words)('%j round-trips through shellWords', (w) => {
    expect(shellWords(shellQuote(w))).toEqual([w]);
  });
  it.each([
    ['plain', 'plain'],
    ['', "''"],
    ["it's", "'it'\\''s'"],
    ['$(x)', "'$(x)'"],
    ['a=b:c,d/e.f-g_h@i%j+k', 'a=b:c,d/e.f-g_h@i%j+k'],
  ])('quotes %j as %s', (w, quoted) => {
    expect(shellQuote(w)).toBe(quoted);
  });

  it('a POSIX shell reads the quoted words back unchanged', () => {
    const out = execFileSync('/bin/sh', ['-c', `printf '%s\\n' ${words.map(shellQuote).join(' ')}`], {
      encoding: 'utf8',
    });
    expect(out).toBe(`${words.join('\n')}\n`);
  });

  it.each([
    ['a "b c" d', ['a', 'b c', 'd']],
    ['a\\ b', ['a b']],
    ['"x\\"y"', ['x"y']],
    ['  spaced   out ', ['spaced', 'out']],
    ['a#b', ['a#b']],
  ])('splits %j', (line, expected) => {
    expect(shellWords(line)).toEqual(expected);
  });
  it.each([
    ['a; b'],
    ['a | b'],
    ['a && b'],
    ['a > f'],
    ['$(x)'],
    ['"$x"'],
    ["'open"],
    ['"open'],
    ['a #comment'],
    ['trail\\'],
  ])('refuses %j', (line) => {
    expect(() => shellWords(line)).toThrow();
  });
});

describe('parseJoinCommand', () => {
  it('reads back what buildJoin wrote', () => {
    expect(parseJoinCommand(buildJoin(input()).command)).toEqual({
      endpoint: '10.0.0.5:6443',
      token: TOKEN,
      caCertHash: HASH,
      nodeName: 'team-gpu-x7k2p',
    });
  });
  it('reads --flag=value forms and no node name', () => {
    expect(
      parseJoinCommand(`kubeadm join h:6443 --token=${TOKEN} --discovery-token-ca-cert-hash=${HASH}`),
    ).toEqual({
      endpoint: 'h:6443',
      token: TOKEN,
      caCertHash: HASH,
      nodeName: undefined,
    });
  });
  it.each([
    ['echo hi'],
    ['kubeadm init'],
    [`kubeadm join --token ${TOKEN}`],
    [`kubeadm join h:6443 --token ${TOKEN}`],
    [`kubeadm join h:6443 --token ${TOKEN} --discovery-token-ca-cert-hash`],
    [`kubeadm join h:6443 --token ${TOKEN} --discovery-token-ca-cert-hash ${HASH}; reboot`],
  ])('not a join: %j', (line) => {
    expect(parseJoinCommand(line)).toBeUndefined();
  });
});
