import { describe } from 'vitest';

/**
 * The variants a test runs in: the embedded database always, a real PostgreSQL and Redis when the
 * run names them. A variant that cannot run here is still declared, as skipped, with what it waits
 * for in its name, so that a run's output shows what it did not test instead of dropping it.
 */
export type DatabaseTarget = 'embedded' | 'postgres';
export type LimiterStore = 'memory' | 'postgres' | 'redis';

export const DATABASE_TARGETS: readonly DatabaseTarget[] = ['embedded', 'postgres'];
export const LIMITER_STORES: readonly LimiterStore[] = ['memory', 'postgres', 'redis'];

/** What keeps a variant from running on this machine, or null when it runs. */
export function missingFor(target?: DatabaseTarget, store?: LimiterStore): string | null {
  const missing: string[] = [];
  if (target === 'postgres' && !process.env.DATABASE_URL) missing.push('DATABASE_URL');
  if (store === 'redis' && !process.env.REDIS_URL) missing.push('REDIS_URL');
  return missing.length > 0 ? `${missing.join(' and ')} not set` : null;
}

/**
 * A suite that runs only where `missing` is null; elsewhere it is declared skipped with the reason
 * in its name.
 */
export function describeWhere(missing: string | null, title: string, body: () => void): void {
  if (missing === null) describe(title, body);
  else describe.skip(`${title} (not run: ${missing})`, body);
}

const titled = (title: string, values: readonly string[]) => values.reduce((text, value) => text.replace('%s', value), title);

/** `describe.each` over the database targets. */
export function describeOnEachDatabase(title: string, body: (target: DatabaseTarget) => void): void {
  for (const target of DATABASE_TARGETS) describeWhere(missingFor(target), titled(title, [target]), () => body(target));
}

/** `describe.each` over database targets and rate-limit stores (each `%s` of the title in turn). */
export function describeOnEachStore(
  targets: readonly DatabaseTarget[],
  stores: readonly LimiterStore[],
  title: string,
  body: (target: DatabaseTarget, store: LimiterStore) => void,
): void {
  for (const target of targets) {
    for (const store of stores) {
      describeWhere(missingFor(target, store), titled(title, [target, store]), () => body(target, store));
    }
  }
}

/** The variants this run leaves out, for the run's opening lines. */
export function variantsNotRun(): string[] {
  const notes: string[] = [];
  if (!process.env.DATABASE_URL) notes.push('the PostgreSQL variants (DATABASE_URL is not set)');
  if (!process.env.REDIS_URL) notes.push('the Redis rate-limit store variants (REDIS_URL is not set)');
  return notes;
}

/**
 * REDIS_URL with its logical database `index`: for a test whose shared counters must not meet
 * other files' running at the same time from the same client address (the failed-authentication
 * count of 127.0.0.1), each such file with an index of its own.
 */
export function redisUrlWithDatabase(index: number): string {
  const url = new URL(process.env.REDIS_URL!);
  url.pathname = `/${index}`;
  return url.toString();
}
