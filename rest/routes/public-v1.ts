import type { AnswerCache, AnswerRequest, BuildAnswer, PieceSource } from '../../src/answer-cache/answer-cache.ts';
import type { PieceVersionStore } from '../../src/answer-cache/piece-version-store.ts';
import type { ActiveApiKey, Authenticator } from '../../src/auth/authenticator.ts';
import type { Database } from '../../src/db/database.ts';
import type { ResourceRegistry } from '../../src/model/resource-registry.ts';
import { executeOperation } from '../../src/graphql/execute-operation.ts';
import type { CompiledOperations } from '../../src/graphql/operations.ts';
import { bookingsOf, courseRunsOf, toBooking, toCourse } from '../../src/graphql/public-representation.ts';
import { JSON_CONTENT_TYPE } from '../../src/http-answers.ts';
import type { Redactor } from '../../src/logger.ts';
import type { RateLimiters } from '../../src/rate-limit/limiters.ts';
import { listBody, sendBytes } from '../pipeline/answers.ts';
import { bookingPieces, coursePieces } from './list-pieces.ts';
import type { Step } from '../pipeline/compose.ts';
import type { Route } from '../pipeline/route-table.ts';
import { allowedAddress } from '../steps/allowed-address.ts';
import { authenticate } from '../steps/authenticate.ts';
import { keyRateLimit } from '../steps/key-rate-limit.ts';
import { noQueryString } from '../steps/no-query.ts';
import { readOnly } from '../steps/read-only.ts';
import { requireScope } from '../steps/scope.ts';

export interface PublicV1Dependencies {
  db: Database;
  registry: ResourceRegistry;
  operations: CompiledOperations;
  authenticator: Pick<Authenticator, 'verified' | 'authenticate'>;
  rateLimiters: RateLimiters;
  answerCache: Pick<AnswerCache, 'answerInPieces'>;
  /** The statements of the answers' pieces, from what the cached operations read. */
  pieceVersions: PieceVersionStore;
  /** Removes secrets from what is logged of a request, and from what an error echoes of it. */
  redactor: Redactor;
}

/** docs/contract-rules.md, http.cache-control: answers are never stored by clients or proxies. */
const NO_STORE = ['Cache-Control', 'private, no-store'];

/** What one key's requests ask the answer cache for: made once per key object (the key cache's time), not per request. */
interface KeyAnswers {
  courses: { request: AnswerRequest; pieces: PieceSource; build: BuildAnswer };
  bookings: { request: AnswerRequest; pieces: PieceSource; build: BuildAnswer };
}

/**
 * `/api/public/v1/courses` and `/bookings`: the checks in the order docs/contract-rules.md fixes
 * (`http.checks-order`: method, authentication, the key's allow list, the key's rate limit, scope,
 * query string), then the answer: the cached bytes of the workspace's current data version, or
 * assembled from the pieces (runs, bookings) kept of an earlier version and those that changed,
 * built again (./list-pieces.ts); with the cache off, the fixed operation's result serialised. The workspace row primed from the key is
 * used for its id alone, which never changes.
 */
export function publicV1Routes(deps: PublicV1Dependencies): Route[] {
  const checks = (scope: 'courses:read' | 'bookings:read'): Step[] => [
    readOnly,
    authenticate(deps.authenticator),
    allowedAddress,
    keyRateLimit(deps.rateLimiters),
    requireScope(scope),
    noQueryString(deps.redactor),
  ];
  const perKey = new WeakMap<ActiveApiKey, KeyAnswers>();
  const answersOf = (apiKey: ActiveApiKey): KeyAnswers => {
    const known = perKey.get(apiKey);
    if (known) return known;
    const primed = { Workspace: apiKey.workspace };
    const courses = { workspaceId: apiKey.workspaceId, calendar: false };
    const withParticipant = apiKey.scopes.has('participants:read');
    // The participant variant is one of the variables, so it is part of the cache key: a key
    // without participants:read never gets bytes built for one with it.
    const bookings = { workspaceId: apiKey.workspaceId, withParticipant };
    const made: KeyAnswers = {
      courses: {
        request: { answer: 'courses', workspaceId: apiKey.workspaceId, variables: courses },
        pieces: coursePieces(deps, apiKey.workspaceId, primed),
        build: async (db) => listBody(courseRunsOf(await executeOperation({ ...deps, db }, deps.operations.courses, courses, primed)), toCourse),
      },
      bookings: {
        request: { answer: 'bookings', workspaceId: apiKey.workspaceId, variables: bookings },
        pieces: bookingPieces(deps, apiKey.workspaceId, withParticipant, primed),
        build: async (db) =>
          listBody(bookingsOf(await executeOperation({ ...deps, db }, deps.operations.bookings, bookings, primed)), (booking) => toBooking(booking, withParticipant)),
      },
    };
    perKey.set(apiKey, made);
    return made;
  };
  const answer =
    (kind: 'courses' | 'bookings'): Step =>
    async (state) => {
      const { request, pieces, build } = answersOf(state.key)[kind];
      const answered = await deps.answerCache.answerInPieces(request, pieces, build);
      state.answer = kind;
      state.cache = answered.outcome;
      sendBytes(state, 200, JSON_CONTENT_TYPE, answered.body, answered.length, NO_STORE);
    };
  return [
    { name: '/api/public/v1/courses', path: '/api/public/v1/courses', methods: 'every', steps: [...checks('courses:read'), answer('courses')] },
    { name: '/api/public/v1/bookings', path: '/api/public/v1/bookings', methods: 'every', steps: [...checks('bookings:read'), answer('bookings')] },
  ];
}
