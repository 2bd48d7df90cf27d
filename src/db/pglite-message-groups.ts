import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';

interface QueuedMessage {
  handlerId: number;
  message: Uint8Array;
  resolve(bytes: number): void;
  reject(error: unknown): void;
  onData(data: Uint8Array): void;
}

interface QueueInternals {
  queue: QueuedMessage[];
  processing: boolean;
  lastHandlerId: number | null;
  db: { isInTransaction(): boolean; runExclusive<T>(work: () => Promise<T>): Promise<T>; execProtocolRawStream(message: Uint8Array, options: { onRawData(data: Uint8Array): void }): Promise<unknown> };
  processQueue(): Promise<void>;
  clearQueueForHandler(handlerId: number): void;
}

// Extended-protocol messages up to the closing Sync: Parse, Bind, Describe, Execute, Close, Flush.
const EXTENDED = new Set(['P', 'B', 'D', 'E', 'C', 'H'].map((letter) => letter.charCodeAt(0)));
const SYNC = 'S'.charCodeAt(0);
const SIMPLE_QUERY = 'Q'.charCodeAt(0);

/**
 * pglite-socket runs the protocol messages of all connections on one PGlite session and keeps a
 * connection's messages together only inside an explicit transaction. An extended-protocol query
 * (Parse, Bind, Execute … Sync) of one connection can then be split by another's, which replaces
 * the unnamed portal ("portal does not exist") or binds the wrong parameters. This keeps every
 * such group together, as a real server does per connection. The queue is pglite-socket's own
 * (a private field): its message loop is replaced with the same loop plus this rule.
 */
export function keepMessageGroupsTogether(server: PGLiteSocketServer): void {
  const queue = (server as unknown as { queryQueue: QueueInternals }).queryQueue;
  if (!queue || !Array.isArray(queue.queue) || typeof queue.processQueue !== 'function') {
    throw new Error('pglite-socket changed its query queue; review src/db/pglite-message-groups.ts');
  }
  const midGroup = new Set<number>();
  const clear = queue.clearQueueForHandler.bind(queue);
  queue.clearQueueForHandler = (handlerId: number) => {
    midGroup.delete(handlerId);
    clear(handlerId);
  };
  queue.processQueue = async function processQueue(this: QueueInternals) {
    if (this.processing || this.queue.length === 0) return;
    this.processing = true;
    try {
      while (this.queue.length > 0) {
        const owner = this.lastHandlerId;
        let item: QueuedMessage | undefined;
        if (owner !== null && (this.db.isInTransaction() || midGroup.has(owner))) {
          const index = this.queue.findIndex((queued) => queued.handlerId === owner);
          if (index === -1) break;
          item = this.queue.splice(index, 1)[0];
        } else {
          item = this.queue.shift();
        }
        if (!item) break;
        const type = item.message[0]!;
        if (type === SYNC || type === SIMPLE_QUERY) midGroup.delete(item.handlerId);
        else if (EXTENDED.has(type)) midGroup.add(item.handlerId);
        let bytes = 0;
        const current = item;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(current.message, {
              onRawData: (data) => {
                bytes += data.length;
                current.onData(data);
              },
            }),
          );
        } catch (error) {
          midGroup.delete(current.handlerId);
          current.reject(error);
          continue;
        }
        this.lastHandlerId = current.handlerId;
        current.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  }.bind(queue);
}
