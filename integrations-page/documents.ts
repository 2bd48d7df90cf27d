/**
 * The GraphQL documents the page runs at /integrations/api/graphql: the integrations area of
 * internal GraphQL (src/integrations/graphql-sdl.ts), with the session's workspace and member.
 */
const WHO = '$workspaceId: ID!, $member: String!';
const AS = 'workspaceId: $workspaceId, member: $member';

export const KEYS = `query Keys(${WHO}) { integrations(${AS}) { apiKeys { id name scopes last4 createdAt expiresAt allowedIps lastUsedAt lastUsedNetwork state } } }`;
export const KEY_ACTIVITY = `query KeyActivity(${WHO}, $id: ID!, $status: String, $days: Int) { integrations(${AS}) {
  apiKeyRequests(id: $id, status: $status, limit: 1000) { requestedAt method path status errorCode durationMs requestId clientNetwork }
  apiKeyUsage(id: $id, days: $days) { day requests status2xx status3xx status4xx status5xx rateLimited }
} }`;
export const CREATE_KEY = `mutation CreateKey(${WHO}, $input: CreateApiKeyInput!) { createApiKey(${AS}, input: $input) { id key } }`;
export const UPDATE_KEY = `mutation UpdateKey(${WHO}, $id: ID!, $input: UpdateApiKeyInput!) { updateApiKey(${AS}, id: $id, input: $input) { id } }`;
export const ROTATE_KEY = `mutation RotateKey(${WHO}, $id: ID!) { rotateApiKey(${AS}, id: $id) { id key } }`;
export const REVOKE_KEY = `mutation RevokeKey(${WHO}, $id: ID!) { revokeApiKey(${AS}, id: $id) { id state } }`;

export const ENDPOINTS = `query Endpoints(${WHO}) { integrations(${AS}) { webhookEndpoints { id url events createdAt state disabledReason previousSecretUntil health { state consecutiveFailures failingSince lastFailure } } } }`;
export const DELIVERIES = `query Deliveries(${WHO}, $endpointId: ID!) { integrations(${AS}) { webhookDeliveries(endpointId: $endpointId) {
  id eventId eventType test state attempts nextAttemptAt log { series number manual startedAt durationMs httpStatus error }
} } }`;
export const ADD_ENDPOINT = `mutation AddEndpoint(${WHO}, $input: AddWebhookEndpointInput!) { addWebhookEndpoint(${AS}, input: $input) { id secret } }`;
export const UPDATE_ENDPOINT = `mutation UpdateEndpoint(${WHO}, $id: ID!, $input: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(${AS}, id: $id, input: $input) { id } }`;
export const REMOVE_ENDPOINT = `mutation RemoveEndpoint(${WHO}, $id: ID!) { removeWebhookEndpoint(${AS}, id: $id) { id state } }`;
export const ENABLE_ENDPOINT = `mutation EnableEndpoint(${WHO}, $id: ID!) { enableWebhookEndpoint(${AS}, id: $id) { id state resumed } }`;
export const SEND_TEST = `mutation SendTest(${WHO}, $id: ID!) { sendWebhookTestEvent(${AS}, id: $id) { event type ok httpStatus error durationMs answerStart stillDisabled } }`;
export const RESEND = `mutation Resend(${WHO}, $endpointId: ID!, $eventId: ID!) { resendWebhookDelivery(${AS}, endpointId: $endpointId, eventId: $eventId) { ok httpStatus error durationMs answerStart } }`;
export const RECOVER = `mutation Recover(${WHO}, $id: ID!, $since: String!) { recoverWebhookDeliveries(${AS}, id: $id, since: $since) { recovered } }`;
export const ROTATE_SECRET = `mutation RotateSecret(${WHO}, $id: ID!) { rotateWebhookSecret(${AS}, id: $id) { id secret previousSecretUntil } }`;

export const FEEDS = `query Feeds(${WHO}) { integrations(${AS}) { calendarFeeds { id name last4 createdAt state } } }`;
export const CREATE_FEED = `mutation CreateFeed(${WHO}, $name: String) { createCalendarFeed(${AS}, name: $name) { id path } }`;
export const REVOKE_FEED = `mutation RevokeFeed(${WHO}, $id: ID!) { revokeCalendarFeed(${AS}, id: $id) { id state } }`;
