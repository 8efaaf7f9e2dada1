/**
 * Bad Metal3DataTemplates. What the CRD schema can express is refused at the API (422 with the
 * field path). A template that passes the CRD but cannot be rendered for a given machine (a MAC
 * that is not one, a NIC the host does not have, a bond parameter that clashes with a structured
 * field) is recorded by renderData on the Metal3Data (`status.error`, `errorMessage` naming the
 * template field, a Warning Event); no Secret and no IP address is written. A pool that does not
 * exist yet is no error but a wait (test/integration/data/bad-input.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { envelopeOf, R } from '../../shared/api/resources.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { createMachine } from '../helpers/data.ts';
import {
  describeWrites,
  expectRejected,
  NS,
  run,
  statusOf,
  useBadInputCluster,
  warningEvents,
  writes,
} from './harness.ts';

const tc = useBadInputCluster();

const eth = (macAddress: Record<string, unknown>) => ({ type: 'phy', id: 'enp1s0', mtu: 1500, macAddress });

function template(name: string, spec: Record<string, unknown>): KubeObject {
  return {
    metadata: { name, namespace: NS },
    spec: { clusterName: 'cluster', metaData: { strings: [{ key: 'abc', value: 'def' }] }, ...spec },
  };
}

interface RenderCase {
  name: string;
  spec: Record<string, unknown>;
  machineAnnotations?: Record<string, string>;
  reason: string;
  /** errorMessage names the template field at fault. */
  message: RegExp;
  /** A missing pool may still appear: the error is recorded and the message requeued. */
  outcome: 'terminal' | 'requeue';
}

const SEMANTIC: RenderCase[] = [
  {
    name: 'mac-annotation-not-a-mac',
    spec: {
      networkData: {
        links: { ethernets: [eth({ fromAnnotation: { object: 'machine', annotation: 'primary-mac' } })] },
      },
    },
    machineAnnotations: { 'primary-mac': 'not-a-mac' },
    reason: 'RenderFailed',
    message:
      /spec\.networkData\.links\.ethernets\[0\]\.macAddress\.fromAnnotation.*bad MAC address "not-a-mac"/,
    outcome: 'terminal',
  },
  {
    name: 'mac-annotation-missing',
    spec: {
      networkData: {
        links: { ethernets: [eth({ fromAnnotation: { object: 'machine', annotation: 'no-such' } })] },
      },
    },
    reason: 'RenderFailed',
    message: /macAddress\.fromAnnotation.*bad MAC address ""/,
    outcome: 'terminal',
  },
  {
    name: 'mac-from-missing-nic',
    spec: { networkData: { links: { ethernets: [eth({ fromHostInterface: 'eth9' })] } } },
    reason: 'RenderFailed',
    message: /macAddress\.fromHostInterface.*NIC "eth9" not found/,
    outcome: 'terminal',
  },
  {
    name: 'metadata-from-missing-nic',
    spec: { metaData: { fromHostInterfaces: [{ key: 'mac', interface: 'eth7' }] } },
    reason: 'RenderFailed',
    message: /spec\.metaData\.fromHostInterfaces\[0\]\.interface.*NIC "eth7" not found/,
    outcome: 'terminal',
  },
  {
    name: 'bond-parameter-clash',
    spec: {
      networkData: {
        links: {
          ethernets: [eth({ string: '52:54:00:aa:bb:00' })],
          bonds: [
            {
              id: 'bond0',
              mtu: 1500,
              bondMode: 'active-backup',
              bondLinks: ['enp1s0'],
              macAddress: { string: '52:54:00:aa:bb:00' },
              parameters: { mode: 'balance-rr' },
            },
          ],
        },
      },
    },
    reason: 'RenderFailed',
    message: /spec\.networkData\.links\.bonds\[0\]\.parameters\.mode.*illegal bond parameter/,
    outcome: 'terminal',
  },
];

