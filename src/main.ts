import { ConfigError, loadConfig, wantsDemo } from './config.ts';
import type { DemoKeys } from './demo/demo.ts';
import { createLogger } from './logger.ts';
import { startTracing, type Tracing } from './observability/tracing.ts';
import type { RunningServer } from './server.ts';

function banner(publicUrl: string, internalUrl: string | null, demo: DemoKeys | null, portalLink: string | null): string {
  const lines = [
    `Course booking public API v1 (Beta) on ${publicUrl}`,
    `  Reference: ${publicUrl}/docs`,
    `  OpenAPI: ${publicUrl}/openapi/public-v1.yaml`,
  ];
  if (internalUrl) lines.push(`  Internal GraphQL: ${internalUrl}/graphql (Authorization: Bearer $INTERNAL_API_TOKEN)`);
  if (demo) {
    lines.push(
      '',
      ...(demo.notice ? [demo.notice, ''] : []),
      `Demo workspace ${demo.workspaceId}`,
      `  Key with every scope:            ${demo.fullKey}`,
      `  Key without participants:read:   ${demo.limitedKey}`,
      '',
      'Try:',
      `  curl -s -H "Authorization: Bearer ${demo.fullKey}" ${publicUrl}/api/public/v1/courses`,
      `  curl -s -H "Authorization: Bearer ${demo.fullKey}" ${publicUrl}/api/public/v1/bookings`,
      `  curl -s -H "Authorization: Bearer ${demo.limitedKey}" ${publicUrl}/api/public/v1/bookings`,
    );
    if (portalLink) {
      lines.push('', "Integrations page as the demo workspace's owner (keys, webhooks, calendar feeds; the link opens once, within 10 minutes):", `  ${portalLink}`);
    }
  }
  return lines.join('\n');
}

/** A fresh single-use link to the integrations page for the demo's owner: every start prints one that opens. */
async function demoPortalLink(server: RunningServer, workspaceId: string): Promise<string | null> {
  const { findManagerEmail } = await import('./workspaces/member-store.ts');
  const { createPortalLink } = await import('./integrations/portal.ts');
  const owner = await findManagerEmail(server.db, workspaceId);
  if (!owner) return null;
  return (await createPortalLink(server.integrations, { workspaceId, memberEmail: owner, source: 'cli' }, {})).url;
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.LOG_LEVEL);
  // Before the service's modules are imported: the instrumentations patch them as they load.
  const tracing: Tracing | null = await startTracing(config);
  // A first embedded start copies the build's template (the system's cp, a process of its own)
  // while this one loads the service's modules; startServer waits for it.
  const template = (await import('./demo/demo-fixture.ts')).copyTemplateForStart(config);
  template.catch(() => {}); // a failed copy is startServer's to report; until then it is not unhandled
  const { startServer } = await import('./server.ts');
  const { ensureDatabaseDemo, ensureEmbeddedDemo } = await import('./demo/demo.ts');
  const { readTemplateInfo } = await import('./db/embedded-template.ts');
  // Signals are handled from the first moment: a SIGTERM that arrives while the server is still
  // starting (or just after it printed its banner) must still end in a clean shutdown.
  let server: RunningServer | null = null;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, 15_000);
    deadline.unref();
    if (server) {
      // A terminating instance first stops looking ready, so that load balancers send no more
      // traffic, then stops accepting and finishes what is in flight.
      server.drain();
      if (signal === 'SIGTERM' && config.SHUTDOWN_DRAIN_MS > 0) await new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_DRAIN_MS));
      await server.close();
    }
    // The spans of the last requests are still buffered.
    await tracing?.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'exporting the last spans failed'));
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  const started = await startServer({ config, logger, template });
  server = started;
  if (stopping) {
    await started.close();
    return;
  }
  let demo: DemoKeys | null = null;
  try {
    if (wantsDemo(config)) {
      demo = config.DATABASE_URL ? await ensureDatabaseDemo(started.db) : await ensureEmbeddedDemo(started.db, config.DATA_DIR, (await readTemplateInfo())?.demoFixtureSha256 ?? null);
    }
  } catch (error) {
    // A signal during the demo's first import closes the database under it: that is a stop, not a failure.
    if (stopping) return;
    throw error;
  }
  if (stopping) return;
  const portalLink = demo ? await demoPortalLink(started, demo.workspaceId) : null;
  if (stopping) return;
  process.stdout.write(`${banner(started.publicUrl, started.internalUrl, demo, portalLink)}\n`);
}

main().catch((error: unknown) => {
  console.error(`Start failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
