import { Webhook } from 'standardwebhooks';
import type { Database } from '../db/database.ts';
import type { ResourceRegistry } from '../db/resource.ts';
import type { CompiledOperation } from '../graphql/operations.ts';
import type { Logger } from '../logger.ts';
import {
  claimDelivery,
  recordManualAttempt,
  recordScheduledAttempt,
  releaseLease,
  rescheduleIfPending,
  type ClaimedDelivery,
} from './delivery-store.ts';
import { buildPayload } from './payload.ts';
import type { SecretBox } from './secret-box.ts';
import type { AttemptOutcome, WebhookSender } from './send-attempt.ts';

export interface DelivererOptions {
  db: Database;
  registry: ResourceRegistry;
  bookingOperation: CompiledOperation;
  sender: WebhookSender;
  box: SecretBox;
  logger: Logger;
  timeoutMs: number;
  retryDelaysMs: readonly number[];
  /** Called once per recorded attempt (metrics). */
  onAttempt?: (outcome: AttemptOutcome) => void;
}

export interface ManualResult {
  deliveryId: string;
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * decisions (webhooks, signature): Standard Webhooks v1 over `<webhook-id>.<webhook-timestamp>.<body>`,
 * sent in `x-svc-signature` and, identically, in `webhook-signature`.
 */
export function signedHeaders(secret: string, eventId: string, at: Date, body: string): Record<string, string> {
  const signature = new Webhook(secret).sign(eventId, at, body);
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
    'x-svc-signature': signature,
  };
}

/** One attempt of one delivery: lease, body, signature, POST, log. */
export class Deliverer {
  readonly #options: DelivererOptions;

  constructor(options: DelivererOptions) {
    this.#options = options;
  }

  /** The lease outlives any attempt: the timeout, and as long again for the database work around it. */
  get #leaseMs(): number {
    return 2 * this.#options.timeoutMs;
  }

  /** A scheduled attempt (the job of `webhook_deliver`). */
  async runScheduled(deliveryId: string, signal?: AbortSignal): Promise<void> {
    const { db } = this.#options;
    const delivery = await claimDelivery(db, deliveryId, this.#leaseMs, false);
    if (!delivery) {
      await rescheduleIfPending(db, deliveryId);
      return;
    }
    const attempt = await this.#attempt(delivery, signal);
    if (!attempt) return;
    const recorded = await recordScheduledAttempt(db, delivery, attempt.body, attempt.startedAt, attempt.outcome, this.#options.retryDelaysMs);
    this.#options.onAttempt?.(attempt.outcome);
    this.#options.logger.info(
      {
        deliveryId,
        eventId: delivery.eventId,
        attempt: recorded.number,
        status: attempt.outcome.httpStatus,
        error: attempt.outcome.error,
        durationMs: attempt.outcome.durationMs,
        state: recorded.state,
        nextAttemptAt: recorded.nextAttemptAt?.toISOString() ?? null,
      },
      'webhook attempt',
    );
  }

  /** A manual redelivery, outside the 8; null when another attempt is under way or the endpoint is removed. */
  async runManual(deliveryId: string): Promise<ManualResult | null> {
    const { db } = this.#options;
    const delivery = await claimDelivery(db, deliveryId, this.#leaseMs, true);
    if (!delivery) return null;
    const attempt = await this.#attempt(delivery);
    if (!attempt) return { deliveryId, ok: false, httpStatus: null, error: 'booking_gone', durationMs: 0 };
    await recordManualAttempt(db, delivery, attempt.body, attempt.startedAt, attempt.outcome);
    this.#options.onAttempt?.(attempt.outcome);
    return { deliveryId, ok: attempt.outcome.ok, httpStatus: attempt.outcome.httpStatus, error: attempt.outcome.error, durationMs: attempt.outcome.durationMs };
  }

  async #attempt(delivery: ClaimedDelivery, signal?: AbortSignal): Promise<{ body: string; startedAt: Date; outcome: AttemptOutcome } | null> {
    const { db, registry, bookingOperation, sender, box } = this.#options;
    try {
      let body = delivery.body;
      if (body === null) {
        const built = await buildPayload(
          { db, registry },
          bookingOperation,
          { id: delivery.eventId, bookingId: delivery.bookingId, createdAt: delivery.eventCreatedAt },
          delivery.participants,
        );
        // The event cascades away with its booking, so this is a race with a deletion: nothing to send.
        if (built === null) return null;
        body = built;
      }
      const startedAt = new Date();
      const headers = signedHeaders(box.open(delivery.secretCiphertext), delivery.eventId, startedAt, body);
      const outcome = await sender.send(delivery.url, headers, body, signal);
      return { body, startedAt, outcome };
    } catch (error) {
      await releaseLease(db, delivery.id).catch(() => {});
      throw error;
    }
  }
}
