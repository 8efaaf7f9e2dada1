import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { LARGEST_CACHED_TEXT, TextCache } from './lru.ts';

describe('bounded caches keyed by stored objects', () => {
  it('keeps the most recently used texts within the budget, whatever the objects it saw', () => {
    const cache = new TextCache(100);
    const keys = Array.from({ length: 50 }, () => ({}));
    for (const k of keys) cache.set(k, 'x'.repeat(10));
    expect(cache.total).toBe(100);
    // The last ten stay; a read makes an entry the last one out.
    expect(cache.get(keys[39]!)).toBeUndefined();
    expect(cache.get(keys[40]!)).toBe('x'.repeat(10));
    cache.set({}, 'y'.repeat(10));
    expect(cache.get(keys[40]!)).toBe('x'.repeat(10));
    expect(cache.get(keys[41]!)).toBeUndefined();
    // A text larger than the budget is not kept (it would only evict everything else).
    cache.set({}, 'z'.repeat(101));
    expect(cache.total).toBe(100);
  });

  it('does not keep a value above its largest, nor one whose key a write replaced', () => {
    const cache = new TextCache(1000, 20);
    const a = {};
    const b = {};
    cache.set(a, 'x'.repeat(20));
    cache.set(b, 'y'.repeat(21));
    expect(cache.get(a)).toBe('x'.repeat(20));
    expect(cache.get(b)).toBeUndefined();
    expect(cache.total).toBe(20);
    cache.delete(a);
    expect(cache.get(a)).toBeUndefined();
    expect(cache.total).toBe(0);
    // The server's text caches keep no text V8 puts in its large-object space.
    const server = new TextCache(32 * 1024 * 1024);
    server.set(a, 'z'.repeat(LARGEST_CACHED_TEXT));
    server.set(b, 'z'.repeat(LARGEST_CACHED_TEXT + 1));
    expect(server.get(a)).toBeDefined();
    expect(server.get(b)).toBeUndefined();
  });

  it('does not keep alive a key nothing else holds (an old version the history dropped)', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const cache = new TextCache(1000);
    const held = {};
    cache.set(held, 'a');
    const dropped = new WeakRef(
      (() => {
        const k = {};
        cache.set(k, 'b');
        return k;
      })(),
    );
    // WeakRef targets are kept until the current job ends.
    await new Promise((r) => setTimeout(r, 0));
    gc();
    expect(dropped.deref()).toBeUndefined();
    expect(cache.get(held)).toBe('a');
  });
});
