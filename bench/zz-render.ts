import { readFileSync, writeFileSync } from 'node:fs';
import { bigNeighbourSection } from './report-big-neighbour.ts';
const files = process.argv.slice(2);
const runs = files.map((file) => JSON.parse(readFileSync(file, 'utf8')));
writeFileSync('/tmp/bn-section.md', bigNeighbourSection(runs).join('\n'));
