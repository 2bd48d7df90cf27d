import { ApiError } from '../../src/errors.ts';
import { compose, type Step } from './compose.ts';
import type { RequestState, RouteName } from './request-state.ts';

/** One route of the public listener, declared once: where it answers and its ordered steps. */
export interface Route {
  readonly name: RouteName;
  /**
   * Its path. Unless `strict`, the path with one trailing slash is the same route; a query string
   * never changes the route (the steps decide what it means). Paths are case-sensitive.
   */
  readonly path: string;
  readonly strict?: boolean;
  /** The path is a prefix and the segment after it the route's parameter, decoded (the feed's `{token}.ics`). */
  readonly parameter?: boolean;
  /**
   * `every`: every method reaches the steps (the API's routes, whose first step answers 405 for
   * all but GET and HEAD); `read`: GET and HEAD only, other methods are no route's.
   */
  readonly methods: 'every' | 'read';
  /** The route reads the request's body (the integrations page's endpoints); no other does. */
  readonly readsBody?: boolean;
  /** Its errors in GraphQL's shape (`errors[].extensions.code`) rather than the contract's. */
  readonly errorShape?: 'graphql';
  readonly steps: readonly Step[];
}

export interface Match {
  route: Route;
  run: (state: RequestState) => void | Promise<void>;
  param: string;
  hasQuery: boolean;
}

/**
 * Finds a request's route among the declared ones: by its path exactly (one map lookup, the
 * common case), then without one trailing slash, then by a parameter route's prefix. The
 * answers are express's router's for the same declarations (non-strict paths, case-sensitive,
 * `:param` segments decoded), tested in test/unit/rest-pipeline.test.ts.
 */
export function routeTable(routes: readonly Route[]): (method: string, url: string) => Match | null {
  const byPath = new Map<string, { route: Route; run: Match['run'] }>();
  const withParameter: Array<{ route: Route; run: Match['run'] }> = [];
  for (const route of routes) {
    const entry = { route, run: compose(route.steps) };
    if (route.parameter) withParameter.push(entry);
    else byPath.set(route.path, entry);
  }
  const allowed = (route: Route, method: string) => route.methods === 'every' || method === 'GET' || method === 'HEAD';
  return (method, url) => {
    const mark = url.indexOf('?');
    const path = mark === -1 ? url : url.slice(0, mark);
    const hasQuery = mark !== -1;
    let entry = byPath.get(path);
    if (entry === undefined && path.length > 1 && path.endsWith('/')) {
      const trimmed = byPath.get(path.slice(0, -1));
      if (trimmed !== undefined && !trimmed.route.strict) entry = trimmed;
    }
    if (entry !== undefined) return allowed(entry.route, method) ? { route: entry.route, run: entry.run, param: '', hasQuery } : null;
    for (const candidate of withParameter) {
      if (!path.startsWith(candidate.route.path)) continue;
      let segment = path.slice(candidate.route.path.length);
      if (!candidate.route.strict && segment.endsWith('/')) segment = segment.slice(0, -1);
      if (segment === '' || segment.includes('/') || !allowed(candidate.route, method)) continue;
      let param: string;
      try {
        param = decodeURIComponent(segment);
      } catch {
        // A parameter that does not decode (`%zz`) is the client's mistake, as express's router says too.
        throw new ApiError('invalid_request', 'The request could not be understood.');
      }
      return { route: candidate.route, run: candidate.run, param, hasQuery };
    }
    return null;
  };
}
