/**
 * Bounded caches of what the server derives from immutable stored objects (or events), keyed by
 * the object itself: its serialized text, its parsed field sets. A cache whose values lived as
 * long as their object (a WeakMap) kept a derived copy for every version the history window holds,
 * so it grew with the fleet and the window; one whose keys lived as long as the cache (a Map) kept
 * versions the server had dropped. These keep values for what was used recently, least recently
 * used out first, as the real cacher keeps an event's serializations only while it dispatches that
 * event (and the real field manager decodes managedFields on every request), and hold no key alive.
 */
export class LruCache<V> {
  /**
   * Keyed weakly, the value behind a slot: a key the server no longer holds (a version the history
   * dropped, a version rebuilt for one read) is not kept alive by the cache. Held strongly, the
   * keys of the object-JSON cache were a fifth of its bytes at 10,000 machines (old versions of the
   * per-machine maps, docs/benchmarks.md "Fleet end state").
   */
  private readonly slots = new WeakMap<object, { v: V | undefined }>();
  /** The slots holding a value, least recently used first (a Set iterates in insertion order). */
  private readonly order = new Set<{ v: V | undefined }>();
  private size = 0;
  private readonly max: number;
  private readonly sizeOf: (v: V) => number;
  private readonly largest: number;

  /**
   * Keeps values while the sum of `sizeOf` over them is at most `max`; a value whose size is above
   * `largest` is not kept. What is cached here lives as long as its object's version, and a large
   * object's versions come in bursts (a status map with an entry per machine, rewritten by every
   * allocation batch): kept, each value survives the young generation and is garbage in the old one
   * as soon as the next version replaces it, in V8's large-object space (a value from ~128 KB on),
   * whose pages only a full collection frees. Made again when asked, it dies young.
   * docs/benchmarks.md "Map writes" (ADR 036).
   */
  constructor(max: number, sizeOf: (v: V) => number, largest = max) {
    this.max = max;
    this.sizeOf = sizeOf;
    this.largest = Math.min(largest, max);
  }

  get(key: object): V | undefined {
    const slot = this.slots.get(key);
    if (slot?.v === undefined) return undefined;
    this.order.delete(slot);
    this.order.add(slot);
    return slot.v;
  }

  set(key: object, v: V): void {
    const size = this.sizeOf(v);
    // Larger than allowed (at most the whole budget: it would only evict everything else).
    if (size > this.largest) return;
    let slot = this.slots.get(key);
    if (!slot) {
      slot = { v: undefined };
      this.slots.set(key, slot);
    }
    if (slot.v !== undefined) {
      this.order.delete(slot);
      this.size -= this.sizeOf(slot.v);
    }
    slot.v = v;
    this.order.add(slot);
    this.size += size;
    for (const s of this.order) {
      if (this.size <= this.max) break;
      this.order.delete(s);
      this.size -= this.sizeOf(s.v!);
      s.v = undefined;
    }
  }

  /** Drops the value kept for `key`, if any. */
  delete(key: object): void {
    const slot = this.slots.get(key);
    if (slot?.v === undefined) return;
    this.order.delete(slot);
    this.size -= this.sizeOf(slot.v);
    slot.v = undefined;
  }

  /** The sum of `sizeOf` over the values kept. */
  get total(): number {
    return this.size;
  }
}

/**
 * The longest text the text caches keep: V8 allocates a string longer than this (128 KiB of
 * one-byte characters, its largest regular object) in its large-object space.
 */
export const LARGEST_CACHED_TEXT = 128 * 1024;

/** Serialized JSON texts, bounded in characters (a character is a byte for the ASCII JSON we serve). */
export class TextCache extends LruCache<string> {
  constructor(maxChars: number, largest = LARGEST_CACHED_TEXT) {
    super(maxChars, (t) => t.length, largest);
  }
}
