import { describe, expect, it } from 'vitest';
import { formatPlan, type MigrationCluster, planMigration } from '../../../shared/providerid/index.ts';

const PLAN = '2026-06-01T12:00:00Z';
const CREATED = '2026-01-01T00:00:00Z';

const cluster = (over: Partial<MigrationCluster> = {}): MigrationCluster => ({
  namespace: 'metal3',
  name: 'c1',
  cloudProvider: false,
  machines: [
    {
      name: 'cp-0',
      providerID: 'metal3://uid-0',
      creationTimestamp: CREATED,
      owner: { kind: 'KubeadmControlPlane', name: 'kcp' },
    },
    {
      name: 'cp-1',
      providerID: 'metal3://metal3/h1/cp-1',
      creationTimestamp: CREATED,
      owner: { kind: 'KubeadmControlPlane', name: 'kcp' },
    },
    {
      name: 'w-0',
      providerID: 'metal3://uid-2',
      creationTimestamp: CREATED,
      owner: { kind: 'MachineDeployment', name: 'md' },
    },
  ],
  nodes: [
    { name: 'n0', providerID: 'metal3://uid-0' },
    { name: 'n1', providerID: 'metal3://metal3/h1/cp-1' },
    { name: 'n2', providerID: 'metal3://uid-2' },
  ],
  hosts: [
    { name: 'h0', uid: 'uid-0', consumer: 'cp-0' },
    { name: 'h1', uid: 'uid-1', consumer: 'cp-1' },
    { name: 'h2', uid: 'uid-2', consumer: 'w-0' },
  ],
  ...over,
});

