import type { TimeAllowance } from '../../db/database.ts';
import { POINT_MS } from './estimate.ts';

/**
 * What one admitted request may spend, in caps (docs/internal-graphql.md, Limits): never more
 * database time than 1.5 caps' worth; its statements are cancelled at one, the other half being
 * the time of the statements running then (their cancellation sent, noticed by PostgreSQL and
 * answered, by a process whose event loop may be late). A minute lends nothing past its budget:
 * what the statements running when it is spent take until they are cancelled is the most it spends
 * past it (a cap at most), owed to the following minutes. A part asked for is at least a twentieth
 * of the cap.
 */
export const PER_CAP = { databaseTime: 1.5, cancelledAt: 1, part: 1 / 20 } as const;

/**
 * The statement timeout of internal GraphQL's connections: its setting, or the database time one
 * request may use when that is shorter, so that PostgreSQL itself stops a statement there even
 * when this process is too busy to cancel it in time.
 */
export function internalStatementTimeoutMs(settingMs: number, capPoints: number): number {
  return Math.min(settingMs, Math.ceil(capPoints * PER_CAP.databaseTime * POINT_MS));
}

/**
 * The database time of one admitted request: its estimate (with a head start of a twentieth of the
 * cap where it fits), then parts of the token's budget asked for while its statements run, each at
 * least as large as what it has (so that few are asked for), while the minute's spending stays
 * within the budget, and never past the cap.
 */
export class RequestAllowance implements TimeAllowance {
  ms: number;
  stoppedBecause: string;
  readonly #capPoints: number;
  /** Spends up to `points` more of the token's minute, as many as it lends; returns how many. */
  readonly #grant: (points: number) => Promise<number>;

  /** `spentOut`: what the request is told when the minute lends no more. */
  constructor(points: number, capPoints: number, grant: (points: number) => Promise<number>, spentOut: string) {
    this.ms = points * POINT_MS;
    this.#capPoints = capPoints;
    this.#grant = grant;
    this.stoppedBecause = spentOut;
  }

  async more(): Promise<number> {
    const capPoints = this.#capPoints;
    const allowed = Math.round(this.ms / POINT_MS);
    const part = Math.min(Math.floor(capPoints * PER_CAP.cancelledAt) - allowed, Math.max(allowed, Math.ceil(capPoints * PER_CAP.part)));
    if (part <= 0) {
      this.stoppedBecause = `This request's statements took the database time of the cap (${capPoints} points, ${capPoints * PER_CAP.cancelledAt * POINT_MS} ms) and were stopped; read fewer rows, filter on indexed columns or leave out totalCount.`;
      return 0;
    }
    return (await this.#grant(part)) * POINT_MS;
  }
}

