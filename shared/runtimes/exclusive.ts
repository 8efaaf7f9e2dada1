/**
 * One delivery of a key at a time in this process, as client-go's workqueue guarantees: a second
 * delivery of a key (function + object) that arrives while one runs waits for it, then runs and
 * finds the work done. Every runtime gets this through dispatch, whatever its transport: an HTTP
 * retry racing the first request, an SQS redelivery after a visibility timeout, the same object
 * reaching a worker in two message groups. Across processes the resourceVersion checks and
 * create-by-name stay the guard; this spares duplicates a pointless 409 race with themselves.
 */

interface Line {
  tail: Promise<void>;
  /** Deliveries queued behind the running one. */
  waiting: number;
}

export class KeyedExclusion {
  private readonly lines = new Map<string, Line>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let line = this.lines.get(key);
    const previous = line?.tail;
    if (!line) {
      line = { tail: Promise.resolve(), waiting: 0 };
      this.lines.set(key, line);
    }
    const mine = line;
    if (previous) mine.waiting++;
    const run = (previous ?? Promise.resolve()).then(() => {
      if (previous) mine.waiting--;
      return fn();
    });
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    mine.tail = tail;
    try {
      return await run;
    } finally {
      // Only the last in line forgets the key: the map holds only keys in flight.
      if (mine.tail === tail) this.lines.delete(key);
    }
  }

  /** Deliveries of `key` waiting for the one that runs (tests, metrics). */
  waiting(key: string): number {
    return this.lines.get(key)?.waiting ?? 0;
  }

  /** Keys with a delivery running or waiting. */
  get keysInFlight(): number {
    return this.lines.size;
  }
}

/** The process's exclusion, shared by every runtime in it (dev runs several side by side). */
export const processExclusion = new KeyedExclusion();
