/**
 * Bounded caches of what the server derives from immutable stored objects (or events), keyed by
 * the object itself: its serialized text, its parsed field sets. A cache keyed weakly by the object
 * lived as long as the object: every version the history window holds kept its derived copy too,
 * so the cache grew with the fleet and the window. These keep what was used recently, least
 * recently used out first, as the real cacher keeps an event's serializations only while it
 * dispatches that event (and the real field manager decodes managedFields on every request).
 */
export class LruCache<V> {
  private readonly entries = new Map<object, V>();
  private size = 0;
  private readonly max: number;
  private readonly sizeOf: (v: V) => number;

  /** Keeps entries while the sum of `sizeOf` over them is at most `max`. */
  constructor(max: number, sizeOf: (v: V) => number) {
    this.max = max;
    this.sizeOf = sizeOf;
  }

  get(key: object): V | undefined {
    const v = this.entries.get(key);
    if (v !== undefined) {
      // Most recently used last: Map iteration order is insertion order.
      this.entries.delete(key);
      this.entries.set(key, v);
    }
    return v;
  }

  set(key: object, v: V): void {
    const size = this.sizeOf(v);
    // Larger than the whole budget: it would only evict everything else.
    if (size > this.max) return;
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.entries.delete(key);
      this.size -= this.sizeOf(old);
    }
    this.entries.set(key, v);
    this.size += size;
    for (const [k, o] of this.entries) {
      if (this.size <= this.max) break;
      this.entries.delete(k);
      this.size -= this.sizeOf(o);
    }
  }

  /** The sum of `sizeOf` over the entries kept. */
  get total(): number {
    return this.size;
  }
}

/** Serialized JSON texts, bounded in characters (a character is a byte for the ASCII JSON we serve). */
export class TextCache extends LruCache<string> {
  constructor(maxChars: number) {
    super(maxChars, (t) => t.length);
  }
}
