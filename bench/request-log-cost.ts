/**
 * What the API keys' request log costs cached hits under load at M: the facade as `npm start` runs
 * it (the log on, its default) against the same build with `KEY_REQUEST_LOG=false` (a key's last
 * use alone, what a key cost before the log), loaded in turns like every other server of the pass,
 * so that each round's ratio comes from the same seconds of the shared machine. Beside them, the
 * log with the per-key rows at their largest (`KEY_REQUEST_LOG_ROWS_PER_SECOND=10000`): what the
 * database takes when a key's rows are written by the ten thousand a second.
 */
import { withServersApart } from './cpus.ts';
import { ENDPOINTS, type Endpoint } from './database.ts';
import { wrkAvailable } from './load.ts';
import type { FacadeName, Generator, SettingRow } from './results.ts';
import type { RowLoader } from './settings-cost.ts';
import { startFacade, stop } from './servers.ts';

/** At least this many rounds: a 5 % bound needs more of them than the other rows on a shared machine. */
export const REQUEST_LOG_ROUNDS = 6;

const VARIANTS: Record<'unlogged' | 'logged-all', Record<string, string>> = {
  unlogged: { KEY_REQUEST_LOG: 'false' },
  'logged-all': { KEY_REQUEST_LOG_ROWS_PER_SECOND: '10000' },
};

const [courses, , withParticipants] = ENDPOINTS as [Endpoint, Endpoint, Endpoint];
/** The endpoints the log is measured on: the largest answer and the one with personal data. */
export const REQUEST_LOG_ENDPOINTS = [courses, withParticipants];

/**
 * The rows, servers pinned apart from wrk where the machine allows (bench/cpus.ts): a 5 % bound
 * is below what a server sharing its core with wrk and PostgreSQL varies by between rounds.
 */
export async function measureRequestLog(serverEnv: Record<string, string>, loadRow: RowLoader): Promise<{ rows: SettingRow[]; placement: string }> {
  const { value, placement } = await withServersApart(() => measure(serverEnv, loadRow));
  return { rows: value, placement };
}

async function measure(serverEnv: Record<string, string>, loadRow: RowLoader): Promise<SettingRow[]> {
  const names: FacadeName[] = ['hits', 'unlogged', 'logged-all'];
  const servers = await Promise.all(names.map((name) => startFacade(name, { ...serverEnv, ...(name === 'hits' ? {} : VARIANTS[name as keyof typeof VARIANTS]) })));
  const generator: Generator = wrkAvailable ? 'wrk' : 'autocannon';
  const rows: SettingRow[] = [];
  try {
    for (const endpoint of REQUEST_LOG_ENDPOINTS) {
      const row = await loadRow(servers, endpoint, generator, [['hits', 'unlogged'], ['logged-all', 'unlogged']]);
      rows.push({ setting: 'request log (default)', names: ['on', 'off'], base: 'unlogged', variant: 'hits', row });
      rows.push({ setting: 'request log, every request of the key', names: ['all', 'off'], base: 'unlogged', variant: 'logged-all', row });
    }
    return rows;
  } finally {
    for (const server of servers) await stop(server.child);
  }
}
