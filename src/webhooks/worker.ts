import { Logger as WorkerLogger, run, type Runner } from 'graphile-worker';
import pg from 'pg';
import { DAY_MS, createDeliverer, type DeliveryOptions } from './deliverer.ts';
import { DELIVER_TASK } from './claim-store.ts';
import { eraseExpiredBodies, nextDueDeliveryInMs, releaseStaleJobLocks } from './delivery-store.ts';
import { DueTimer } from './due-timer.ts';
import { Dispatcher } from './dispatcher.ts';
import { listenForDueDeliveries, type DueListener } from './due-listener.ts';
import { openPoolBeside } from '../db/database.ts';
import { preparedStatementsSetting } from '../config.ts';

export type WebhookWorkerOptions = DeliveryOptions;

/** Jobs only wake the dispatcher: a few at once are plenty. */
const WAKE_UP_CONCURRENCY = 4;
/** How long attempts in flight may finish when the worker stops. */
const GRACE_MS = 5_000;

export interface WebhookWorker {
  stop(): Promise<void>;
}

/**
 * Starts a graphile-worker runner for webhook deliveries on the configured database. Any number of
 * them may run against one database: graphile-worker hands each job to one worker, and a delivery's
 * lease keeps two attempts of one event and endpoint from overlapping.
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
  const pollInterval = config.WEBHOOK_POLL_INTERVAL_MS ?? (db.kind === 'embedded' ? 500 : 2000);
  // docs/webhooks.md, "Attempts, failures and the schedule": a retry starts when it is due, not at
  // the queue's next poll. This worker wakes its queue at the due times it knows: those it scheduled
  // itself, and those of jobs any worker scheduled that fall due before its next look.
  let dispatcher: Dispatcher | null = null;
  const dueTimer = new DueTimer(() => dispatcher?.nudge());
  const { deliverer, sender } = createDeliverer({
    ...options,
    db,
    onScheduled: (inMs) => {
      dueTimer.in(inMs);
      options.onScheduled?.(inMs);
    },
  });
  // docs/architecture.md, "Webhook isolation": the attempts run here, claimed from the deliveries
  // themselves under the bounds; the jobs only announce that something became due.
  dispatcher = new Dispatcher({
    claim: (limit) => deliverer.claimDue(limit),
    attempt: (delivery, signal, turn) => deliverer.runScheduled(delivery, turn, signal),
    concurrency: config.WEBHOOK_CONCURRENCY,
    pollIntervalMs: pollInterval,
    logger,
  });
  const wake = dispatcher;
  const embedded = db.kind === 'embedded';
  // LISTEN and graphile-worker's advisory locks are session state: the direct URL, past any pooler.
  const pool = new pg.Pool({ connectionString: options.db.directConnectionString, max: WAKE_UP_CONCURRENCY + 1, application_name: 'course-booking-webhooks' });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  let runner: Runner;
  try {
    runner = await run({
      pgPool: pool,
      concurrency: WAKE_UP_CONCURRENCY,
      // PostgreSQL announces new jobs at once (LISTEN/NOTIFY); through pglite-socket notifications
      // do not reach other connections, so on the embedded database workers poll more often.
      pollInterval,
      noHandleSignals: true,
      // Statements of every connection to the embedded database share one session: named prepared
      // statements of two connections would collide there.
      noPreparedStatements: embedded,
      // graphile-worker's own log lines are dropped: the service logs what matters about deliveries.
      logger: new WorkerLogger(() => () => {}),
      gracefulShutdownAbortTimeout: GRACE_MS,
      // Jobs are fetched many at a time and end at once; a job waits in the local queue at most
      // `ttl`, less than WEBHOOK_STALE_LOCK_MS, so no living worker's job is taken for a dead one's.
      preset: {
        worker: {
          localQueue: { size: 200, ttl: Math.floor(config.WEBHOOK_STALE_LOCK_MS / 2) },
          completeJobBatchDelay: 5,
        },
      },
      taskList: {
        // A delivery's job (added with its retry, by `webhook enable` or `webhook recover`) is a
        // wake-up: its delivery is attempted when a claim finds it due under the bounds.
        [DELIVER_TASK]: () => {
          wake.nudge();
        },
      },
    });
  } catch (error) {
    dueTimer.stop();
    await wake.stop(0);
    sender.close();
    await pool.end();
    await db.close();
    throw error;
  }
  const sweep = () => releaseStaleJobLocks(pool, config.WEBHOOK_STALE_LOCK_MS).catch((error: unknown) => logger.warn({ err: error }, 'webhook lock sweep failed'));
  await sweep();
  const sweeper = setInterval(() => void sweep(), Math.max(250, Math.floor(config.WEBHOOK_STALE_LOCK_MS / 2)));
  sweeper.unref();
  // Deliveries that fall due before the next look, whoever scheduled them, and the expiring leases of a worker that died.
  const lookAhead = () =>
    nextDueDeliveryInMs(pool, 2 * pollInterval)
      .then((inMs) => inMs !== null && dueTimer.in(inMs))
      .catch((error: unknown) => logger.warn({ err: error }, 'webhook due-time look-ahead failed'));
  await lookAhead();
  const lookAheadTimer = setInterval(() => void lookAhead(), pollInterval);
  lookAheadTimer.unref();
  // Stored bodies are erased WEBHOOK_BODY_RETENTION_DAYS after their delivery's final state.
  const retentionMs = config.WEBHOOK_BODY_RETENTION_DAYS * DAY_MS;
  const erase = () =>
    eraseExpiredBodies(pool, retentionMs)
      .then((erased) => erased > 0 && logger.info({ erased }, 'webhook bodies erased after their retention time'))
      .catch((error: unknown) => logger.warn({ err: error }, 'webhook body erasure failed'));
  await erase();
  const eraser = setInterval(() => void erase(), Math.min(3_600_000, Math.max(250, Math.floor(retentionMs / 4))));
  eraser.unref();
  // New deliveries are announced by a notification, not a job (docs/architecture.md, "Webhook
  // isolation"); through pglite-socket notifications do not reach other connections, so on the
  // embedded database the idle poll finds them.
  const listener: DueListener | null = embedded ? null : listenForDueDeliveries(options.db.directConnectionString, () => wake.nudge(), logger);
  wake.nudge();
  logger.info({ concurrency: config.WEBHOOK_CONCURRENCY }, 'webhook worker started');
  let stopped: Promise<void> | null = null;
  return {
    stop() {
      stopped ??= (async () => {
        clearInterval(sweeper);
        clearInterval(lookAheadTimer);
        clearInterval(eraser);
        dueTimer.stop();
        await listener?.stop();
        await wake.stop(GRACE_MS);
        await runner.stop().catch((error: unknown) => logger.warn({ err: error }, 'webhook worker stop failed'));
        sender.close();
        await pool.end().catch(() => {});
        await db.close().catch(() => {});
        logger.info('webhook worker stopped');
      })();
      return stopped;
    },
  };
}
