import { EventEmitter, setMaxListeners } from 'node:events';
import { Logger as WorkerLogger, run, type Runner, type WorkerEvents, type WorkerPool } from 'graphile-worker';
import pg from 'pg';
import { DAY_MS, createDeliverer, type DeliveryOptions } from './deliverer.ts';
import { DELIVER_TASK } from './claim-store.ts';
import { eraseExpiredBodies, nextDueJobInMs, releaseStaleJobLocks } from './delivery-store.ts';
import { DueTimer } from './due-timer.ts';

export type WebhookWorkerOptions = DeliveryOptions;

export interface WebhookWorker {
  stop(): Promise<void>;
}

/**
 * Starts a graphile-worker runner for webhook deliveries on the configured database. Any number of
 * them may run against one database: graphile-worker hands each job to one worker, and a delivery's
 * lease keeps two attempts of one event and endpoint from overlapping.
 */
export async function startWebhookWorker(options: WebhookWorkerOptions): Promise<WebhookWorker> {
  const { db, config, logger } = options;
  const pollInterval = config.WEBHOOK_POLL_INTERVAL_MS ?? (db.kind === 'embedded' ? 500 : 2000);
  // docs/webhooks.md, "Attempts, failures and the schedule": a retry starts when it is due, not at
  // the queue's next poll. This worker wakes its queue at the due times it knows: those it scheduled
  // itself, and those of jobs any worker scheduled that fall due before its next look.
  let workerPool: WorkerPool | null = null;
  const dueTimer = new DueTimer(() => workerPool?.nudge(1));
  const events: WorkerEvents = new EventEmitter();
  events.on('pool:create', ({ workerPool: created }) => (workerPool = created));
  const { deliverer, sender } = createDeliverer({
    ...options,
    onScheduled: (inMs) => {
      dueTimer.in(inMs);
      options.onScheduled?.(inMs);
    },
  });
  const embedded = db.kind === 'embedded';
  // LISTEN and graphile-worker's advisory locks are session state: the direct URL, past any pooler.
  const pool = new pg.Pool({ connectionString: db.directConnectionString, max: Math.min(config.WEBHOOK_CONCURRENCY, 4) + 1, application_name: 'course-booking-webhooks' });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  let runner: Runner;
  try {
    runner = await run({
      pgPool: pool,
      concurrency: config.WEBHOOK_CONCURRENCY,
      // PostgreSQL announces new jobs at once (LISTEN/NOTIFY); through pglite-socket notifications
      // do not reach other connections, so on the embedded database workers poll more often.
      pollInterval,
      events,
      noHandleSignals: true,
      // Statements of every connection to the embedded database share one session: named prepared
      // statements of two connections would collide there.
      noPreparedStatements: embedded,
      // graphile-worker's own log lines are dropped: the service logs what matters about deliveries.
      logger: new WorkerLogger(() => () => {}),
      gracefulShutdownAbortTimeout: 5_000,
      // Jobs are fetched a few at a time. A job waits in the local queue at most `ttl`, then runs
      // for at most its lease (twice the timeout): together less than WEBHOOK_STALE_LOCK_MS, so no
      // living worker's job is ever taken for a dead one's.
      preset: {
        worker: {
          localQueue: { size: config.WEBHOOK_CONCURRENCY + 1, ttl: Math.floor((config.WEBHOOK_STALE_LOCK_MS - 2 * config.WEBHOOK_TIMEOUT_MS) / 2) },
          completeJobBatchDelay: 0,
        },
      },
      taskList: {
        [DELIVER_TASK]: async (payload, helpers) => {
          const deliveryId = (payload as { deliveryId?: unknown }).deliveryId;
          if (typeof deliveryId !== 'string') return;
          // One shutdown signal for every job of the pool: each attempt in flight listens to it.
          if (helpers.abortSignal) setMaxListeners(2 * config.WEBHOOK_CONCURRENCY + 10, helpers.abortSignal);
          await deliverer.runScheduled(deliveryId, helpers.abortSignal);
        },
      },
    });
  } catch (error) {
    dueTimer.stop();
    sender.close();
    await pool.end();
    throw error;
  }
  const sweep = () => releaseStaleJobLocks(pool, config.WEBHOOK_STALE_LOCK_MS).catch((error: unknown) => logger.warn({ err: error }, 'webhook lock sweep failed'));
  await sweep();
  const sweeper = setInterval(() => void sweep(), Math.max(250, Math.floor(config.WEBHOOK_STALE_LOCK_MS / 2)));
  sweeper.unref();
  // Jobs that fall due before the next look, whoever scheduled them (another worker, one that died).
  const lookAhead = () =>
    nextDueJobInMs(pool, 2 * pollInterval)
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
  logger.info({ concurrency: config.WEBHOOK_CONCURRENCY }, 'webhook worker started');
  let stopped: Promise<void> | null = null;
  return {
    stop() {
      stopped ??= (async () => {
        clearInterval(sweeper);
        clearInterval(lookAheadTimer);
        clearInterval(eraser);
        dueTimer.stop();
        await runner.stop().catch((error: unknown) => logger.warn({ err: error }, 'webhook worker stop failed'));
        sender.close();
        await pool.end().catch(() => {});
        logger.info('webhook worker stopped');
      })();
      return stopped;
    },
  };
}
