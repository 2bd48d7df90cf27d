import { publicBaseUrl, type Config } from '../config.ts';
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
  /**
   * The public listener's URL as the world reaches it: the integrations page's links start with it,
   * and its origin is the only one the page's endpoints accept. Set again once the listener listens.
   */
  publicUrl: string;
  /** The box that seals endpoints' signing secrets; refused with a clear message where none is configured. */
  secretBox(): Promise<SecretBox>;
  /** Makes the one attempt of a test event, or a manual attempt of a delivery, now; null when another is under way. */
  sendNow(kind: 'test' | 'manual', deliveryId: string): Promise<ManualResult | null>;
}

export interface IntegrationContextOptions {
  db: Database;
  config: Config;
  /** The public listener's own URL, where PUBLIC_URL does not say otherwise; HOST and PORT where none is listening (the CLI). */
  listening?: string | undefined;
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
    publicUrl: publicBaseUrl(options.config, options.listening),
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