describe('planMigration', () => {
  it('plans a rolling replacement per owner for legacy machines only', () => {
    const plan = planMigration([cluster()], PLAN);
    expect(plan.rows).toEqual([
      {
        cluster: 'metal3/c1',
        machine: 'cp-0',
        host: 'h0',
        node: 'n0',
        currentID: 'metal3://uid-0',
        owner: 'KubeadmControlPlane/kcp',
        action: 'roll',
        reason: `set KubeadmControlPlane/kcp spec.rolloutAfter=${PLAN}: rolling replacement`,
      },
      {
        cluster: 'metal3/c1',
        machine: 'w-0',
        host: 'h2',
        node: 'n2',
        currentID: 'metal3://uid-2',
        owner: 'MachineDeployment/md',
        action: 'roll',
        reason: `set MachineDeployment/md spec.rolloutAfter=${PLAN}: rolling replacement`,
      },
    ]);
    expect(plan.owners).toEqual([
      {
        namespace: 'metal3',
        cluster: 'metal3/c1',
        kind: 'KubeadmControlPlane',
        name: 'kcp',
        action: 'set',
        rolloutAfter: PLAN,
        machines: ['cp-0'],
      },
      {
        namespace: 'metal3',
        cluster: 'metal3/c1',
        kind: 'MachineDeployment',
        name: 'md',
        action: 'set',
        rolloutAfter: PLAN,
        machines: ['w-0'],
      },
    ]);
    expect(plan.remaining).toBe(4);
    expect(plan.migratable).toBe(4);
    expect(formatPlan(plan).split('\n')[0]).toMatch(
      /^CLUSTER\s+MACHINE\s+HOST\s+NODE\s+CURRENT-ID\s+OWNER\s+ACTION\s+REASON$/,
    );
  });

  it('keeps a rolloutAfter that already covers the machines (resumed run) and one scheduled later', () => {
    const base = cluster();
    base.machines[0]!.owner = {
      kind: 'KubeadmControlPlane',
      name: 'kcp',
      rolloutAfter: '2026-03-01T00:00:00Z',
    };
    base.machines[2]!.owner = { kind: 'MachineDeployment', name: 'md', rolloutAfter: '2025-12-01T00:00:00Z' };
    const plan = planMigration([base], PLAN);
    expect(plan.owners.map((o) => [o.name, o.action, o.rolloutAfter])).toEqual([
      ['kcp', 'keep', '2026-03-01T00:00:00Z'],
      ['md', 'set', PLAN],
    ]);
    const future = cluster();
    future.machines[0]!.owner = {
      kind: 'KubeadmControlPlane',
      name: 'kcp',
      rolloutAfter: '2027-01-01T00:00:00Z',
    };
    expect(planMigration([future], PLAN).owners[0]).toMatchObject({
      action: 'keep',
      rolloutAfter: '2027-01-01T00:00:00Z',
    });
  });

  it('refuses ambiguous cases with a reason', () => {
    const plan = planMigration(
      [
        cluster({
          machines: [
            { name: 'a', providerID: 'metal3://uid-x', owner: { kind: 'KubeadmControlPlane', name: 'kcp' } },
            { name: 'b', providerID: 'metal3://uid-1', owner: { kind: 'KubeadmControlPlane', name: 'kcp' } },
            { name: 'c', providerID: 'metal3://uid-2', ownerProblem: 'no owner Machine' },
          ],
          nodes: [
            { name: 'n1', providerID: 'metal3://uid-1' },
            { name: 'n1b', providerID: 'metal3://uid-1' },
            { name: 'orphan', providerID: 'metal3://uid-9' },
          ],
          hosts: [
            { name: 'h1', uid: 'uid-1', consumer: 'b' },
            { name: 'h2', uid: 'uid-2', consumer: 'c' },
          ],
        }),
      ],
      PLAN,
    );
    expect(plan.rows.map((r) => [r.machine ?? '-', r.action, r.reason])).toEqual([
      ['a', 'refuse', 'uid uid-x matches no BareMetalHost'],
      ['b', 'refuse', '2 Nodes carry metal3://uid-1'],
      ['c', 'refuse', 'no owner Machine'],
      ['-', 'refuse', 'uid uid-9 matches no BareMetalHost'],
    ]);
    expect(plan.owners).toEqual([]);
    expect(plan.remaining).toBe(6);
    expect(plan.migratable).toBe(0);
  });

  it('progress during a rollout counts every legacy ID except those refused at the start', () => {
    // The machine is gone, its legacy Node lingers (its host has no consumer any more): still counted.
    const mid = cluster({
      machines: [],
      nodes: [
        { name: 'n0', providerID: 'metal3://uid-0' },
        { name: 'orphan', providerID: 'metal3://uid-9' },
      ],
      hosts: [{ name: 'h0', uid: 'uid-0' }],
    });
    const plan = planMigration([mid], PLAN, new Set(['metal3://uid-9']));
    expect(plan.rows.map((r) => r.action)).toEqual(['refuse', 'refuse']);
    expect(plan.remaining).toBe(2);
    expect(plan.migratable).toBe(1);
  });

  it('never touches a cloud-provider cluster', () => {
    const plan = planMigration([cluster({ cloudProvider: true })], PLAN);
    expect(
      plan.rows.every((r) => r.action === 'refuse' && r.reason.startsWith('cloud-provider cluster')),
    ).toBe(true);
    expect(plan.owners).toEqual([]);
  });

  it('finds a machine through its host when only the Node is still legacy', () => {
    const plan = planMigration(
      [
        cluster({
          machines: [{ name: 'w-0', owner: { kind: 'MachineDeployment', name: 'md' } }],
          nodes: [{ name: 'n2', providerID: 'metal3://uid-2' }],
        }),
      ],
      PLAN,
    );
    expect(plan.rows).toMatchObject([{ machine: 'w-0', host: 'h2', node: 'n2', action: 'roll' }]);
    expect(plan.remaining).toBe(1);
  });

  it('nothing legacy: empty plan', () => {
    const plan = planMigration(
      [cluster({ machines: [], nodes: [{ name: 'n', providerID: 'metal3://metal3/h/m' }] })],
      PLAN,
    );
    expect(plan).toEqual({ planTime: PLAN, rows: [], owners: [], remaining: 0, migratable: 0 });
  });
});
