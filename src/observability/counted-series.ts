import { Counter, Histogram, type CounterConfiguration, type HistogramConfiguration, type LabelValues, type MetricObjectWithValues, type MetricValueWithName } from 'prom-client';

/**
 * One label set of a counter or a histogram, counted in place: what a request adds to it is a few
 * additions to plain numbers, with no label set hashed and no object made. prom-client reads the
 * cells when /metrics is scraped.
 */
export class Cell<L extends string> {
  readonly labels: LabelValues<L>;
  count = 0;
  sum = 0;
  /** Observations per bucket (not cumulative): the last one is above every bound. */
  readonly buckets: Float64Array;
  readonly #bounds: readonly number[];

  constructor(labels: LabelValues<L>, bounds: readonly number[]) {
    this.labels = labels;
    this.#bounds = bounds;
    this.buckets = new Float64Array(bounds.length + 1);
  }

  /** One observation of a histogram's cell (a counter's cell adds to `count` alone). */
  observe(value: number): void {
    this.count += 1;
    this.sum += value;
    let i = 0;
    while (i < this.#bounds.length && value > this.#bounds[i]!) i += 1;
    this.buckets[i]! += 1;
  }
}

/** A prom-client counter whose label sets are cells, summed when scraped. */
export function countedCounter<L extends string>(configuration: CounterConfiguration<L>): { counter: Counter<L>; cell(labels: LabelValues<L>): Cell<L> } {
  const cells: Array<Cell<L>> = [];
  const counter = new Counter<L>({
    ...configuration,
    collect() {
      this.reset();
      for (const cell of cells) this.inc(cell.labels, cell.count);
    },
  });
  return {
    counter,
    cell(labels) {
      const cell = new Cell<L>(labels, []);
      cells.push(cell);
      return cell;
    },
  };
}

/**
 * A prom-client histogram whose label sets are cells: `get`, what the registry reads when
 * scraped, gives the cells' buckets in the form prom-client's own histograms give theirs.
 */
export class CountedHistogram<L extends string> extends Histogram<L> {
  readonly #cells: Array<Cell<L>> = [];
  readonly #bounds: number[];
  readonly #name: string;

  constructor(configuration: HistogramConfiguration<L> & { buckets: number[] }) {
    super(configuration);
    this.#bounds = [...configuration.buckets];
    this.#name = configuration.name;
  }

  cell(labels: LabelValues<L>): Cell<L> {
    const cell = new Cell<L>(labels, this.#bounds);
    this.#cells.push(cell);
    return cell;
  }

  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<L>>> {
    // prom-client's own answer for this histogram (no label set observed through it), with the cells' values.
    const metric = await super.get();
    const bucket = `${this.#name}_bucket`;
    const values: Array<MetricValueWithName<L>> = [];
    const withBound = (cell: Cell<L>, le: number | string): LabelValues<string> => ({ ...cell.labels, le });
    for (const cell of this.#cells) {
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += cell.buckets[i]!;
        values.push({ labels: withBound(cell, bound), value: cumulative, metricName: bucket });
      });
      values.push(
        { labels: withBound(cell, '+Inf'), value: cell.count, metricName: bucket },
        { labels: cell.labels, value: cell.sum, metricName: `${this.#name}_sum` },
        { labels: cell.labels, value: cell.count, metricName: `${this.#name}_count` },
      );
    }
    metric.values = values;
    return metric;
  }
}