describe('Metal3DataTemplate: accepted by the CRD, refused by renderData', () => {
  it.each(SEMANTIC)('$name: errorMessage on the Metal3Data, no Secret or address written', async (c) => {
    const tname = `t-${c.name}`;
    await tc.client.create(envelopeOf(R.Metal3DataTemplate), template(tname, c.spec));
    await createMachine(tc.client, c.name, tname, { machineAnnotations: c.machineAnnotations ?? {} });
    expect((await run(tc.ctx, 'allocateIndex', R.Metal3DataClaim, c.name)).kind).toBe('done');
    const dataName = `${tname}-0`;
    expect(await tc.client.get(envelopeOf(R.Metal3Data), NS, dataName)).toBeDefined();

    tc.server.log.reset();
    const outcome = await run(tc.ctx, 'renderData', R.Metal3Data, dataName);
    expect(outcome.kind).toBe(c.outcome);
    const data = await tc.client.get(envelopeOf(R.Metal3Data), NS, dataName);
    const st = statusOf(data);
    expect(st.error).toBe(true);
    expect(st.ready).toBe(false);
    expect(String(st.errorMessage)).toMatch(c.message);
    const events = await warningEvents(tc.client, data!);
    expect(events.map((e) => (e as { reason?: string }).reason)).toContain(c.reason);
    expect(events.map((e) => String((e as { message?: string }).message))).toEqual(
      expect.arrayContaining([expect.stringMatching(c.message)]),
    );
    expect(
      describeWrites(writes(tc.server.log, ['secrets', 'ipaddresses', 'ipclaims', 'baremetalhosts'])),
    ).toEqual([]);
    expect(
      (await tc.client.list(R.Secret, NS)).items.filter((s) => s.metadata.name?.startsWith(c.name)),
    ).toEqual([]);

    // A redelivery records nothing new (no second Event, no status churn).
    tc.server.log.reset();
    expect((await run(tc.ctx, 'renderData', R.Metal3Data, dataName)).kind).toBe(c.outcome);
    expect(describeWrites(writes(tc.server.log))).toEqual([]);
  });
});

interface CrdCase {
  name: string;
  spec: Record<string, unknown>;
  field: string;
}

const REJECTED_BY_CRD: CrdCase[] = [
  {
    name: 'bad-mac-string',
    spec: { networkData: { links: { ethernets: [eth({ string: 'zz:zz:zz' })] } } },
    field: 'spec.networkData.links.ethernets[0].macAddress.string',
  },
  {
    name: 'vlan-without-id',
    spec: {
      networkData: {
        links: {
          vlans: [
            { id: 'vlan1', mtu: 1500, vlanLink: 'enp1s0', macAddress: { string: '52:54:00:aa:bb:00' } },
          ],
        },
      },
    },
    field: 'spec.networkData.links.vlans[0].vlanID',
  },
  {
    name: 'vlan-id-out-of-range',
    spec: {
      networkData: {
        links: {
          vlans: [
            {
              id: 'vlan1',
              mtu: 1500,
              vlanID: 5000,
              vlanLink: 'enp1s0',
              macAddress: { string: '52:54:00:aa:bb:00' },
            },
          ],
        },
      },
    },
    field: 'spec.networkData.links.vlans[0].vlanID',
  },
  {
    name: 'unknown-objectnames-object',
    spec: { metaData: { objectNames: [{ key: 'name', object: 'pod' }] } },
    field: 'spec.metaData.objectNames[0].object',
  },
  {
    name: 'unknown-bond-mode',
    spec: {
      networkData: { links: { bonds: [{ id: 'bond0', mtu: 1500, bondMode: 'fastest', bondLinks: [] }] } },
    },
    field: 'spec.networkData.links.bonds[0].bondMode',
  },
];

describe('Metal3DataTemplate: rejected by the CRD with the field path', () => {
  it.each(REJECTED_BY_CRD)('$name: 422 naming $field', async (c) => {
    tc.server.log.reset();
    await expectRejected(tc.client, R.Metal3DataTemplate, template(`crd-${c.name}`, c.spec), c.field);
    expect(describeWrites(writes(tc.server.log, ['secrets', 'metal3datas']))).toEqual([]);
  });
});
