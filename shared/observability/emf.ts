/**
 * Metrics gathered during one Lambda invocation and written at its end through Powertools Metrics
 * as CloudWatch Embedded Metric Format (one JSON line per set of dimension values, which CloudWatch
 * turns into metrics without an API call). Counts of a set are summed; durations keep each value
 * (CloudWatch computes percentiles from them). Powertools holds one value per dimension in a line,
 * so each set of values is its own line.
 */
import type { Metrics } from '@aws-lambda-powertools/metrics';

/** The part of Powertools' Metrics this uses. */
export type EmfSink = Pick<Metrics, 'addDimensions' | 'addMetric' | 'publishStoredMetrics'>;
export type Dimensions = Readonly<Record<string, string>>;

/** Powertools publishes on its own when a metric reaches 100 values, which would drop the dimensions. */
const MAX_VALUES_PER_LINE = 99;

interface Group {
  dims: Dimensions;
  counts: Map<string, number>;
  seconds: Map<string, number[]>;
}

export class EmfBatch {
  private readonly groups = new Map<string, Group>();
  private readonly sink: EmfSink;

  constructor(sink: EmfSink) {
    this.sink = sink;
  }

  count(name: string, dims: Dimensions, n = 1): void {
    const g = this.group(dims);
    g.counts.set(name, (g.counts.get(name) ?? 0) + n);
  }

  seconds(name: string, dims: Dimensions, value: number): void {
    const g = this.group(dims);
    const values = g.seconds.get(name);
    if (values) values.push(value);
    else g.seconds.set(name, [value]);
  }

  /** Writes what was gathered (nothing when nothing was) and starts over. */
  flush(): void {
    const groups = [...this.groups.values()];
    this.groups.clear();
    for (const g of groups) {
      const pending = [...g.seconds].map(([name, values]) => ({ name, values: [...values] }));
      let counts = true;
      while (counts || pending.some((p) => p.values.length > 0)) {
        if (Object.keys(g.dims).length > 0) this.sink.addDimensions({ ...g.dims });
        if (counts) for (const [name, n] of g.counts) this.sink.addMetric(name, 'Count', n);
        counts = false;
        for (const p of pending)
          for (const v of p.values.splice(0, MAX_VALUES_PER_LINE)) this.sink.addMetric(p.name, 'Seconds', v);
        this.sink.publishStoredMetrics();
      }
    }
  }

  private group(dims: Dimensions): Group {
    const key = JSON.stringify(Object.entries(dims).sort(([a], [b]) => a.localeCompare(b)));
    let g = this.groups.get(key);
    if (!g) {
      g = { dims, counts: new Map(), seconds: new Map() };
      this.groups.set(key, g);
    }
    return g;
  }
}
