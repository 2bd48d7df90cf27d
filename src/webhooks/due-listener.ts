import pg from 'pg';
import type { Logger } from '../logger.ts';

/**
 * The channel notified when deliveries become due now: by the booking triggers when a statement
 * recorded pending deliveries (migration 1763801900000), by `webhook enable` and `webhook recover`,
 * and when a lease of a due delivery is given back.
 */
export const DELIVERIES_DUE_CHANNEL = 'webhook_deliveries_due';
/** How long a lost listening connection waits before it connects again (the idle poll covers the gap). */
const RECONNECT_MS = 1_000;

export interface DueListener {
  stop(): Promise<void>;
}

/**
 * docs/architecture.md, "Webhook isolation": listens on PostgreSQL for the announcements of
 * deliveries due now and calls `wake` for each (one per announcing transaction). A notification is
 * only a hint: the deliveries stay the queue, and whatever was announced while the connection was
 * lost is claimed when it is made again (`wake` is called then). It holds one connection of its own, on the direct
 * URL: LISTEN is session state, which a transaction pooler does not keep.
 */
export function listenForDueDeliveries(connectionString: string, wake: () => void, logger: Logger): DueListener {
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;
  let stopped = false;
  const connect = async () => {
    retry = null;
    if (stopped) return;
    const made = new pg.Client({ connectionString, application_name: 'course-booking-webhook-wake-ups' });
    client = made;
    const lost = (error?: unknown) => {
      if (client !== made) return;
      client = null;
      made.removeAllListeners('notification');
      void made.end().catch(() => {});
      if (stopped) return;
      if (error) logger.warn({ err: error }, 'webhook wake-up listener lost its connection');
      retry = setTimeout(() => void connect(), RECONNECT_MS);
      retry.unref();
    };
    made.on('error', lost);
    made.on('end', () => lost());
    made.on('notification', () => wake());
    try {
      await made.connect();
      await made.query(`LISTEN ${DELIVERIES_DUE_CHANNEL}`);
      // Whatever was announced while this connection was being made.
      wake();
    } catch (error) {
      lost(error);
    }
  };
  void connect();
  return {
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      const open = client;
      client = null;
      await open?.end().catch(() => {});
    },
  };
}
