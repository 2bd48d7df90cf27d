import type { Overlay } from './resource-model.ts';

/**
 * What PostgreSQL's catalog cannot say of the tables the service serves, one entry per table: a
 * table is served (on internal GraphQL, and written by the fixture import) only with an entry
 * here. Everything else (columns, types, nullability, keys, relations from foreign keys, enum
 * values, descriptions) comes from the catalog (`catalog.generated.ts`, `npm run generate`).
 * `Overlay` in resource-model.ts says what an entry may hold; docs/adding-a-resource.md shows one.
 */
export const overlay: Overlay = {
  workspaces: {
    // A workspace row is its own workspace.
    workspace: 'id',
    // What the public course list shows, in its order (docs/contract-rules.md, resources.course-listing).
    lists: { courses: { of: 'course_runs', by: 'listed_from' } },
  },
  // Written by the fixture import; not served.
  members: { graphql: false, personalData: true },
  course_templates: { order: ['title'] },
  course_runs: { order: ['created_at'] },
  sessions: { order: ['starts_at'] },
  // Newest first (docs/contract-rules.md, resources.booking-order).
  bookings: { order: ['-created_at'] },
  // Reached only through its booking, whose workspace it shares.
  participants: { workspace: { through: 'booking_id' }, personalData: true, root: false },
  // Written by the service alone (key create, the request log), never by the fixture import. No
  // key material is served: not the hash, not the last 4 characters; nor the allow list.
  api_keys: {
    fixture: false,
    hide: ['key_hash', 'last4', 'scopes', 'allowed_ips', 'created_by', 'expiry_warned_at'],
    order: ['created_at'],
    relations: { apiKey: 'replacement', apiKeys: false, apiKeyRequests: 'requests' },
  },
  // A key's request log, newest first (docs/authentication-and-scopes.md).
  api_key_requests: { fixture: false, workspace: { through: 'api_key_id' }, hide: ['slot'], order: ['-requested_at'], root: false },
};
