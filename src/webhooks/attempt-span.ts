import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { ClaimedDelivery } from './claim-store.ts';
import type { AttemptOutcome } from './send-attempt.ts';

/** Without a tracing SDK these are the API's no-op spans. */
const tracer = trace.getTracer('course-booking-public-api/webhooks');

/**
 * A scheduled attempt or a manual redelivery runs in a span of its own, the parent of its statements and
 * of the POST to the receiver. Its attributes are ids and the outcome, never the URL or the body.
 */
export function traced<T>(name: string, deliveryId: string, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { kind: SpanKind.CONSUMER, attributes: { 'webhook.delivery.id': deliveryId } }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

export function recordOutcome(span: Span, delivery: ClaimedDelivery, outcome: AttemptOutcome): void {
  span.setAttributes({ 'webhook.event.id': delivery.eventId, 'webhook.endpoint.id': delivery.endpointId, 'webhook.ok': outcome.ok });
  if (outcome.httpStatus !== null) span.setAttribute('http.response.status_code', outcome.httpStatus);
  if (outcome.error !== null) {
    span.setAttribute('error.type', outcome.error);
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}
