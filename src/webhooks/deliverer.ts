import type { Span } from '@opentelemetry/api';
import { manualResult, type ManualResult } from './manual-result.ts';
import { signedHeaders } from './signed-headers.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { ResourceRegistry } from '../model/resource-registry.ts';
import { serviceModel } from '../model/service-model.ts';
import { compileOperations, type CompiledOperation } from '../graphql/operations.ts';
import { createSchema } from '../graphql/schema.ts';
import type { Logger } from '../logger.ts';
import { claimDelivery, claimDue, type ClaimedDelivery } from './claim-store.ts';
import { recordOutcome, traced } from './attempt-span.ts';
import { coalescedWrites } from './coalesced-writes.ts';
import { disableIfFailing, recordManualAttempt, releaseLease, renewLease, storeBody } from './delivery-store.ts';
import type { Turn } from './dispatcher.ts';
import { recordScheduledAttempts, storeBodies, type RecordedAttempt, type ScheduledAttempt } from './scheduled-record-store.ts';
import { readKeptStates } from './event-state-store.ts';
import DataLoader from 'dataloader';
import { buildPayloads, buildUpdatedPayload, type EventRef } from './payload.ts';
import { recordTestAttempt } from './test-event-store.ts';
import { SealedSecretError, type SecretBox } from './secret-box.ts';
import { WebhookSender, type AttemptOutcome } from './send-attempt.ts';

export const DAY_MS = 86_400_000;

/** The most attempts' bodies or outcomes written in one statement. */
const BATCH = 200;

export interface DelivererOptions {
  db: Database;
  registry: ResourceRegistry;
  bookingOperation: CompiledOperation<'webhookBooking'>;
  sender: WebhookSender;
  box: SecretBox;
  logger: Logger;
  timeoutMs: number;
  /** docs/architecture.md, "Webhook isolation": scheduled attempts in flight at once, per endpoint and per workspace. */
  bounds: { perEndpoint: number; perWorkspace: number };
  retryDelaysMs: readonly number[];
  /** docs/webhooks.md, "What disables an endpoint": how long an endpoint may keep failing. */
  disableAfterMs: number;
  /** Called once per recorded attempt (metrics). */
  onAttempt?: (outcome: AttemptOutcome) => void;
  /** Called when an endpoint is disabled, for failing or because its receiver answered 410 (metrics). */
  onDisabled?: (endpointId: string) => void;
  /** Called with the milliseconds until a retry this worker scheduled becomes due. */
  onScheduled?: (inMs: number) => void;
}

/** One attempt of one delivery: lease, body, signature, POST, log. */
export class Deliverer {
  readonly #options: DelivererOptions;
  /** Scheduled attempts' bodies and outcomes are written many per statement (docs/architecture.md, "Webhook isolation"). */
  readonly #bodies: DataLoader<{ deliveryId: string; body: string }, string>;
  readonly #records: DataLoader<ScheduledAttempt, RecordedAttempt>;
  /** The bodies of `booking.created` events, built together when they are wanted at the same time. */
  readonly #created: DataLoader<{ event: EventRef; participants: boolean }, string | null>;
  /** When this worker recorded the 410 that disabled each endpoint: attempts claimed before are not made. */
  readonly #disabledAt = new Map<string, number>();
  /** Scheduled attempts answered with a success and not recorded yet: their endpoints' places are free for this worker's claims. */
  readonly #answered = new Set<string>();

