/**
 * The kubelet simulator's reading of rendered user data: the join line and the kubelet flags come
 * back from every shape composeUserData produces (cloud-config, multipart around a script, a MIME
 * message embedded whole, base64 parts), and user data without a join is refused with a reason.
 */
import { describe, expect, it } from 'vitest';
import { joinRequestFromUserData } from '../../../infra/local/sim/userdata-join.ts';
import { buildJoin } from '../../../shared/vmetal/join.ts';
import { composeUserData } from '../../../shared/vmetal/userdata.ts';

const HASH = `sha256:${'ab'.repeat(32)}`;
const plan = buildJoin({
  endpoint: 'https://127.0.0.1:6443',
  token: 'abcdef.0123456789abcdef',
  caCertHash: HASH,
  nodeName: 'c-1',
  nodeLabels: { 'vcluster.com/node-type': 'gpu', 'topology.kubernetes.io/zone': 'z1' },
  taints: [{ key: 'gpu', value: 'yes', effect: 'NoSchedule' }],
  startupTaints: [{ key: 'booting', effect: 'NoExecute' }],
  kubeletArgs: { 'max-pods': '50' },
});
const expected = {
  join: { endpoint: '127.0.0.1:6443', token: 'abcdef.0123456789abcdef', caCertHash: HASH, nodeName: 'c-1' },
  nodeName: 'c-1',
  labels: { 'vcluster.com/node-type': 'gpu', 'topology.kubernetes.io/zone': 'z1' },
  taints: [
    { key: 'gpu', value: 'yes', effect: 'NoSchedule' },
    { key: 'booting', effect: 'NoExecute' },
  ],
};
const compose = (base: string) => composeUserData(base, plan, [], 'user data');

describe('joinRequestFromUserData', () => {
  it.each([
    ['the generated default cloud-config', '#cloud-config\nhostname: c-1\n'],
    [
      'a user cloud-config with its own runcmd and write_files',
      '#cloud-config\nruncmd: [echo hi]\nwrite_files: [{path: /etc/motd, content: hi}]\n',
    ],
    ['a shell script (multipart)', '#!/bin/sh\necho hello\n'],
    [
      'a non-ASCII jinja template (multipart, base64 parts)',
      '## template: jinja\n#cloud-config\nhostname: héllo\n',
    ],
    [
      'a MIME message embedded whole (nested multipart)',
      'Content-Type: multipart/mixed; boundary="XYZ"\nMIME-Version: 1.0\n\n--XYZ\nContent-Type: text/x-shellscript\n\n#!/bin/sh\necho\n--XYZ--\n',
    ],
  ])('%s', (_name, base) => {
    expect(joinRequestFromUserData(compose(base))).toMatchObject(expected);
  });

  it('reads a runcmd entry written as a list and KUBELET_EXTRA_ARGS from /etc/sysconfig/kubelet, quoted', () => {
    const ud = [
      '#cloud-config',
      'runcmd:',
      `  - [kubeadm, join, "10.0.0.1:443", --token, abcdef.0123456789abcdef, --discovery-token-ca-cert-hash, "${HASH}"]`,
      'write_files:',
      '  - path: /etc/sysconfig/kubelet',
      '    content: "KUBELET_EXTRA_ARGS=\'--hostname-override=n1 --node-labels=a=b\'"',
    ].join('\n');
    expect(joinRequestFromUserData(ud)).toMatchObject({
      join: { endpoint: '10.0.0.1:443', nodeName: undefined },
      nodeName: 'n1',
      labels: { a: 'b' },
      taints: [],
    });
  });

  it('a later write_files entry for the same path wins (cloud-init writes in order)', () => {
    const ud = [
      '#cloud-config',
      `runcmd: ["kubeadm join 10.0.0.1:443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash ${HASH}"]`,
      'write_files:',
      '  - {path: /etc/default/kubelet, content: "KUBELET_EXTRA_ARGS=--node-labels=a=old"}',
      '  - {path: /etc/default/kubelet, content: "KUBELET_EXTRA_ARGS=--node-labels=a=new"}',
    ].join('\n');
    expect(joinRequestFromUserData(ud).labels).toEqual({ a: 'new' });
  });

  it.each([
    ['no join line', '#cloud-config\nruncmd: [echo hi]\n', /no kubeadm join line/],
    ['a script only', '#!/bin/sh\nkubeadm join x\n', /no cloud-config/],
    [
      'a multipart without a boundary',
      'Content-Type: multipart/mixed\nMIME-Version: 1.0\n\nbody\n',
      /boundary/,
    ],
  ])('%s is refused', (_name, ud, err) => {
    expect(() => joinRequestFromUserData(ud)).toThrow(err);
  });
});
