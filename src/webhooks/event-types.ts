import type { webhooks } from '../contract/public-v1-types.ts';
import { InputError } from '../input-error.ts';

/**
 * The event types an endpoint can subscribe to: the `webhooks` of openapi/public-v1.yaml (the
 * type below fails `npm run typecheck` when the two lists differ). The database's check on
 * `webhook_endpoints.event_types` names them too.
 */
export const EVENT_TYPES = ['booking.created', 'booking.updated'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const listsTheDocumentedWebhooks: Same<EventType, keyof webhooks> = true;
void listsTheDocumentedWebhooks;

/** What an endpoint registered without a choice receives: what every endpoint received before there was a choice. */
export const DEFAULT_EVENT_TYPES: readonly EventType[] = ['booking.created'];

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** `booking.created,booking.updated` as the CLI takes it (or those as a list): known types, each once, at least one. */
export function parseEventTypes(label: string, given: string | readonly string[]): EventType[] {
  const text = typeof given === 'string' ? given : given.join(',');
  const names = text.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !isEventType(name));
  if (unknown.length > 0 || names.length === 0) {
    const what = unknown.filter((name) => name !== '').map((name) => JSON.stringify(name));
    throw new InputError(
      `${label} ${what.length > 0 ? `names unknown event type(s) ${what.join(', ')}` : `${JSON.stringify(text)} names an empty event type`}; the types are ${EVENT_TYPES.join(', ')}`,
      { field: label },
    );
  }
  return EVENT_TYPES.filter((type) => names.includes(type));
}
