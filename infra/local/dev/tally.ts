/**
 * Timelines counted by category, kept up to date from the keys the observer reports refreshed:
 * what `dev` waits on (all Ready, all gone) without scanning every timeline on every turn.
 */
import type { ProgressObserver } from './observer.ts';

export class TimelineTally {
  private readonly categoryOf = new Map<string, string>();
  private readonly counts = new Map<string, number>();

  private readonly classify: (key: string) => string | undefined;

  /** `classify` gives a timeline's category, or undefined to leave it uncounted. */
  constructor(observer: ProgressObserver, classify: (key: string) => string | undefined) {
    this.classify = classify;
    for (const key of observer.timelines.keys()) this.refresh(key);
  }

  update(changed: ReadonlySet<string>): void {
    for (const key of changed) this.refresh(key);
  }

  count(category: string): number {
    return this.counts.get(category) ?? 0;
  }

  private refresh(key: string): void {
    const next = this.classify(key);
    const prev = this.categoryOf.get(key);
    if (prev === next) return;
    if (prev !== undefined) this.counts.set(prev, (this.counts.get(prev) ?? 0) - 1);
    if (next === undefined) {
      this.categoryOf.delete(key);
      return;
    }
    this.categoryOf.set(key, next);
    this.counts.set(next, (this.counts.get(next) ?? 0) + 1);
  }
}
