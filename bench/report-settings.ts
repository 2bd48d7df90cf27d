/** The report's section on what a setting costs (bench/settings-cost.ts). */
import { ratioCell, round as fixed, table } from './format.ts';
import { LABEL } from './servers.ts';
import type { SettingRow } from './settings-cost.ts';

export interface SettingsResults {
  rows: SettingRow[];
  /** What the OTLP receiver took in while the traced facades were loaded. */
  exported: { exports: number; bytes: number; requests: number };
  /** Why a pair did not run, if one did not. */
  skipped: string[];
}


export function settingsSection(results: SettingsResults): string[] {
  const head = ['setting', 'endpoint', 'generator', 'req/s', 'server CPU ms / req', 'req/s ratio', 'CPU per request ratio', 'SQL / req'];
  const rows = results.rows.map(({ pair, row }) => {
    const [base, variant] = [row.results[pair.base], row.results[pair.variant]];
    const [v, b] = pair.names;
    const both = (pick: (result: NonNullable<typeof base>) => number, digits: number) => `${v} ${fixed(variant && pick(variant), digits)} · ${b} ${fixed(base && pick(base), digits)}`;
    return [
      pair.setting,
      row.endpoint,
      row.generator,
      both((result) => result.rps, 0),
      both((result) => result.cpuMs, 3),
      `${v} / ${b} ${ratioCell(row.ratios[`${pair.variant}/${pair.base}`])}`,
      `${v} / ${b} ${ratioCell(row.ratios[`cpu:${pair.variant}/${pair.base}`])}`,
      both((result) => result.statementsPerRequest, 2),
    ];
  });
  const { exports, bytes, requests } = results.exported;
  return [
    '## What a setting costs (M)',
    '',
    'Two facades that differ in one setting, loaded in turns like the servers above: tracing exporting every span over OTLP/HTTP to a receiver in a process of its own',
    `(${LABEL.traced}; ${LABEL['off-traced']}) against no OTLP endpoint, where the SDK, its instrumentations and`,
    'the module hook are never loaded; and listing statements run unnamed',
    '(`DATABASE_PREPARED_STATEMENTS=false`, what PgBouncer in transaction mode gets by detection) against',
    'prepared once per connection and run by name, the default on a direct connection, with the cache off so that',
    'every request runs them. A ratio is the median of the rounds\' ratios, its range in brackets.',
    '',
    ...table(head, rows),
    '',
    `The receiver took ${exports} exports, ${fixed(bytes / 2 ** 20, 1)} MiB, over ${requests} traced requests (${fixed(bytes / Math.max(requests, 1), 0)} bytes of spans per request).`,
    ...results.skipped.map((reason) => `Not run: ${reason}.`),
    '',
    'Tracing off costs nothing on a cache hit: no SDK is loaded and no span is opened on its path. A build',
    'opens one span per fixed operation through `@opentelemetry/api`, the API\'s no-op span without an SDK.',
  ];
}
