/**
 * The integrations area on internal GraphQL (docs/internal-graphql.md, Integrations): each field
 * runs one operation of src/integrations on behalf of the member it names, for tokens that hold
 * the integrations grant. Every list is bounded (`INTEGRATION_LIST_BOUNDS`: the rows the cost
 * estimate counts for it).
 */
export const INTEGRATIONS_SDL = /* GraphQL */ `
  "A workspace's keys, webhook endpoints, calendar feeds and audit, as an owner or admin of it sees them."
  type Integrations {
    "The workspace's API keys, no secrets."
    apiKeys: [IntegrationApiKey!]!
    "A key's recent requests, newest first: since an ISO 8601 time or a duration back (2h), a status (429) or class (4xx), at most limit (1 to 1000, 100 by default)."
    apiKeyRequests(id: ID!, since: String, status: String, limit: Int): [IntegrationKeyRequest!]!
    "A key's requests per day (UTC, newest first), days back (7 by default), today included."
    apiKeyUsage(id: ID!, days: Int): [IntegrationKeyUsageDay!]!
    webhookEndpoints: [IntegrationWebhookEndpoint!]!
    "An endpoint's newest 100 deliveries (or one event's), each with its attempts."
    webhookDeliveries(endpointId: ID!, eventId: ID): [IntegrationWebhookDelivery!]!
    calendarFeeds: [IntegrationCalendarFeed!]!
    "What was done to the workspace's integrations, oldest first (the newest 1000), since an ISO 8601 time."
    audit(since: String): [IntegrationAuditEntry!]!
  }

  type IntegrationApiKey { id: ID! name: String! scopes: [String!]! last4: String! createdAt: DateTime! expiresAt: DateTime allowedIps: [String!] lastUsedAt: DateTime lastUsedNetwork: String state: String! }
  type IntegrationKeyRequest { requestedAt: DateTime! method: String! path: String! status: Int! errorCode: String durationMs: Float! requestId: String! clientNetwork: String cache: String }
  type IntegrationKeyUsageDay { day: String! requests: Int! status2xx: Int! status3xx: Int! status4xx: Int! status5xx: Int! rateLimited: Int! notLogged: Int! }
  type IntegrationEndpointHealth { state: String! consecutiveFailures: Int! failingSince: DateTime lastFailure: String }
  type IntegrationWebhookEndpoint { id: ID! url: String! participants: Boolean! events: [String!]! createdAt: DateTime! state: String! disabledAt: DateTime disabledReason: String previousSecretUntil: DateTime health: IntegrationEndpointHealth }
  type IntegrationWebhookAttempt { series: Int! number: Int manual: Boolean! startedAt: DateTime! durationMs: Float! httpStatus: Int error: String nextAttemptAt: DateTime }
  type IntegrationWebhookDelivery { id: ID! eventId: ID! eventType: String! test: Boolean! state: String! attempts: Int! series: Int! nextAttemptAt: DateTime bodyErasedAt: DateTime log: [IntegrationWebhookAttempt!]! }
  type IntegrationCalendarFeed { id: ID! name: String! last4: String! createdAt: DateTime! state: String! }
  type IntegrationAuditEntry { id: ID! memberEmail: String operation: String! targetId: ID source: String! at: DateTime! }

  "A new key: the key itself is in this answer only."
  type CreatedApiKey { id: ID! key: String! scopes: [String!]! expiresAt: DateTime allowedIps: [String!] }
  type UpdatedApiKey { id: ID! name: String! scopes: [String!]! expiresAt: DateTime allowedIps: [String!] }
  "The key that replaces a rotated one: the key itself is in this answer only."
  type RotatedApiKey { id: ID! key: String! expiresAt: DateTime }
  type ChangedState { id: ID! state: String! }
  "A new endpoint: its signing secret is in this answer only."
  type AddedWebhookEndpoint { id: ID! secret: String! }
  type UpdatedWebhookEndpoint { id: ID! url: String events: [String!] }
  type EnabledWebhookEndpoint { id: ID! state: String! resumed: Int! }
  "One attempt made now: the receiver's status (or the failure's class) and the start of its answer."
  type WebhookAttemptResult { ok: Boolean! httpStatus: Int error: String startedAt: DateTime durationMs: Float! answerStart: String disabled: Boolean! "What usually mends a failure (a setting, a check), or null." hint: String }
  type WebhookTestResult { event: ID! type: String! ok: Boolean! httpStatus: Int error: String startedAt: DateTime durationMs: Float! answerStart: String stillDisabled: Boolean! "What usually mends a failure (a setting, a check), or null." hint: String }
  type WebhookRecovery { endpoint: ID! since: DateTime! recovered: Int! }
  "A new signing secret: in this answer only."
  type RotatedWebhookSecret { id: ID! secret: String! previousSecretUntil: DateTime }
  "A new feed: its URL's path, token included, is in this answer only."
  type CreatedCalendarFeed { id: ID! token: String! path: String! }
  "A single-use link to the integrations page: its secret is in the URL's fragment, and in this answer only. It opens once, until expiresAt (10 minutes)."
  type PortalLink { url: String! expiresAt: DateTime! }

  input CreateApiKeyInput { name: String scopes: [String!]! expiresIn: String expiresAt: String allowedIps: [String!] }
  "Only what is given changes; allowedIps: null removes the allow list."
  input UpdateApiKeyInput { name: String scopes: [String!] expiresIn: String expiresAt: String neverExpires: Boolean allowedIps: [String!] }
  input AddWebhookEndpointInput { url: String! events: [String!] participants: Boolean }
  input UpdateWebhookEndpointInput { url: String events: [String!] }

  type Query {
    "The integrations of a workspace as the member named by e-mail (an owner or admin of it) sees them; needs the integrations grant."
    integrations(workspaceId: ID!, member: String!): Integrations!
  }

  "Each mutation acts on behalf of the member named by e-mail, an owner or admin of the workspace, and is recorded in its audit; all need the integrations grant."
  type Mutation {
    createApiKey(workspaceId: ID!, member: String!, input: CreateApiKeyInput!): CreatedApiKey!
    updateApiKey(workspaceId: ID!, member: String!, id: ID!, input: UpdateApiKeyInput!): UpdatedApiKey!
    rotateApiKey(workspaceId: ID!, member: String!, id: ID!): RotatedApiKey!
    revokeApiKey(workspaceId: ID!, member: String!, id: ID!): ChangedState!
    addWebhookEndpoint(workspaceId: ID!, member: String!, input: AddWebhookEndpointInput!): AddedWebhookEndpoint!
    updateWebhookEndpoint(workspaceId: ID!, member: String!, id: ID!, input: UpdateWebhookEndpointInput!): UpdatedWebhookEndpoint!
    removeWebhookEndpoint(workspaceId: ID!, member: String!, id: ID!): ChangedState!
    enableWebhookEndpoint(workspaceId: ID!, member: String!, id: ID!): EnabledWebhookEndpoint!
    "Sends one signed test event of type (booking.created by default) now, never retried."
    sendWebhookTestEvent(workspaceId: ID!, member: String!, id: ID!, type: String): WebhookTestResult!
    "One manual attempt of an event's delivery to an endpoint, now."
    resendWebhookDelivery(workspaceId: ID!, member: String!, endpointId: ID!, eventId: ID!): WebhookAttemptResult!
    "Sends again the failed deliveries of events recorded since an ISO 8601 time."
    recoverWebhookDeliveries(workspaceId: ID!, member: String!, id: ID!, since: String!): WebhookRecovery!
    "A new signing secret; the old one signs too for overlap (24h by default, 0 for none, at most 7d)."
    rotateWebhookSecret(workspaceId: ID!, member: String!, id: ID!, overlap: String): RotatedWebhookSecret!
    createCalendarFeed(workspaceId: ID!, member: String!, name: String): CreatedCalendarFeed!
    revokeCalendarFeed(workspaceId: ID!, member: String!, id: ID!): ChangedState!
    "A link to the integrations page for the member, opening a session of ttl (1h by default, at most 24h) that changes nothing when readOnly."
    createPortalSession(workspaceId: ID!, member: String!, readOnly: Boolean = false, ttl: String = "1h"): PortalLink!
  }
`;

/** The rows the cost estimate counts for each list of the area (they are no connections). */
export const INTEGRATION_LIST_BOUNDS: ReadonlyMap<string, number> = new Map([
  ['Integrations.apiKeys', 100],
  ['Integrations.apiKeyRequests', 1000],
  ['Integrations.apiKeyUsage', 90],
  ['Integrations.webhookEndpoints', 100],
  ['Integrations.webhookDeliveries', 100],
  ['IntegrationWebhookDelivery.log', 16],
  ['Integrations.calendarFeeds', 100],
  ['Integrations.audit', 1000],
]);

/** Fields of the area that hold personal data: read only with the personal-data grant, as the members they name are personal data. */
export const INTEGRATION_PERSONAL_FIELDS: ReadonlySet<string> = new Set(['IntegrationAuditEntry.memberEmail']);
