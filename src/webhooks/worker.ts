import { DAY_MS, createDeliverer, type DeliveryOptions } from './deliverer.ts';
import { eraseExpiredBodies, nextDueDeliveryInMs } from './delivery-store.ts';
import { Dispatcher } from './dispatcher.ts';
import { listenForDueDeliveries, type DueListener } from './due-listener.ts';
import { openPoolBeside } from '../db/database.ts';
import { preparedStatementsSetting } from '../config.ts';

export type WebhookWorkerOptions = DeliveryOptions;

/** How long attempts in flight may finish when the worker stops. */
const GRACE_MS = 5_000;
/** The embedded database's idle poll, unless WEBHOOK_POLL_INTERVAL_MS says otherwise. */
const EMBEDDED_POLL_MS = 500;

export interface WebhookWorker {
  stop(): Promise<void>;
}

/**
 * Starts a webhook worker on the configured database. Any number of them may run against one
 * database: the deliveries table is their one queue (docs/architecture.md, "Webhook isolation"),
 * a claim leases each delivery to one worker, and the lease keeps two attempts of one event and
 * endpoint from overlapping.
 */
export async function startWebhookWorker(options: WebhookWorkerOptions): Promise<WebhookWorker> {
  const { config, logger } = options;
  // Connections of its own (a bulkhead): a burst of deliveries never takes the API's, nor the
  // API's load the deliveries'. The embedded database runs one statement at a time whatever the connections.
  const db = await openPoolBeside(options.db, {
    poolSize: options.db.kind === 'embedded' ? 2 : config.WEBHOOK_DB_POOL_SIZE,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    applicationName: 'course-booking-webhook-deliveries',
    preparedStatements: preparedStatementsSetting(config),
  });
  const embedded = db.kind === 'embedded';
  // docs/webhooks.md, "Attempts, failures and the schedule": a retry starts when it is due. The
  // worker that scheduled it arms its timer for it; the others' timers are armed, from the
  // deliveries, no later than the lease it held (and that a worker that died leaves to expire).
  let dispatcher: Dispatcher | null = null;
  const { deliverer, sender } = createDeliverer({
    ...options,
    db,
    onScheduled: (inMs) => {
      dispatcher?.dueIn(inMs);
      options.onScheduled?.(inMs);
    },
  });
  // docs/architecture.md, "Webhook isolation": the attempts run here, claimed from the deliveries
  // themselves under the bounds.
  dispatcher = new Dispatcher({
    claim: (limit) => deliverer.claimDue(limit),
    attempt: (delivery, signal, turn) => deliverer.runScheduled(delivery, turn, signal),
    nextDueInMs: () => nextDueDeliveryInMs(db),
    concurrency: config.WEBHOOK_CONCURRENCY,
    // Through pglite-socket notifications do not reach other connections: on the embedded
    // database the idle poll finds new deliveries; on PostgreSQL a notification announces them.
    pollIntervalMs: embedded ? (config.WEBHOOK_POLL_INTERVAL_MS ?? EMBEDDED_POLL_MS) : null,
    logger,
  });
  const wake = dispatcher;
  // Stored bodies are erased WEBHOOK_BODY_RETENTION_DAYS after their delivery's final state.
  const retentionMs = config.WEBHOOK_BODY_RETENTION_DAYS * DAY_MS;
  const erase = () =>
    eraseExpiredBodies(db, retentionMs)
      .then((erased) => erased > 0 && logger.info({ erased }, 'webhook bodies erased after their retention time'))
      .catch((error: unknown) => logger.warn({ err: error }, 'webhook body erasure failed'));
  await erase();
  const eraser = setInterval(() => void erase(), Math.min(3_600_000, Math.max(250, Math.floor(retentionMs / 4))));
  eraser.unref();
  // New deliveries, `webhook enable`, `webhook recover` and a lease given back announce themselves
  // by a notification (docs/architecture.md, "Webhook isolation").
  const listener: DueListener | null = embedded ? null : listenForDueDeliveries(options.db.directConnectionString, () => wake.nudge(), logger);
  // What is due already, and the timer for what falls due next.
  wake.nudge();
  logger.info({ concurrency: config.WEBHOOK_CONCURRENCY }, 'webhook worker started');
  let stopped: Promise<void> | null = null;
  return {
    stop() {
      stopped ??= (async () => {
        clearInterval(eraser);
        await listener?.stop();
        await wake.stop(GRACE_MS);
        sender.close();
        await db.close().catch(() => {});
        logger.info('webhook worker stopped');
      })();
      return stopped;
    },
  };
}
