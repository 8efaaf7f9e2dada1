/**
 * `metal3fn render` as a user runs it: a child process on the sample manifests in
 * test/fixtures/render/seed001, and on variants with one bad input each.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..');
const FIXTURE = join(ROOT, 'test', 'fixtures', 'render', 'seed001');
const tmp: string[] = [];

async function render(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [join(ROOT, 'bin', 'metal3fn.ts'), 'render', ...args],
      { cwd: ROOT },
    );
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** A copy of the fixture with `mutate` applied to every object of one file. */
function variant(file: string, mutate: (obj: any) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'render-'));
  tmp.push(dir);
  cpSync(FIXTURE, dir, { recursive: true });
  const docs = parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((d) => d.toJS());
  for (const d of docs) mutate(d);
  writeFileSync(join(dir, file), docs.map((d) => stringify(d)).join('---\n'));
  return dir;
}

afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

describe('metal3fn render', () => {
  it('previews metaData and networkData with the next free index and addresses', async () => {
    const r = await render(['-f', FIXTURE]);
    expect(r.stderr).toContain('nodepool-1-1');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.metaData).toEqual({
      mac: '52:54:00:aa:bb:00',
      // seed 001 writes the key "ip" for both the address and the prefix: the prefix (later) wins.
      ip: '24',
      gateway: '192.168.0.1',
      dns: '8.8.8.8',
      index: '1',
      name_m3m: 'worker-a-m3m',
      name_machine: 'worker-a',
      name_bmh: 'node-1',
      'label-1': 'label-value',
      'annotation-1': 'annotation-value',
      abc: 'def',
      providerid: 'metal3/node-1/worker-a-m3m',
    });
    const v4 = out.networkData.networks.find((n: { id: string }) => n.id === 'Baremetal');
    // 192.168.0.10 is taken by an existing IPAddress in the manifests.
    expect(v4).toMatchObject({ type: 'ipv4', ip_address: '192.168.0.11', netmask: '255.255.255.0' });
    expect(out.networkData.networks.find((n: { id: string }) => n.id === 'Baremetal6')).toMatchObject({
      ip_address: '2001:db8::10',
      netmask: 'ffff:ffff:ffff:ffff::',
    });
    expect(out.networkData.links.map((l: { id: string }) => l.id)).toEqual([
      'bond0',
      'enp1s0',
      'enp2s0',
      'vlan1',
    ]);
  });

  it('--index and -o yaml', async () => {
    const r = await render(['-f', FIXTURE, '--machine', 'worker-a-m3m', '--index', '7', '-o', 'yaml']);
    expect(r.code).toBe(0);
    const out = parse(r.stdout);
    expect(out.metaData.index).toBe('7');
    expect(typeof out.networkData.links[0].mtu).toBe('number');
  });

  it('usage errors exit 2', async () => {
    expect((await render([])).code).toBe(2);
    expect((await render(['-f', FIXTURE, '--index', '-1'])).code).toBe(2);
    expect((await render(['-f', FIXTURE, '-o', 'xml'])).code).toBe(2);
  });

  const bad: [string, string, (o: any) => void, RegExp][] = [
    [
      'unknown object kind in objectNames',
      '10-template.yaml',
      (o) => {
        o.spec.metaData.objectNames[0].object = 'node';
      },
      /spec\.metaData\.objectNames\[0\]\.object/,
    ],
    [
      'missing pool',
      '10-template.yaml',
      (o) => {
        o.spec.networkData.networks.ipv4[0].ipAddressFromIPPool = 'pool-missing';
      },
      /IPPool metal3\/pool-missing referenced by the template not found/,
    ],
    [
      'bad MAC (from an annotation)',
      '20-machine.yaml',
      (o) => {
        if (o.kind === 'Machine') o.metadata.annotations['primary-mac'] = 'not-a-mac';
      },
      /spec\.networkData\.links\.ethernets\[0\]\.macAddress\.fromAnnotation: bad MAC address "not-a-mac"/,
    ],
    [
      'missing NIC',
      '10-template.yaml',
      (o) => {
        o.spec.metaData.fromHostInterfaces[0].interface = 'eth9';
      },
      /spec\.metaData\.fromHostInterfaces\[0\].*NIC "eth9" not found/,
    ],
    [
      'vlan without id',
      '10-template.yaml',
      (o) => {
        delete o.spec.networkData.links.vlans[0].vlanID;
      },
      /spec\.networkData\.links\.vlans\[0\]\.vlanID/,
    ],
    [
      'illegal bond parameter',
      '10-template.yaml',
      (o) => {
        o.spec.networkData.links.bonds[0].parameters = { mode: 'balance-rr' };
      },
      /spec\.networkData\.links\.bonds\[0\]\.parameters\.mode: illegal bond parameter/,
    ],
    [
      'exhausted pool',
      '30-pools.yaml',
      (o) => {
        if (o.kind === 'IPPool' && o.metadata.name === 'pool-1')
          o.spec.pools = [{ start: '192.168.0.10', end: '192.168.0.10' }];
      },
      /Exhausted IP Pools/,
    ],
  ];

  for (const [what, file, mutate, message] of bad) {
    it(`bad input: ${what} -> exit 1 and a clear message`, async () => {
      const r = await render(['-f', variant(file, mutate)]);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
    });
  }
});