  constructor(options: DelivererOptions) {
    this.#options = options;
    this.#bodies = coalescedWrites((bodies) => storeBodies(options.db, bodies), BATCH, 2);
    this.#records = coalescedWrites((attempts) => recordScheduledAttempts(options.db, attempts), BATCH, 1);
    const runtime = { db: options.db, registry: options.registry };
    this.#created = new DataLoader(
      async (wanted) => {
        const built = new Array<string | null | Error>(wanted.length);
        for (const participants of [false, true]) {
          const indexes = wanted.flatMap((want, i) => (want.participants === participants ? [i] : []));
          if (indexes.length === 0) continue;
          const bodies = await buildPayloads(runtime, options.bookingOperation, indexes.map((i) => wanted[i]!.event), participants);
          indexes.forEach((index, i) => (built[index] = bodies[i]!));
        }
        return built;
      },
      { cache: false, maxBatchSize: BATCH },
    );
  }

  /** The lease outlives any attempt: the timeout, and as long again for the database work around it. */
  get #leaseMs(): number {
    return 2 * this.#options.timeoutMs;
  }

  /** Leases up to `limit` due deliveries for scheduled attempts, under the bounds, in a fair order. */
  claimDue(limit: number): Promise<ClaimedDelivery[]> {
    return claimDue(this.#options.db, { ...this.#options.bounds, leaseMs: this.#leaseMs }, limit, [...this.#answered]);
  }

  /** A scheduled attempt of a delivery whose lease `claimDue` took. */
  runScheduled(delivery: ClaimedDelivery, turn: Turn, signal?: AbortSignal): Promise<void> {
    return traced('webhook_deliver process', delivery.id, (span) => this.#runScheduled(delivery, span, turn, signal));
  }

  async #runScheduled(delivery: ClaimedDelivery, span: Span, turn: Turn, signal?: AbortSignal): Promise<void> {
    const [{ db }, deliveryId, claimedAt] = [this.#options, delivery.id, performance.now()];
    // Prepared while others send: a long wait for a place to send in (hanging receivers hold them
    // all) extends the lease first, so that it outlives the attempt; a lease lost meanwhile is not used.
    let free = () => {};
    const sendTurn = async () => {
      free = await turn.send();
      // Its endpoint was disabled by this worker since the claim: the attempt is not made.
      if ((this.#disabledAt.get(delivery.endpointId) ?? -Infinity) > claimedAt) {
        await releaseLease(db, deliveryId);
        return false;
      }
      if (performance.now() - claimedAt < this.#options.timeoutMs / 2) return true;
      return (await renewLease(db, deliveryId, delivery.leaseUntil, this.#leaseMs).catch(() => null)) !== null;
    };
    let attempt: { body: string; startedAt: Date; outcome: AttemptOutcome } | null;
    try {
      attempt = await this.#attempt(delivery, (body) => this.#bodies.load({ deliveryId, body }), signal, sendTurn);
      // A success frees its places while it is recorded; a failure holds them until then, so that
      // no attempt starts between a 410 and the endpoint's disabling, nor before its health is kept.
      if (!attempt || attempt.outcome.ok) free();
      if (attempt?.outcome.ok) {
        this.#answered.add(deliveryId);
        turn.answered();
      }
    } catch (error) {
      free();
      throw error;
    }
    if (!attempt) return;
    let recorded: RecordedAttempt;
    try {
      recorded = await this.#records.load({ delivery, ...attempt, retryDelaysMs: this.#options.retryDelaysMs });
      if (recorded.gone) this.#disabledAt.set(delivery.endpointId, performance.now());
    } finally {
      this.#answered.delete(deliveryId);
      free();
    }
    recordOutcome(span, delivery, attempt.outcome);
    span.setAttribute('webhook.delivery.state', recorded.state);
    if (recorded.number !== null) span.setAttribute('webhook.attempt', recorded.number);
    if (recorded.nextAttemptInMs !== null) this.#options.onScheduled?.(recorded.nextAttemptInMs);
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
    if (recorded.gone) this.#disabled(delivery.endpointId, 'gone');
    else if (recorded.state === 'failed' && (await disableIfFailing(db, delivery.endpointId, this.#options.disableAfterMs))) this.#disabled(delivery.endpointId, 'failing');
  }

  #disabled(endpointId: string, reason: 'failing' | 'gone'): void {
    this.#options.onDisabled?.(endpointId);
    this.#options.logger.warn(
      reason === 'gone' ? { endpointId, reason } : { endpointId, reason, disableAfterDays: this.#options.disableAfterMs / DAY_MS },
      reason === 'gone'
        ? 'webhook endpoint disabled: its receiver answered 410 Gone; `admin -- webhook enable` turns it back on'
        : 'webhook endpoint disabled: every attempt to it has failed for WEBHOOK_DISABLE_AFTER_DAYS; `admin -- webhook enable` turns it back on',
    );
  }

  /** A manual redelivery, outside the 8; null when another attempt is under way or the endpoint is removed. */
  runManual(deliveryId: string): Promise<ManualResult | null> {
    return traced('webhook_redeliver process', deliveryId, (span) => this.#runManual(deliveryId, span));
  }

  async #runManual(deliveryId: string, span: Span): Promise<ManualResult | null> {
    const { db } = this.#options;
    const delivery = await claimDelivery(db, deliveryId, this.#leaseMs, 'manual');
    if (!delivery) return null;
    const attempt = await this.#attempt(delivery, (body) => storeBody(db, delivery.id, body));
    if (!attempt) {
      return { deliveryId, ok: false, httpStatus: null, error: 'booking_gone', startedAt: null, durationMs: 0, answerStart: null, disabled: false, hint: 'The booking of this event no longer exists: there is nothing to send.' };
    }
    const gone = await recordManualAttempt(db, delivery, attempt.body, attempt.startedAt, attempt.outcome);
    recordOutcome(span, delivery, attempt.outcome);
    this.#options.onAttempt?.(attempt.outcome);
    if (gone) this.#disabled(delivery.endpointId, 'gone');
    return manualResult(deliveryId, attempt.startedAt, attempt.outcome, gone);
  }

  /**
   * The one attempt of a test event, made now: never retried, and whatever the answer (a 410
   * included) it does not count toward disabling the endpoint. Null when another attempt holds it.
   */
  runTest(deliveryId: string): Promise<ManualResult | null> {
    return traced('webhook_test process', deliveryId, async (span) => {
      const { db } = this.#options;
      const delivery = await claimDelivery(db, deliveryId, this.#leaseMs, 'test');
      if (!delivery) return null;
      const attempt = await this.#attempt(delivery, (body) => storeBody(db, delivery.id, body));
      if (!attempt) return null;
      await recordTestAttempt(db, delivery, attempt.startedAt, attempt.outcome);
      recordOutcome(span, delivery, attempt.outcome);
      this.#options.onAttempt?.(attempt.outcome);
      return manualResult(deliveryId, attempt.startedAt, attempt.outcome, false);
    });
  }

  /** The body of an event's first attempt to an endpoint (a test event's is stored with it). */
  async #build(delivery: ClaimedDelivery): Promise<string | null> {
    const { db, registry, bookingOperation } = this.#options;
    if (delivery.bookingId === null) return null;
    const event = { id: delivery.eventId, bookingId: delivery.bookingId, createdAt: delivery.eventCreatedAt };
    if (delivery.eventType === 'booking.created') return this.#created.load({ event, participants: delivery.participants });
    const states = await readKeptStates(db, registry, delivery.eventId);
    return states && buildUpdatedPayload({ db, registry }, bookingOperation, event, states, delivery.participants);
  }

  async #attempt(
    delivery: ClaimedDelivery,
    store: (body: string) => Promise<string>,
    signal?: AbortSignal,
    sendTurn?: () => Promise<boolean>,
  ): Promise<{ body: string; startedAt: Date; outcome: AttemptOutcome } | null> {
    const { db, sender, box } = this.#options;
    try {
      let secrets: string[];
      try {
        secrets = [delivery.secretCiphertext, delivery.previousSecretCiphertext]
          .filter((sealed) => sealed !== null)
          .map((sealed) => box.open(sealed, delivery.endpointId));
      } catch (error) {
        if (error instanceof SealedSecretError) this.#options.logger.error({ endpointId: delivery.endpointId, deliveryId: delivery.id }, error.message);
        throw error;
      }
      let body = delivery.body;
      if (body === null) {
        const built = await this.#build(delivery);
        // The event cascades away with its booking, so this is a race with a deletion: nothing to send.
        if (built === null) {
          await releaseLease(db, delivery.id);
          return null;
        }
        // Stored before anything is sent: a crash after sending resends exactly these bytes.
        body = await store(built);
      }
      // The lease was lost while waiting (whoever took it makes the attempt), or the endpoint disabled.
      if (sendTurn && !(await sendTurn())) return null;
      const startedAt = new Date();
      const headers = signedHeaders(secrets, delivery.eventId, startedAt, body);
      const outcome = await sender.send(delivery.url, headers, body, signal);
      return { body, startedAt, outcome };
    } catch (error) {
      await releaseLease(db, delivery.id).catch(() => {});
      throw error;
    }
  }
}

/** What delivering webhooks needs, in a worker or for a manual redelivery. */
export interface DeliveryOptions {
  db: Database;
  config: Config;
  logger: Logger;
  box: SecretBox;
  registry?: ResourceRegistry;
  /** The server's compiled `webhookBooking` operation; compiled here when absent (CLI). */
  bookingOperation?: CompiledOperation<'webhookBooking'>;
  trustedCertificates?: string[] | undefined;
  onAttempt?: (outcome: AttemptOutcome) => void;
  onDisabled?: (endpointId: string) => void;
  onScheduled?: (inMs: number) => void;
}

/** The delivery machinery shared by the worker and the CLI's manual redelivery. */
export function createDeliverer(options: DeliveryOptions): { deliverer: Deliverer; sender: WebhookSender } {
  const { config } = options;
  const registry = options.registry ?? serviceModel().registry;
  const bookingOperation = options.bookingOperation ?? compileOperations(createSchema(serviceModel())).webhookBooking;
  const sender = new WebhookSender({
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    trustedCertificates: options.trustedCertificates,
  });
  const deliverer = new Deliverer({
    db: options.db,
    registry,
    bookingOperation,
    sender,
    box: options.box,
    logger: options.logger,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    bounds: { perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY, perWorkspace: config.WEBHOOK_WORKSPACE_CONCURRENCY },
    retryDelaysMs: config.WEBHOOK_RETRY_DELAYS_MS,
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER_DAYS * DAY_MS,
    ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}),
    ...(options.onDisabled ? { onDisabled: options.onDisabled } : {}),
    ...(options.onScheduled ? { onScheduled: options.onScheduled } : {}),
  });
  return { deliverer, sender };
}
