import { HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import { GraphQLError } from 'graphql';
import type { InternalPrincipal } from '../auth/internal-token-store.ts';
import { ApiError, isDatabaseUnavailable } from '../errors.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { PointBudgets, RateLimitDecision } from '../rate-limit/limiters.ts';

/** What `extensions.cost` of an answer says (docs/internal-graphql.md, Cost budgets). */
export interface CostExtension {
  /** The estimate of this request, spent from the budget; 0 when nothing was run or spent. */
  estimate: number;
  /** The token's budget of cost points per minute. */
  budget: number;
  /** What is left of it in the current minute, after this request. */
  remaining: number;
  /** Seconds until the budget is whole again. */
  resetSeconds: number;
}

/** What a request's budget came to, kept on its context until the answer is sent. */
export interface SpentCost {
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

  /** Spends `estimate`, or refuses with 429 RATE_LIMITED (spending nothing) when it does not fit what is left. */
  async spend(principal: InternalPrincipal, estimate: number, spent: SpentCost): Promise<void> {
    const budget = this.budgetOf(principal);
    if (estimate > budget) {
      throw graphqlRefusal(new ApiError('invalid_request', `Query cost ${estimate} exceeds this token's whole budget of ${budget} per minute; select fewer fields or lower "first".`));
    }
    const decision = await storeAnswer(this.#budgets.spend(this.#key(principal), estimate, budget));
    spent.extension = extensionOf(decision.allowed ? estimate : 0, budget, decision);
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
      return extensionOf(0, budget, await this.#budgets.peek(this.#key(principal), budget));
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

function extensionOf(estimate: number, budget: number, decision: RateLimitDecision): CostExtension {
  return { estimate, budget, remaining: decision.remaining, resetSeconds: decision.resetSeconds };
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
 * The estimate is spent by the cost limit (`useCostLimit`'s `spend`), before anything runs; an
 * answer refused earlier (syntax, validation, limits) spent nothing and says what is left.
 */
export function useCostBudget(budget: CostBudget): ApolloServerPlugin<{ principal: InternalPrincipal; cost: SpentCost }> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, response }) {
          const extension = contextValue.cost.extension ?? (await budget.peek(contextValue.principal));
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
