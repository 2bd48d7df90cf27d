/**
 * `tsx bench/render.ts <results.json> [<other run's results.json>]`: writes docs/benchmarks.md (or
 * BENCH_REPORT) again from the results a run saved with BENCH_RESULTS_OUT, with another Node.js
 * version's run beside it, without measuring anything again.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fromJson } from './report-node-versions.ts';
import { renderReport } from './report.ts';

const [resultsFile, otherFile] = process.argv.slice(2);
if (!resultsFile) throw new Error('usage: tsx bench/render.ts <results.json> [<other run results.json>]');
const read = async (file: string) => fromJson(JSON.parse(await readFile(file, 'utf8')));
const report = renderReport(await read(resultsFile), otherFile ? await read(otherFile) : undefined);
await writeFile(process.env.BENCH_REPORT ?? new URL('../docs/benchmarks.md', import.meta.url), report);
process.stdout.write(`written from ${resultsFile}${otherFile ? ` beside ${otherFile}` : ''}\n`);
