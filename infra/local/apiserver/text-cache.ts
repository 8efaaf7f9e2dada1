/**
 * Serialized text of immutable stored objects (or events), keyed by the object itself and bounded
 * in bytes, least recently used out first. A cache keyed weakly by the object lived as long as the
 * object: every version the history window holds kept its text too, so the cache grew with the
 * fleet and the window. This one keeps what was read or dispatched recently, as the real cacher
 * keeps an event's serializations only while it dispatches that event.
 */
export class TextCache {
  private readonly texts = new Map<object, string>();
  private size = 0;
  private readonly maxChars: number;

  /** `maxChars`: total length of the texts kept (a character is a byte for the ASCII JSON we serve). */
  constructor(maxChars: number) {
    this.maxChars = maxChars;
  }

  get(key: object): string | undefined {
    const text = this.texts.get(key);
    if (text !== undefined) {
      // Most recently used last: Map iteration order is insertion order.
      this.texts.delete(key);
      this.texts.set(key, text);
    }
    return text;
  }

  set(key: object, text: string): void {
    // Larger than the whole budget: it would only evict everything else.
    if (text.length > this.maxChars) return;
    const old = this.texts.get(key);
    if (old !== undefined) {
      this.texts.delete(key);
      this.size -= old.length;
    }
    this.texts.set(key, text);
    this.size += text.length;
    for (const [k, t] of this.texts) {
      if (this.size <= this.maxChars) break;
      this.texts.delete(k);
      this.size -= t.length;
    }
  }

  /** Total length of the texts kept. */
  get chars(): number {
    return this.size;
  }
}
