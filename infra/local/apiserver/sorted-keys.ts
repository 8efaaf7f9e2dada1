/**
 * A set of object keys (`ns/name`) kept in sort order, for the store's lists and label indexes:
 * a list reads its page from where it starts instead of sorting every key it might return.
 *
 * Keys added since the last read wait unsorted; the next read inserts a few by binary search or,
 * when many came at once (a restart loading its state, a burst of creates), sorts once.
 */
export class SortedKeys {
  private sorted: string[] = [];
  private readonly pending = new Set<string>();

  get size(): number {
    return this.sorted.length + this.pending.size;
  }

  add(key: string): void {
    if (!this.pending.has(key) && !this.has(key)) this.pending.add(key);
  }

  delete(key: string): boolean {
    if (this.pending.delete(key)) return true;
    const i = this.search(key);
    if (this.sorted[i] !== key) return false;
    this.sorted.splice(i, 1);
    return true;
  }

  /** Keys >= `start` that begin with `prefix`, in order. Do not write to the set while iterating. */
  *from(start: string, prefix = ''): Generator<string> {
    this.settle();
    const keys = this.sorted;
    for (let i = this.search(start); i < keys.length; i++) {
      const k = keys[i]!;
      if (prefix && !k.startsWith(prefix)) return;
      yield k;
    }
  }

  private has(key: string): boolean {
    return this.sorted[this.search(key)] === key;
  }

  /** The first position whose key is >= `key` (of the sorted part). */
  private search(key: string): number {
    const keys = this.sorted;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (keys[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private settle(): void {
    if (!this.pending.size) return;
    // A splice moves the keys after it: a few inserts beat a sort, many do not.
    if (this.pending.size * 16 < this.sorted.length) {
      for (const k of this.pending) this.sorted.splice(this.search(k), 0, k);
    } else {
      this.sorted = [...this.sorted, ...this.pending].sort();
    }
    this.pending.clear();
  }
}
