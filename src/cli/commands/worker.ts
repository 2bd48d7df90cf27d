import type { Command } from 'commander';
import { createLogger } from '../../logger.ts';
import { bindUnboundSecrets } from '../../webhooks/reseal-store.ts';
import type { CliContext } from '../context.ts';

function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      resolve(signal);
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.once('SIGTERM', onTerm);
    process.once('SIGINT', onInt);
  });
}

export function registerWorkerCommand(program: Command, ctx: CliContext): void {
  program
    .command('worker')
    .description('run a webhook delivery worker until SIGTERM or SIGINT (any number may run at once)')
    .action(async () => {
      const db = await ctx.database();
      const logger = createLogger(ctx.config.LOG_LEVEL, { write: (line: string) => ctx.io.stdout.write(line) });
      // Loaded only here: the other commands never need the delivery worker's code.
      const { startWebhookWorker } = await import('../../webhooks/worker.ts');
      const box = await ctx.secretBox();
      await bindUnboundSecrets(db, box, logger);
      const worker = await startWebhookWorker({
        db,
        config: ctx.config,
        logger,
        box,
        trustedCertificates: ctx.io.trustedCertificates,
      });
      const signal = await (ctx.io.untilStopped ?? untilSignal)();
      logger.info({ signal }, 'shutting down');
      await worker.stop();
    });
}
