import { describe, expect, it } from 'vitest';
import { type DecisionInput, decideProviderID, type NodeView } from '../../../shared/providerid/index.ts';

const UID = 'd668eb95-5df6-4c10-a01a-fc69f4299fc6';
const NEW = 'metal3://metal3/node-0/test-m3m';
const LEGACY = `metal3://${UID}`;

const node = (name: string, providerID?: string, labels: Record<string, string> = {}): NodeView => ({
  name,
  providerID,
  labels: { 'kubernetes.io/hostname': name, ...labels },
  uid: `uid-${name}`,
});
const labelled = (name: string, providerID?: string): NodeView =>
  node(name, providerID, { 'metal3.io/uuid': UID });

const input = (over: Partial<DecisionInput> = {}): DecisionInput => ({
  namespace: 'metal3',
  machineName: 'test-m3m',
  hostName: 'node-0',
  hostUID: UID,
  hostnames: ['node-0'],
  hasBootstrapConfigRef: true,
  cloudProvider: false,
  legacy: 'accept',
  nodes: [],
  holdsHost: true,
  failed: false,
  ...over,
});

describe('decideProviderID', () => {
  const table: { name: string; in: Partial<DecisionInput>; want: Record<string, unknown> }[] = [
    // Step 1
    {
      name: 'step 1: machine and Node both carry the new ID',
      in: { machineProviderID: NEW, nodes: [labelled('node-0', NEW)] },
      want: { kind: 'ready', step: 1, providerID: NEW, node: 'node-0' },
    },
    {
      name: 'step 1: pivot/move — Node has the new ID, machine none → accept',
      in: { nodes: [labelled('node-0', NEW)] },
      want: { kind: 'ready', step: 1, providerID: NEW, node: 'node-0' },
    },
    {
      name: 'step 1: legacy ID on the Node is accepted by default and copied',
      in: { nodes: [labelled('node-0', LEGACY)] },
      want: { kind: 'ready', step: 1, providerID: LEGACY, node: 'node-0' },
    },
    {
      name: 'step 1: legacy ID matched even without the uuid label',
      in: { nodes: [node('other-name', LEGACY)] },
      want: { kind: 'ready', step: 1, providerID: LEGACY, node: 'other-name' },
    },
    {
      name: 'step 1: legacy ID refused with legacy=refuse',
      in: { legacy: 'refuse', nodes: [labelled('node-0', LEGACY)] },
      want: { kind: 'error', step: 1, reason: 'LegacyProviderIDRefused' },
    },
    {
      name: 'step 1: machine ID differs from the matching Node → mismatch error',
      in: { machineProviderID: NEW, nodes: [labelled('node-0', LEGACY)] },
      want: { kind: 'error', step: 1, reason: 'ProviderIDMismatch' },
    },
    // duplicates
    {
      name: 'duplicate: same new ID on two Nodes',
      in: { nodes: [labelled('a', NEW), node('b', NEW)] },
      want: { kind: 'error', step: 0, reason: 'DuplicateProviderID' },
    },
    {
      name: 'duplicate: same legacy ID on two Nodes',
      in: { nodes: [node('a', LEGACY), node('b', LEGACY)] },
      want: { kind: 'error', step: 0, reason: 'DuplicateProviderID' },
    },
    {
      name: 'duplicate: two Nodes with IDs of the same host (stale machine)',
      in: { nodes: [node('a', 'metal3://metal3/node-0/old-m3m'), labelled('b', NEW)] },
      want: { kind: 'error', step: 0, reason: 'DuplicateHostProviderID' },
    },
    {
      name: 'duplicate: one Node new ID, another legacy ID of this machine',
      in: { nodes: [node('a', LEGACY), labelled('b', NEW)] },
      want: { kind: 'error', step: 1, reason: 'DuplicateProviderID' },
    },
    {
      name: 'duplicates of other machines do not block this one',
      in: {
        nodes: [node('x', 'metal3://metal3/h9/m9'), node('y', 'metal3://metal3/h9/m9'), labelled('node-0')],
      },
      want: { kind: 'setAndPatch', step: 3, providerID: NEW, node: 'node-0' },
    },
    // Step 2
    {
      name: 'step 2: cloud provider set the new ID → copied verbatim',
      in: { cloudProvider: true, nodes: [labelled('node-0', NEW)] },
      want: { kind: 'ready', step: 2, providerID: NEW, node: 'node-0' },
    },
    {
      name: 'step 2: cloud provider set the legacy ID → copied verbatim',
      in: { cloudProvider: true, nodes: [node('node-0', LEGACY)] },
      want: { kind: 'ready', step: 2, providerID: LEGACY, node: 'node-0' },
    },
    {
      name: 'step 2: cloud provider, no matching Node → wait (never patch)',
      in: { cloudProvider: true, nodes: [labelled('node-0')] },
      want: { kind: 'wait', step: 2 },
    },
    // Step 3
    {
      name: 'step 3: one labelled Node without ID → set machine, then patch Node',
      in: { nodes: [labelled('node-0'), node('other')] },
      want: {
        kind: 'setAndPatch',
        step: 3,
        providerID: NEW,
        node: 'node-0',
        // What the decision read: this Node, found by the host's uuid label, with no providerID.
        guard: { uid: 'uid-node-0', labels: { 'metal3.io/uuid': UID }, providerID: undefined },
      },
    },
    {
      name: 'step 3: a labelled Node whose providerID is "" → the guard tests "" (as read)',
      in: { nodes: [labelled('node-0', '')] },
      want: { kind: 'setAndPatch', step: 3, guard: { uid: 'uid-node-0', providerID: '' } },
    },
    {
      name: 'step 3: labelled Node name differs from hostname — label wins',
      in: { hostnames: [], nodes: [labelled('whatever')] },
      want: { kind: 'setAndPatch', step: 3, providerID: NEW, node: 'whatever' },
    },
    {
      name: 'step 3: machine has a legacy ID, Node none → new ID',
      in: { machineProviderID: LEGACY, nodes: [labelled('node-0')] },
      want: { kind: 'setAndPatch', step: 3, providerID: NEW, node: 'node-0' },
    },
    {
      name: 'step 3: zero labelled Nodes with bootstrap configRef → wait',
      in: { nodes: [node('unrelated')] },
      want: { kind: 'wait', step: 3 },
    },
    {
      name: 'step 3: zero labelled, configRef, two unlabelled hostname matches → wait',
      in: { hostnames: ['node-0', 'alias'], nodes: [node('node-0'), node('alias')] },
      want: { kind: 'wait', step: 3 },
    },
    {
      name: 'step 3: two Nodes with one label → hard error',
      in: { nodes: [labelled('a'), labelled('b')] },
      want: { kind: 'error', step: 3, reason: 'MultipleNodesWithUUIDLabel' },
    },
    {
      name: 'step 3: unsupported ID on the labelled Node → error',
      in: { nodes: [labelled('node-0', 'aws:///eu-west-1a/i-123')] },
      want: { kind: 'error', step: 3, reason: 'UnsupportedProviderIDFormat' },
    },
    {
      name: 'step 3: malformed metal3 ID on the labelled Node → unsupported',
      in: { nodes: [labelled('node-0', 'metal3://a/b')] },
      want: { kind: 'error', step: 3, reason: 'UnsupportedProviderIDFormat' },
    },
    {
      name: 'step 3: another machine’s new-format ID on the labelled Node → error',
      in: { nodes: [labelled('node-0', 'metal3://other/h/m')] },
      want: { kind: 'error', step: 3, reason: 'ForeignProviderID' },
    },
    {
      name: 'step 3: a legacy ID of another host on the labelled Node → error',
      in: { nodes: [labelled('node-0', 'metal3://11111111-2222')] },
      want: { kind: 'error', step: 3, reason: 'ForeignProviderID' },
    },
    // Step 4
    {
      name: 'step 4: no configRef, one hostname match → set machine, then patch',
      in: { hasBootstrapConfigRef: false, nodes: [node('node-0'), node('other')] },
      want: {
        kind: 'setAndPatch',
        step: 4,
        providerID: NEW,
        node: 'node-0',
        // Found by its hostname, while it carries no uuid label and no providerID.
        guard: {
          uid: 'uid-node-0',
          labels: { 'kubernetes.io/hostname': 'node-0', 'metal3.io/uuid': null },
          providerID: undefined,
        },
      },
    },
    {
      name: 'step 4: configRef but the label was never configured (single unlabelled hostname match)',
      in: { nodes: [node('node-0')] },
      want: { kind: 'setAndPatch', step: 4, providerID: NEW, node: 'node-0' },
    },
    {
      name: 'step 4: none → assign ID and ready, wait for the Node',
      in: { hasBootstrapConfigRef: false, nodes: [node('other')] },
      want: { kind: 'assignAndWait', step: 4, providerID: NEW },
    },
    {
      name: 'step 4: several → assign and wait, not error',
      in: {
        hasBootstrapConfigRef: false,
        hostnames: ['node-0', 'alias'],
        nodes: [node('node-0'), node('alias')],
      },
      want: { kind: 'assignAndWait', step: 4, providerID: NEW },
    },
    {
      name: 'step 4: no Hostname addresses → assign and wait',
      in: { hasBootstrapConfigRef: false, hostnames: [], nodes: [node('node-0')] },
      want: { kind: 'assignAndWait', step: 4, providerID: NEW },
    },
    {
      name: 'step 4: a hostname match that already has a foreign ID is not a candidate (IDs never change)',
      in: { hasBootstrapConfigRef: false, nodes: [node('node-0', 'metal3://x/y/z')] },
      want: { kind: 'assignAndWait', step: 4, providerID: NEW },
    },
    {
      name: 'step 4: a hostname match labelled for another host is not a candidate',
      in: { hasBootstrapConfigRef: false, nodes: [node('node-0', undefined, { 'metal3.io/uuid': 'other' })] },
      want: { kind: 'assignAndWait', step: 4 },
    },
    {
      name: 'step 4: machine already has the legacy ID → that value is patched (accept)',
      in: { hasBootstrapConfigRef: false, machineProviderID: LEGACY, nodes: [node('node-0')] },
      want: { kind: 'setAndPatch', step: 4, providerID: LEGACY, node: 'node-0' },
    },
    {
      name: 'step 4: machine has the legacy ID and legacy=refuse → error',
      in: {
        hasBootstrapConfigRef: false,
        machineProviderID: LEGACY,
        legacy: 'refuse',
        nodes: [node('node-0')],
      },
      want: { kind: 'error', step: 4, reason: 'LegacyProviderIDRefused' },
    },
    {
      name: 'step 4: machine has a foreign ID → error',
      in: { hasBootstrapConfigRef: false, machineProviderID: 'metal3://x/y/z', nodes: [node('node-0')] },
      want: { kind: 'error', step: 4, reason: 'ProviderIDMismatch' },
    },
    // A machine that does not hold its host never gets that host's ID, whatever the Nodes say.
    ...[
      ['a Node carries the ID (step 1)', { nodes: [labelled('node-0', NEW)] }],
      ['a labelled Node without ID (step 3)', { nodes: [labelled('node-0')] }],
      ['hostname fallback (step 4)', { hasBootstrapConfigRef: false, nodes: [node('node-0')] }],
      ['no Node yet (step 4 would assign)', { hasBootstrapConfigRef: false }],
    ].flatMap(([what, over]) => [
      {
        name: `host consumed by another consumer, ${what as string} → notHeld, nothing written`,
        in: { ...(over as Partial<DecisionInput>), holdsHost: false },
        want: { kind: 'notHeld', reason: 'BareMetalHost metal3/node-0 is not held by this Metal3Machine' },
      },
      {
        name: `machine failed by another step, ${what as string} → notHeld, nothing written`,
        in: { ...(over as Partial<DecisionInput>), failed: true },
        want: { kind: 'notHeld', reason: 'the Metal3Machine has failed' },
      },
    ]),
  ];

  for (const tc of table) {
    it(tc.name, () => {
      expect(decideProviderID(input(tc.in))).toMatchObject(tc.want);
    });
  }

  it('error messages name the offending Nodes and IDs', () => {
    const two = decideProviderID(input({ nodes: [labelled('b'), labelled('a')] }));
    expect(two).toMatchObject({
      kind: 'error',
      message: `more than one Node is labelled metal3.io/uuid=${UID} (a, b): misconfiguration`,
    });
    const bad = decideProviderID(input({ nodes: [labelled('n', 'aws:///i-1')] }));
    expect(bad.kind === 'error' && bad.message).toContain('node using unsupported providerID format');
  });
});
