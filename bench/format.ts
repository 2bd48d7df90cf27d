/** How the bench's report writes numbers, ratios and tables. */
import { median } from './load.ts';

export const round = (value: number | undefined, digits = 1) => (value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
export const range = (values: number[] = []) => (values.length ? `${round(Math.min(...values), 2)}–${round(Math.max(...values), 2)}` : 'n/a');
/** A ratio as the median of the rounds' ratios, bold, with their range. */
export const ratioCell = (values: number[] = []) => (values.length ? `**${round(median(values), 2)}×** (${range(values)})` : 'n/a');
/** The same without the bold, for running text. */
export const ratioText = (values: number[] = []) => (values.length ? `${round(median(values), 2)}× (${range(values)})` : 'n/a');
export const percent = (part: number, whole: number) => `${round((part / whole) * 100, 0)} %`;
export const table = (head: string[], rows: string[][]) => [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)];
