import { Logger as WorkerLogger, run, type Runner } from 'graphile-worker';
import pg from 'pg';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { createRegistry } from '../db/registry.ts';
import type { ResourceRegistry } from '../db/resource.ts';
import { compileOperations, type CompiledOperation } from '../graphql/operations.ts';
import { createSchema } from '../graphql/schema.ts';
import type { Logger } from '../logger.ts';
import { Deliverer } from './deliverer.ts';
import { DELIVER_TASK } from './delivery-store.ts';
import type { SecretBox } from './secret-box.ts';
import { WebhookSender, type AttemptOutcome } from './send-attempt.ts';

export interface WebhookWorkerOptions {
  db: Database;
  config: Config;
  logger: Logger;
  box: SecretBox;
  registry?: ResourceRegistry;
  /** The server's compiled `webhookBooking` operation; compiled here when absent (CLI). */
  bookingOperation?: CompiledOperation;
  trustedCertificates?: string[] | undefined;
  onAttempt?: (outcome: AttemptOutcome) => void;
}

export interface WebhookWorker {
  stop(): Promise<void>;
}

/** The delivery machinery shared by the worker and the CLI's manual redelivery. */
export function createDeliverer(options: WebhookWorkerOptions): { deliverer: Deliverer; sender: WebhookSender } {
  const { config } = options;
  const registry = options.registry ?? createRegistry();
  const bookingOperation = options.bookingOperation ?? compileOperations(createSchema({ registry })).webhookBooking;
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
    retryDelaysMs: config.WEBHOOK_RETRY_DELAYS_MS,
    ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}),
  });
  return { deliverer, sender };
}

/**
 * Starts a graphile-worker runner for webhook deliveries on the configured database. Any number of
 * them may run against one database: graphile-worker hands each job to one worker, and a delivery's
 * lease keeps two attempts of one event and endpoint from overlapping.
 */
export async function startWebhookWorker(options: WebhookWorkerOptions): Promise<WebhookWorker> {
  const { db, config, logger } = options;
  const { deliverer, sender } = createDeliverer(options);
  const embedded = db.kind === 'embedded';
  const pool = new pg.Pool({ connectionString: db.connectionString, max: Math.min(config.WEBHOOK_CONCURRENCY, 4) + 1, application_name: 'course-booking-webhooks' });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  let runner: Runner;
  try {
    runner = await run({
      pgPool: pool,
      concurrency: config.WEBHOOK_CONCURRENCY,
      // PostgreSQL announces new jobs at once (LISTEN/NOTIFY); through pglite-socket notifications
      // do not reach other connections, so on the embedded database workers poll more often.
      pollInterval: config.WEBHOOK_POLL_INTERVAL_MS ?? (embedded ? 500 : 2000),
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
          await deliverer.runScheduled(deliveryId, helpers.abortSignal);
        },
      },
    });
  } catch (error) {
    sender.close();
    await pool.end();
    throw error;
  }
  const sweep = () => releaseStaleLocks(pool, config.WEBHOOK_STALE_LOCK_MS).catch((error: unknown) => logger.warn({ err: error }, 'webhook lock sweep failed'));
  await sweep();
  const sweeper = setInterval(() => void sweep(), Math.max(250, Math.floor(config.WEBHOOK_STALE_LOCK_MS / 2)));
  sweeper.unref();
  logger.info({ concurrency: config.WEBHOOK_CONCURRENCY }, 'webhook worker started');
  let stopped: Promise<void> | null = null;
  return {
    stop() {
      stopped ??= (async () => {
        clearInterval(sweeper);
        await runner.stop().catch((error: unknown) => logger.warn({ err: error }, 'webhook worker stop failed'));
        sender.close();
        await pool.end().catch(() => {});
        logger.info('webhook worker stopped');
      })();
      return stopped;
    },
  };
}

/**
 * graphile-worker keeps the jobs of a worker that died locked for four hours. No attempt of ours
 * holds a job longer than the delivery timeout plus database work, so a job locked longer than
 * WEBHOOK_STALE_LOCK_MS belongs to a dead worker: its jobs are released for the living.
 */
async function releaseStaleLocks(pool: pg.Pool, staleMs: number): Promise<void> {
  await pool.query(
    `SELECT graphile_worker.force_unlock_workers(ARRAY(
       SELECT DISTINCT locked_by FROM graphile_worker.jobs
        WHERE locked_by IS NOT NULL AND locked_at < now() - $1 * interval '1 millisecond'))`,
    [staleMs],
  );
}
