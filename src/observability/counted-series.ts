import { Counter, type CounterConfiguration, type LabelValues } from 'prom-client';

/**
 * One label set of a counter, counted in place: what a request adds to it is one addition to a
 * plain number, with no label set hashed and no object made. prom-client reads the cells when
 * /metrics is scraped.
 */
export class Cell<L extends string> {
  readonly labels: LabelValues<L>;
  count = 0;

  constructor(labels: LabelValues<L>) {
    this.labels = labels;
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
      const cell = new Cell<L>(labels);
      cells.push(cell);
      return cell;
    },
  };
}
