import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { CompiledOperation } from '../graphql/operations.ts';
import type { Logger } from '../logger.ts';
import type { ResourceRegistry } from '../model/resource-registry.ts';
import { createDeliverer } from '../webhooks/deliverer.ts';
import type { ManualResult } from '../webhooks/manual-result.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';

/** What the integration operations run with, whichever way in called them. */
export interface IntegrationContext {
  db: Database;
  config: Config;
  /** The box that seals endpoints' signing secrets; refused with a clear message where none is configured. */
  secretBox(): Promise<SecretBox>;
  /** Makes the one attempt of a test event, or a manual attempt of a delivery, now; null when another is under way. */
  sendNow(kind: 'test' | 'manual', deliveryId: string): Promise<ManualResult | null>;
}

export interface IntegrationContextOptions {
  db: Database;
  config: Config;
  logger: Logger;
  secretBox(): Promise<SecretBox>;
  trustedCertificates?: string[] | undefined;
  registry?: ResourceRegistry;
  bookingOperation?: CompiledOperation<'webhookBooking'>;
}

export function integrationContext(options: IntegrationContextOptions): IntegrationContext {
  return {
    db: options.db,
    config: options.config,
    secretBox: options.secretBox,
    async sendNow(kind, deliveryId) {
      const { deliverer, sender } = createDeliverer({
        db: options.db,
        config: options.config,
        logger: options.logger,
        box: await options.secretBox(),
        trustedCertificates: options.trustedCertificates,
        ...(options.registry ? { registry: options.registry } : {}),
        ...(options.bookingOperation ? { bookingOperation: options.bookingOperation } : {}),
      });
      try {
        return await (kind === 'test' ? deliverer.runTest(deliveryId) : deliverer.runManual(deliveryId));
      } finally {
        sender.close();
      }
    },
  };
}
