import { failureHint } from './failure-hints.ts';
import type { AttemptOutcome } from './send-attempt.ts';

export interface ManualResult {
  deliveryId: string;
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
  startedAt: string | null;
  durationMs: number;
  /** The start of the receiver's answer, to show to the operator who asked for the attempt. */
  answerStart: string | null;
  /** The receiver answered 410 and the endpoint is now disabled. */
  disabled: boolean;
  /** What usually mends the failure (failure-hints.ts), or null. */
  hint: string | null;
}

export const manualResult = (deliveryId: string, startedAt: Date, outcome: AttemptOutcome, disabled: boolean): ManualResult => ({
  deliveryId,
  ok: outcome.ok,
  httpStatus: outcome.httpStatus,
  error: outcome.error,
  startedAt: startedAt.toISOString(),
  durationMs: outcome.durationMs,
  answerStart: outcome.answerStart,
  disabled,
  hint: failureHint(outcome.error),
});
