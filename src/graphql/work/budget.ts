import { HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import { GraphQLError } from 'graphql';
import type { StatementMeter, TimeAllowance } from '../../db/database.ts';
import { ApiError, isDatabaseUnavailable } from '../../errors.ts';
import { PER_CAP, RequestAllowance } from './allowance.ts';

/** What `extensions.cost` of an answer says (docs/internal-graphql.md, Cost budgets). */
export interface CostExtension {
  /** The work estimate of this request, in points; 0 when it was refused before it was estimated. */
  estimate: number;
  /** What it was charged: the database time its statements took, in points; 0 when nothing ran. */
  actual: number;
  /** The token's budget of cost points per minute. */
  budget: number;
  /** What is left of it in the current minute, after this request and what is owed. */
  remaining: number;
  /** Seconds until the budget is whole again (past the current minute while points are owed). */
  resetSeconds: number;
}

/** What the store says of a budget after a call. */
export interface BudgetState {
  allowed: boolean;
  /** Points spent in the current window. */
  spent: number;
  /** Points owed to the following windows: what requests cost beyond what their window held. */
  owed: number;
  /** Milliseconds until the current window ends. */
  msBeforeNext: number;
}

/**
 * Budgets of points per window and key, kept in the store of the public rate limits (so instances
 * sharing the store share them). Each key's budget is given with every call, so that a changed
 * budget applies to the current window at once.
 */
export interface PointBudgets {
  readonly windowSeconds: number;
  /**
   * Pays what `key` owes from its current window first, as far as the budget allows, then spends
   * `points` when they fit what is left; when they do not, the answer is refused and nothing is
   * spent.
   */
  spend(key: string, points: number, budget: number): Promise<BudgetState>;
  /** Spends up to `points` more in the current window, as many as keep its spending (and what is owed) within `ceiling`; returns how many. */
  extend(key: string, points: number, ceiling: number): Promise<number>;
  /**
   * Charges `points` more in the current window, or gives them back when negative (never below
   * nothing spent): the settlement of a request that cost `charged` in all. What the window holds
   * beyond the budget, up to `charged`, is owed to the following windows.
   */
  adjust(key: string, points: number, budget: number, charged: number): Promise<BudgetState>;
  /** The budget's state, spending nothing. */
  peek(key: string, budget: number): Promise<BudgetState>;
}

/** Whose budget: a named token by its id (a renamed token keeps its minute), the bootstrap token by its name. */
export interface BudgetHolder {
  id: string | null;
  name: string;
  /** Its own budget per minute; null: the default. */
  costPerMinute: number | null;
}

/** What a request's budget came to, kept on its context until the answer is sent. */
export interface SpentCost {
  /** The estimate, once made (also when it did not fit). */
  estimate: number;
  /** The points reserved before the request ran, and when the window they were spent in ends (ms since the epoch). */
  reserved: { points: number; windowEndsAt: number } | null;
  /** More points asked for while the request's statements ran, not yet answered: settled after them. */
  asking?: Promise<unknown> | undefined;
  extension: CostExtension | null;
}

/** An error of the catalogue as Apollo Server sends it: its code, status and headers. */
export function graphqlRefusal(error: ApiError): GraphQLError {
  return new GraphQLError(error.message, {
    extensions: { code: error.code, http: { status: error.status, headers: new HeaderMap(Object.entries(error.headers).map(([name, value]) => [name.toLowerCase(), value])) } },
  });
}

export interface CostBudgetOptions {
  /** INTERNAL_COST_PER_MINUTE: the budget of a token without one of its own. */
  defaultPerMinute: number;
  /** The cap (INTERNAL_COST_PER_REQUEST): the largest estimate of one request, in points; the other bounds are shares of it (`PER_CAP`). */
  capPoints: number;
  /** Counts a refusal by the budget. */
  refused: () => void;
}

/**
 * The cost budget of every token, per minute, in the rate-limit store the public limits use. A
 * request is admitted by its estimate; its statements run past it only on what the minute has
 * left, up to one cap beyond the budget (`RequestAllowance`), so that requests running at once
 * cannot spend more than that in a minute; it is settled at what it cost, and what the minute
 * holds beyond the budget is owed, paid by the following minutes before anything new is admitted.
 * A store that fails answers as the public limit's does: the Redis store limits each instance on
 * its own meanwhile (its insurance limiter), the PostgreSQL store's outage is the database's and
 * answers 503.
 */
export class CostBudget {
  readonly #budgets: PointBudgets;
  readonly #options: CostBudgetOptions;

  constructor(budgets: PointBudgets, options: CostBudgetOptions) {
    this.#budgets = budgets;
    this.#options = options;
  }

  budgetOf(holder: BudgetHolder): number {
    return holder.costPerMinute ?? this.#options.defaultPerMinute;
  }

  #key(holder: BudgetHolder): string {
    return holder.id ?? holder.name;
  }

  /**
   * Spends the estimate before the request runs (what is owed first paid), or refuses with 429
   * RATE_LIMITED, spending nothing, when it does not fit what is left; returns the database time
   * its statements may take.
   */
  async reserve(holder: BudgetHolder, estimate: number, spent: SpentCost): Promise<TimeAllowance> {
    const budget = this.budgetOf(holder);
    spent.estimate = estimate;
    if (estimate > budget) {
      throw graphqlRefusal(new ApiError('invalid_request', `Query cost ${estimate} exceeds this token's whole budget of ${budget} per minute; read fewer rows or ask for a larger budget.`));
    }
    const key = this.#key(holder);
    // A head start: a first part given with the estimate when it fits, so that a request that runs a
    // little past its estimate need not ask; admitted by its estimate alone when only that fits.
    const headStart = Math.max(estimate, Math.ceil(this.#options.capPoints * PER_CAP.part));
    let points = headStart;
    let state = await storeAnswer(this.#budgets.spend(key, points, budget));
    if (!state.allowed && headStart > estimate) {
      points = estimate;
      state = await storeAnswer(this.#budgets.spend(key, points, budget));
    }
    spent.extension = this.#extension(estimate, 0, budget, state);
    if (!state.allowed) {
      this.#options.refused();
      const wait = String(Math.max(1, spent.extension.resetSeconds));
      const owed = state.owed > 0 ? ` (${state.owed} more are owed: requests that cost more than their minute held)` : '';
      throw graphqlRefusal(
        new ApiError('RATE_LIMITED', `This query costs ${estimate}, and ${spent.extension.remaining} of this token's ${budget} cost points per minute are left${owed}; retry after ${wait} s.`, {
          headers: { 'Retry-After': wait },
        }),
      );
    }
    const reserved = { points, windowEndsAt: Date.now() + state.msBeforeNext };
    spent.reserved = reserved;
    const spentOut = `This request's statements took more database time than its estimate of ${estimate} points, and this token's budget of ${budget} per minute has none left to give; they were stopped.`;
    return new RequestAllowance(points, this.#options.capPoints, async (part) => {
      const asking = this.#budgets.extend(key, part, budget);
      spent.asking = asking;
      const granted = await asking;
      reserved.points += granted;
      return granted;
    }, spentOut);
  }

  /** What is left, spending nothing; null when the store cannot say (the answer then goes without). */
  async peek(holder: BudgetHolder): Promise<CostExtension | null> {
    const budget = this.budgetOf(holder);
    try {
      return this.#extension(0, 0, budget, await this.#budgets.peek(this.#key(holder), budget));
    } catch {
      return null;
    }
  }

  /**
   * Settles a request at what it cost (0 for one refused before it ran): the reservation is given
   * back and `actual` charged. Within the reservation's window the difference is given back or
   * spent; after it, what the request cost beyond its reservation is spent in the current one. What
   * the window cannot hold is owed. Null when the store cannot say (the answer then goes without).
   */
  async settle(holder: BudgetHolder, spent: SpentCost, actual: number): Promise<CostExtension | null> {
    const budget = this.budgetOf(holder);
    // A part asked for while the last statements ran is spent or refused before the request is settled.
    await spent.asking?.catch(() => {});
    const reserved = spent.reserved;
    spent.reserved = null;
    try {
      const key = this.#key(holder);
      const difference = reserved === null ? 0 : actual - reserved.points;
      const current = reserved !== null && Date.now() < reserved.windowEndsAt;
      const state = difference > 0 || current ? await this.#budgets.adjust(key, difference, budget, actual) : await this.#budgets.peek(key, budget);
      return this.#extension(spent.estimate, reserved === null ? 0 : actual, budget, state);
    } catch {
      return null;
    }
  }

  /** The IETF RateLimit headers of the budget, as the public limit sends its own. */
  headers(extension: CostExtension): Record<string, string> {
    return {
      'RateLimit-Policy': `"cost";q=${extension.budget};w=${this.#budgets.windowSeconds}`,
      RateLimit: `"cost";r=${extension.remaining};t=${extension.resetSeconds}`,
    };
  }

  #extension(estimate: number, actual: number, budget: number, state: BudgetState): CostExtension {
    const windows = state.owed > 0 ? Math.ceil(state.owed / budget) : 0;
    return {
      estimate,
      actual,
      budget,
      remaining: Math.max(0, budget - state.spent - state.owed),
      resetSeconds: Math.max(0, Math.ceil(state.msBeforeNext / 1000)) + windows * this.#budgets.windowSeconds,
    };
  }
}

/** A store that is the unreachable database answers 503 with Retry-After, as everywhere else. */
async function storeAnswer<T>(pending: Promise<T>): Promise<T> {
  try {
    return await pending;
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw graphqlRefusal(new ApiError('service_unavailable', undefined, { headers: { 'Retry-After': '5' } }));
    throw error;
  }
}

/**
 * Every answer Apollo Server sends carries the budget: `extensions.cost` and the RateLimit headers.
 * What the request may cost is reserved by the cost limit (`useCostLimit`'s `spend`) before
 * anything runs, and settled here at the database time its statements took (`actualPoints`); a
 * request refused before it ran (an unknown operation, variables that do not fit, the budget
 * itself) reserved nothing and is charged nothing.
 */
export function useCostBudget(budget: CostBudget, actualPoints: (context: { meter: StatementMeter }) => number): ApolloServerPlugin<{ principal: BudgetHolder; cost: SpentCost; meter: StatementMeter }> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, response }) {
          const extension = await budget.settle(contextValue.principal, contextValue.cost, contextValue.cost.reserved ? actualPoints(contextValue) : 0);
          if (!extension) return;
          for (const [name, value] of Object.entries(budget.headers(extension))) response.http.headers.set(name.toLowerCase(), value);
          if (response.body.kind === 'single') {
            response.body.singleResult.extensions = { ...response.body.singleResult.extensions, cost: extension };
          }
        },
      };
    },
  };
}
