import { HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import { GraphQLError } from 'graphql';
import type { InternalPrincipal } from '../auth/internal-token-store.ts';
import type { StatementMeter } from '../db/database.ts';
import { ApiError, isDatabaseUnavailable } from '../errors.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { PointBudgets, RateLimitDecision } from '../rate-limit/limiters.ts';

/** What `extensions.cost` of an answer says (docs/internal-graphql.md, Cost budgets). */
export interface CostExtension {
  /** The work estimate of this request, in points; 0 when it was refused before it was estimated. */
  estimate: number;
  /** What it was charged: the database time its statements took, in points; 0 when nothing ran. */
  actual: number;
  /** The token's budget of cost points per minute. */
  budget: number;
  /** What is left of it in the current minute, after this request. */
  remaining: number;
  /** Seconds until the budget is whole again. */
  resetSeconds: number;
}

/** What a request's budget came to, kept on its context until the answer is sent. */
export interface SpentCost {
  /** The estimate, once made (also when it did not fit). */
  estimate: number;
  /** The estimate spent before the request ran, and when the window it was spent in ends (ms since the epoch). */
  reserved: { points: number; windowEndsAt: number } | null;
  extension: CostExtension | null;
}

/** An error of the catalogue as Apollo Server sends it: its code, status and headers. */
export function graphqlRefusal(error: ApiError): GraphQLError {
  return new GraphQLError(error.message, {
    extensions: { code: error.code, http: { status: error.status, headers: new HeaderMap(Object.entries(error.headers).map(([name, value]) => [name.toLowerCase(), value])) } },
  });
}

/**
 * The cost budget of every token, per minute, in the rate-limit store the public limits use (so
 * instances sharing the store share the budget). A store that fails answers as the public limit's
 * does: the Redis store limits each instance on its own meanwhile (its insurance limiter), the
 * PostgreSQL store's outage is the database's and answers 503.
 */
export class CostBudget {
  readonly #budgets: PointBudgets;
  readonly #defaultPerMinute: number;
  readonly #metrics: Metrics;

  constructor(budgets: PointBudgets, defaultPerMinute: number, metrics: Metrics) {
    this.#budgets = budgets;
    this.#defaultPerMinute = defaultPerMinute;
    this.#metrics = metrics;
  }

  budgetOf(principal: InternalPrincipal): number {
    return principal.costPerMinute ?? this.#defaultPerMinute;
  }

  /** Named tokens by id (a renamed token keeps its minute); the bootstrap token by its name. */
  #key(principal: InternalPrincipal): string {
    return principal.id ?? principal.name;
  }

  /**
   * Spends `estimate` before the request runs (its reservation), or refuses with 429 RATE_LIMITED,
   * spending nothing, when it does not fit what is left.
   */
  async reserve(principal: InternalPrincipal, estimate: number, spent: SpentCost): Promise<void> {
    const budget = this.budgetOf(principal);
    spent.estimate = estimate;
    if (estimate > budget) {
      throw graphqlRefusal(new ApiError('invalid_request', `Query cost ${estimate} exceeds this token's whole budget of ${budget} per minute; read fewer rows or ask for a larger budget.`));
    }
    const decision = await storeAnswer(this.#budgets.spend(this.#key(principal), estimate, budget));
    if (decision.allowed) spent.reserved = { points: estimate, windowEndsAt: Date.now() + decision.resetSeconds * 1000 };
    spent.extension = extensionOf(estimate, 0, budget, decision);
    if (!decision.allowed) {
      this.#metrics.requestCounts.rateLimitRejections('internal_cost').count += 1;
      const wait = String(Math.max(1, decision.resetSeconds));
      throw graphqlRefusal(
        new ApiError('RATE_LIMITED', `This query costs ${estimate}, and ${decision.remaining} of this token's ${budget} cost points per minute are left; retry after ${wait} s.`, {
          headers: { 'Retry-After': wait },
        }),
      );
    }
  }

  /** What is left, spending nothing; null when the store cannot say (the answer then goes without). */
  async peek(principal: InternalPrincipal): Promise<CostExtension | null> {
    const budget = this.budgetOf(principal);
    try {
      return extensionOf(0, 0, budget, await this.#budgets.peek(this.#key(principal), budget));
    } catch {
      return null;
    }
  }

  /**
   * Settles a request at what it cost: the points reserved become `actual` (0 for a request that
   * was refused before it ran). The difference is given back, or spent, in the window the
   * reservation was made in; once that window has ended there is nothing left to settle. Null
   * when the store cannot say (the answer then goes without).
   */
  async settle(principal: InternalPrincipal, spent: SpentCost, actual: number): Promise<CostExtension | null> {
    const budget = this.budgetOf(principal);
    const reserved = spent.reserved;
    spent.reserved = null;
    try {
      const key = this.#key(principal);
      const current = reserved !== null && Date.now() < reserved.windowEndsAt;
      const decision = current ? await this.#budgets.adjust(key, actual - reserved.points, budget) : await this.#budgets.peek(key, budget);
      return extensionOf(spent.estimate, reserved === null ? 0 : actual, budget, decision);
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
}

function extensionOf(estimate: number, actual: number, budget: number, decision: RateLimitDecision): CostExtension {
  return { estimate, actual, budget, remaining: decision.remaining, resetSeconds: decision.resetSeconds };
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
 * The estimate is reserved by the cost limit (`useCostLimit`'s `spend`) before anything runs, and
 * settled here at the database time the request's statements took (`actualPoints`), which is 0
 * for a request refused before it ran: an unknown operation, variables that do not fit, a
 * refusal by the budget itself.
 */
export function useCostBudget(budget: CostBudget, actualPoints: (context: { meter: StatementMeter }) => number): ApolloServerPlugin<{ principal: InternalPrincipal; cost: SpentCost; meter: StatementMeter }> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, response }) {
          const ran = response.body.kind === 'single' && response.body.singleResult.data !== undefined;
          const extension = await budget.settle(contextValue.principal, contextValue.cost, ran ? actualPoints(contextValue) : 0);
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
