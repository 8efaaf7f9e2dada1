/**
 * Field ownership through a write, as structured-merge-diff's merge.Updater: an update takes
 * ownership of what it changed (and takes it away from every other manager); an apply owns
 * exactly what its configuration sets, conflicts with other managers over fields whose value it
 * changes (unless forced), and removes the fields it applied last time but no longer applies,
 * unless another manager owns them (prune with addBackOwnedItems / addBackDanglingItems).
 * Every manager is compared at the request's version: the embedded server's versions share one
 * storage shape (a CRD's "None" conversion), so no conversion between versions is needed.
 */
import { deepEqual } from '../patch.ts';
import { FieldSet, type Path } from './fieldpath.ts';
import type { Atom } from './types.ts';
import {
  type Comparison,
  compare,
  ensureNamedFieldsAreMembers,
  merge,
  removeItems,
  toFieldSet,
} from './walk.ts';

export interface VersionedSet {
  set: FieldSet;
  apiVersion: string;
  applied: boolean;
}

/** Manager identifier (see managed.ts) → what it owns. */
export type Managers = Map<string, VersionedSet>;

export interface Conflict {
  manager: string;
  path: Path;
}

/** Apply conflicts (merge.Conflicts), carried out of the updater. */
export class ConflictsError extends Error {
  override readonly name = 'ConflictsError';
  readonly conflicts: Conflict[];
  constructor(conflicts: Conflict[]) {
    super(`${conflicts.length} conflicts`);
    this.conflicts = conflicts;
  }
}

/** The reset fields a strategy ignores (fieldpath.NewExcludeSetFilter: a recursive difference). */
const filtered = (s: FieldSet, ignore: FieldSet | undefined) => (ignore ? s.recursiveDifference(ignore) : s);

function filterComparison(c: Comparison, ignore: FieldSet | undefined): Comparison {
  if (!ignore) return c;
  return {
    added: c.added.recursiveDifference(ignore),
    modified: c.modified.recursiveDifference(ignore),
    removed: c.removed.recursiveDifference(ignore),
  };
}

export class Updater {
  private readonly atom: Atom;
  private readonly ignore: FieldSet | undefined;

  constructor(atom: Atom, ignore?: FieldSet) {
    this.atom = atom;
    this.ignore = ignore;
  }

  /** Takes conflicting and removed fields away from every manager but `workflow` (merge/update.go update). */
  private update(
    oldObj: unknown,
    newObj: unknown,
    managers: Managers,
    workflow: string,
    force: boolean,
  ): Comparison {
    const cmp = filterComparison(compare(oldObj, newObj, this.atom), this.ignore);
    const changed = cmp.modified.union(cmp.added);
    const conflicts = new Map<string, FieldSet>();
    for (const [m, vs] of managers) {
      if (m === workflow) continue;
      const c = vs.set.intersection(changed);
      if (!c.empty()) conflicts.set(m, c);
    }
    if (!force && conflicts.size > 0) {
      const list: Conflict[] = [];
      for (const m of [...conflicts.keys()].sort())
        conflicts.get(m)!.iterate((path) => list.push({ manager: m, path }));
      throw new ConflictsError(list);
    }
    for (const [m, vs] of managers) {
      if (m === workflow) continue;
      let set = vs.set;
      const c = conflicts.get(m);
      if (c) set = set.difference(c);
      if (!cmp.removed.empty()) set = set.difference(cmp.removed);
      if (set !== vs.set) managers.set(m, { ...vs, set });
    }
    for (const [m, vs] of managers) if (vs.set.empty()) managers.delete(m);
    return cmp;
  }

  /** An update by `manager` from `live` to `next` (Updater.Update). */
  updateManagers(live: unknown, next: unknown, version: string, managers: Managers, manager: string): void {
    const cmp = this.update(live, next, managers, manager, true);
    const prev = managers.get(manager)?.set ?? new FieldSet();
    const set = filtered(prev.difference(cmp.removed).union(cmp.modified).union(cmp.added), this.ignore);
    if (set.empty()) managers.delete(manager);
    else managers.set(manager, { set, apiVersion: version, applied: false });
  }

  /**
   * An apply of `config` by `manager` (Updater.Apply): the object to store, or undefined when it
   * would not change. Throws ConflictsError unless `force`.
   */
  apply(
    live: unknown,
    config: unknown,
    version: string,
    managers: Managers,
    manager: string,
    force: boolean,
  ): unknown {
    let next = merge(live, config, this.atom);
    const last = managers.get(manager);
    const set = filtered(toFieldSet(config, this.atom), this.ignore);
    managers.set(manager, { set, apiVersion: version, applied: true });
    next = this.prune(next, managers, last);
    this.update(live, next, managers, manager, force);
    return deepEqual(live, next) ? undefined : next;
  }

  private prune(merged: unknown, managers: Managers, last: VersionedSet | undefined): unknown {
    if (!last || last.set.empty()) return merged;
    const a = this.atom;
    const ensure = (s: FieldSet) => ensureNamedFieldsAreMembers(s, a);
    let pruned = removeItems(merged, ensure(last.set), a);
    // Add back what other managers (or this apply) still own.
    let managed = new FieldSet();
    for (const vs of managers.values()) managed = managed.union(vs.set);
    const mergedSet = ensure(toFieldSet(merged, a));
    pruned = removeItems(
      merged,
      mergedSet.difference(ensure(toFieldSet(pruned, a)).union(ensure(managed))),
      a,
    );
    // Add back what was removed but never owned by this manager (dangling, or owned by updaters).
    const prunedSet = ensure(toFieldSet(pruned, a));
    return removeItems(merged, mergedSet.difference(prunedSet).intersection(ensure(last.set)), a);
  }
}
