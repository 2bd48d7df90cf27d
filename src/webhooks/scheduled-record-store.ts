import type { Database } from '../db/database.ts';
import type { ClaimedDelivery } from './claim-store.ts';
import type { AttemptOutcome } from './send-attempt.ts';

/** At most 8 scheduled attempts per event and endpoint (docs/contract-rules.md, webhooks.schedule). */
export const MAX_ATTEMPTS = 8;

/**
 * Writes the bodies of deliveries before their first attempt is sent, and returns the bodies
 * stored: a worker that dies after sending and before recording leaves the exact bytes it sent,
 * and the next attempt sends them again. (When another attempt stored one first, that one is kept.)
 */
export async function storeBodies(db: Database, bodies: ReadonlyArray<{ deliveryId: string; body: string }>): Promise<string[]> {
  const stored = await db.queryArrays(
    `UPDATE webhook_deliveries d SET body = coalesce(d.body, i.body), body_erased_at = CASE WHEN d.body IS NULL THEN NULL ELSE d.body_erased_at END
       FROM unnest($1::text[], $2::text[]) AS i (id, body)
      WHERE d.id = i.id
      RETURNING d.id, d.body`,
    [bodies.map((b) => b.deliveryId), bodies.map((b) => b.body)],
  );
  const byId = new Map(stored.map((row) => [row[0] as string, row[1] as string]));
  return bodies.map((b) => byId.get(b.deliveryId) ?? b.body);
}

export interface ScheduledAttempt {
  delivery: ClaimedDelivery;
  body: string;
  startedAt: Date;
  outcome: AttemptOutcome;
  retryDelaysMs: readonly number[];
}

export interface RecordedAttempt {
  number: number | null;
  state: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: Date | null;
  /** Milliseconds from now (the database's clock) to the next attempt, when there is one. */
  nextAttemptInMs: number | null;
  /** The receiver answered 410 and the endpoint was disabled by this attempt (one attempt per endpoint says so). */
  gone: boolean;
}

/**
 * Records scheduled attempts, many in one statement (one atomic step): each attempt's log entry,
 * its delivery's new state with the body it sent (fixed at the first attempt, so every attempt
 * sends the same bytes), the due time of the next attempt on the configured delays or the `failed`
 * state after the 8th failure, so that a crash can never record a failure without its retry;
 * and each endpoint's health (docs/webhooks.md, "Endpoint health"), as if its attempts had been
 * recorded one by one in the order they started: a success resets the failures, a failure
 * counts, and a 410 disables the endpoint at once, so that no later claim finds it enabled.
 * The endpoints' rows are locked first, in one order, so that two workers' records never deadlock.
 */
export async function recordScheduledAttempts(db: Database, attempts: readonly ScheduledAttempt[]): Promise<RecordedAttempt[]> {
  const rows = attempts.map(({ delivery, outcome, retryDelaysMs }) => {
    const number = delivery.attempts + 1;
    const delay = outcome.ok || number >= MAX_ATTEMPTS ? null : retryDelaysMs[number - 1]!;
    return { number, delay, state: outcome.ok ? ('succeeded' as const) : delay === null ? ('failed' as const) : ('pending' as const) };
  });
  const column = <T>(pick: (attempt: ScheduledAttempt, i: number) => T) => attempts.map(pick);
  // One call, one round trip (migration 1763802237000), prepared by name.
  const recorded = await db.queryArrays('SELECT * FROM record_scheduled_webhook_attempts($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)', [
    [...new Set(column((a) => a.delivery.endpointId))],
    column((a) => a.delivery.id),
    rows.map((r) => r.number),
    rows.map((r) => r.state),
    column((a) => a.body),
    rows.map((r) => r.delay),
    column((a) => a.startedAt),
    column((a) => a.outcome.durationMs),
    column((a) => a.outcome.httpStatus),
    column((a) => a.outcome.error),
  ]);
  const byId = new Map(recorded.map((row) => [row[0] as string, row as [id: string, next: Date | null, inMs: number | string | null, gone: boolean]]));
  return attempts.map((attempt, i) => {
    const [, next, inMs, gone] = byId.get(attempt.delivery.id) ?? [];
    const { number, state } = rows[i]!;
    return { number, state, nextAttemptAt: next ?? null, nextAttemptInMs: inMs == null ? null : Number(inMs), gone: gone ?? false };
  });
}
