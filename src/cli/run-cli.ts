import { readFile } from 'node:fs/promises';
import { Command, CommanderError, Option } from 'commander';
import { createApiKey, listApiKeys, revokeApiKey, rotateApiKey } from '../auth/api-key-store.ts';
import { assertWorkspaceExists } from '../auth/members.ts';
import { createFeedToken, listFeedTokens, revokeFeedToken } from '../calendar/feed-token-store.ts';
import type { Database } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';
import { importDemo } from '../demo/demo.ts';
import { importFixture } from '../fixtures/import-fixture.ts';
import { InputError, isInputError } from '../input-error.ts';
import { loadConfig, type Config } from '../config.ts';
import { createLogger } from '../logger.ts';
import { addEndpoint, findDelivery, listDeliveries, listEndpoints, removeEndpoint } from '../webhooks/endpoint-store.ts';
import { requireSecretBox } from '../webhooks/secret-box.ts';
import { createDeliverer, startWebhookWorker } from '../webhooks/worker.ts';

export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Opens the configured database; called only by commands that need it. */
  openDb(): Promise<Database>;
  /** The configuration (webhook settings); read from the environment when absent. */
  config?: Config;
  /** Whether the embedded database's data directory may hold the webhook secret key. */
  secretKeyFromDataDir?: boolean;
  /** Resolves when a long-running command (the worker) should stop; SIGTERM or SIGINT by default. */
  untilStopped?: () => Promise<string>;
  /** Certificates the worker and redelivery trust besides the default store (tests). */
  trustedCertificates?: string[];
}

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

interface Output {
  json?: boolean;
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

function nonEmpty(label: string) {
  return (value: string) => {
    if (value.trim() === '') throw new InputError(`${label} must not be empty`);
    return value.trim();
  };
}

/**
 * The operator CLI. Every command prints JSON with --json; bad input prints `error: …` on stderr,
 * exits non-zero (2 for usage, 1 for refused input) and writes nothing.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let db: Database | null = null;
  const database = async () => {
    if (!db) {
      db = await io.openDb();
      await migrate(db);
    }
    return db;
  };
  const print = (options: Output, result: unknown, text: string) => {
    io.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${text}\n`);
  };

  const program = new Command('admin')
    .description('Operator commands of the course booking API')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .showHelpAfterError(false);
  const json = () => new Option('--json', 'print the result as JSON');

  program
    .command('migrate')
    .description('apply pending database migrations')
    .addOption(json())
    .action(async (options: Output) => {
      const opened = await io.openDb();
      db = opened;
      const result = await migrate(opened);
      print(options, result, result.applied.length ? `Applied: ${result.applied.join(', ')}` : 'Nothing to apply');
    });

  const workspace = program.command('workspace').description('workspaces');
  workspace
    .command('create')
    .description('create an empty workspace')
    .requiredOption('--name <name>', 'workspace name', nonEmpty('--name'))
    .addOption(json())
    .action(async (options: Output & { name: string }) => {
      const connection = await database();
      const created = await connection.query<{ id: string }>('INSERT INTO workspaces (name) VALUES ($1) RETURNING id', [options.name]);
      const id = created.rows[0]!.id;
      print(options, { id }, `Workspace ${id}`);
    });

  const member = program.command('member').description('workspace members');
  member
    .command('add')
    .description('add a member to a workspace')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--email <email>', 'e-mail address')
    .requiredOption('--name <name>', 'display name', nonEmpty('--name'))
    .addOption(new Option('--role <role>', 'role').choices(['owner', 'admin', 'member']).makeOptionMandatory())
    .addOption(json())
    .action(async (options: Output & { workspace: string; email: string; name: string; role: string }) => {
      if (!EMAIL.test(options.email)) throw new InputError(`--email ${JSON.stringify(options.email)} is not an e-mail address`);
      const connection = await database();
      await assertWorkspaceExists(connection, options.workspace);
      const existing = await connection.query('SELECT 1 FROM members WHERE workspace_id = $1 AND lower(email) = lower($2)', [options.workspace, options.email]);
      if (existing.rowCount) throw new InputError(`A member with e-mail ${options.email} already exists in workspace ${options.workspace}`);
      const created = await connection.query<{ id: string }>(
        'INSERT INTO members (workspace_id, email, name, role) VALUES ($1, $2, $3, $4) RETURNING id',
        [options.workspace, options.email, options.name, options.role],
      );
      const id = created.rows[0]!.id;
      print(options, { id }, `Member ${id}`);
    });

  program
    .command('import')
    .description('import a fixture file in one transaction (a new workspace, or into --workspace)')
    .requiredOption('--file <path>', 'fixture JSON file')
    .option('--workspace <id>', 'add to this existing workspace')
    .addOption(json())
    .action(async (options: Output & { file: string; workspace?: string }) => {
      let text: string;
      try {
        text = await readFile(options.file, 'utf8');
      } catch (error) {
        throw new InputError(`Cannot read ${options.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      let fixture: unknown;
      try {
        fixture = JSON.parse(text);
      } catch (error) {
        throw new InputError(`${options.file} is not valid JSON: ${(error as Error).message}`);
      }
      const result = await importFixture(await database(), fixture, { workspaceId: options.workspace });
      print(options, result, `Imported into workspace ${result.workspaceId} (${Object.keys(result.ids).length} records)`);
    });

  program
    .command('demo')
    .description('import the bundled demo workspace')
    .addOption(json())
    .action(async (options: Output) => {
      const result = await importDemo(await database());
      print(options, result, `Demo workspace ${result.workspaceId} (${Object.keys(result.ids).length} records)`);
    });

  const key = program.command('key').description('API keys');
  key
    .command('create')
    .description('create an API key on behalf of an owner or admin (the key is shown only now)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--member <email>', 'e-mail of the owner or admin creating it')
    .requiredOption('--scopes <list>', 'comma-separated: courses:read, bookings:read, participants:read')
    .option('--name <name>', 'a name to recognise the key by')
    .addOption(json())
    .action(async (options: Output & { workspace: string; member: string; scopes: string; name?: string }) => {
      const issued = await createApiKey(await database(), {
        workspaceId: options.workspace,
        memberEmail: options.member,
        scopes: options.scopes,
        name: options.name,
      });
      print(options, issued, `Key ${issued.id} (${issued.scopes.join(', ')}):\n${issued.key}\nIt is shown only now.`);
    });
  key
    .command('list')
    .description('list the keys of a workspace (no secrets)')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(json())
    .action(async (options: Output & { workspace: string }) => {
      const connection = await database();
      await assertWorkspaceExists(connection, options.workspace);
      const keys = await listApiKeys(connection, options.workspace);
      const lines = keys.map((k) => `${k.id}  ${k.state.padEnd(7)}  …${k.last4}  ${k.scopes.join(',')}  ${k.name}  last used ${k.lastUsedAt ?? 'never'}`);
      print(options, keys, lines.join('\n') || 'No keys');
    });
  key
    .command('revoke')
    .description('revoke a key at once')
    .requiredOption('--id <id>', 'key id')
    .addOption(json())
    .action(async (options: Output & { id: string }) => {
      const result = await revokeApiKey(await database(), options.id);
      print(options, result, `Key ${result.id} revoked`);
    });
  key
    .command('rotate')
    .description('replace a key by a new one with the same name and scopes; the old one stops working at once')
    .requiredOption('--id <id>', 'key id')
    .addOption(json())
    .action(async (options: Output & { id: string }) => {
      const result = await rotateApiKey(await database(), options.id);
      print(options, result, `Key ${result.id} replaces ${options.id}:\n${result.key}\nIt is shown only now.`);
    });

  const feed = program.command('feed').description('calendar feed tokens');
  feed
    .command('create')
    .description('create a calendar feed token on behalf of an owner or admin (shown only now)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--member <email>', 'e-mail of the owner or admin creating it')
    .option('--name <name>', 'a name to recognise the feed by')
    .addOption(json())
    .action(async (options: Output & { workspace: string; member: string; name?: string }) => {
      const issued = await createFeedToken(await database(), { workspaceId: options.workspace, memberEmail: options.member, name: options.name });
      print(options, issued, `Feed ${issued.id}: ${issued.path}\nThe token is shown only now.`);
    });
  feed
    .command('list')
    .description('list the feed tokens of a workspace (no secrets)')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(json())
    .action(async (options: Output & { workspace: string }) => {
      const connection = await database();
      await assertWorkspaceExists(connection, options.workspace);
      const feeds = await listFeedTokens(connection, options.workspace);
      print(options, feeds, feeds.map((f) => `${f.id}  ${f.state.padEnd(7)}  …${f.last4}  ${f.name}`).join('\n') || 'No feeds');
    });
  feed
    .command('revoke')
    .description('revoke a feed token at once')
    .requiredOption('--id <id>', 'feed id')
    .addOption(json())
    .action(async (options: Output & { id: string }) => {
      const result = await revokeFeedToken(await database(), options.id);
      print(options, result, `Feed ${result.id} revoked`);
    });

  const config = () => io.config ?? loadConfig();
  const secretBox = () => requireSecretBox(config(), { embeddedDataDir: io.secretKeyFromDataDir ?? false });

  const webhook = program.command('webhook').description('booking.created webhook endpoints and their deliveries');
  webhook
    .command('add')
    .description('register an https endpoint on behalf of an owner or admin (the secret is shown only now)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--member <email>', 'e-mail of the owner or admin registering it')
    .requiredOption('--url <https url>', 'where events are POSTed (https:// only)')
    .option('--participants', 'include participant data (name, e-mail) in the payload')
    .addOption(json())
    .action(async (options: Output & { workspace: string; member: string; url: string; participants?: boolean }) => {
      const settings = config();
      const box = await secretBox();
      const issued = await addEndpoint(await database(), box, {
        workspaceId: options.workspace,
        memberEmail: options.member,
        url: options.url,
        participants: options.participants ?? false,
        allowPrivateTargets: settings.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      });
      print(options, issued, `Webhook endpoint ${issued.id}\nSigning secret: ${issued.secret}\nIt is shown only now.`);
    });
  webhook
    .command('list')
    .description('list the endpoints of a workspace (no secrets)')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(json())
    .action(async (options: Output & { workspace: string }) => {
      const connection = await database();
      await assertWorkspaceExists(connection, options.workspace);
      const endpoints = await listEndpoints(connection, options.workspace);
      const lines = endpoints.map((e) => `${e.id}  ${e.state.padEnd(7)}  ${e.participants ? 'participants' : 'no participants'}  ${e.url}`);
      print(options, endpoints, lines.join('\n') || 'No webhook endpoints');
    });
  webhook
    .command('remove')
    .description('remove an endpoint: no new events, pending deliveries stop')
    .requiredOption('--id <id>', 'endpoint id')
    .addOption(json())
    .action(async (options: Output & { id: string }) => {
      const result = await removeEndpoint(await database(), options.id);
      print(options, result, `Webhook endpoint ${result.id} removed`);
    });
  webhook
    .command('deliveries')
    .description("an endpoint's delivery log: newest 100 deliveries (or one event's) with every attempt")
    .requiredOption('--endpoint <id>', 'endpoint id')
    .option('--event <id>', 'only this event')
    .addOption(json())
    .action(async (options: Output & { endpoint: string; event?: string }) => {
      const deliveries = await listDeliveries(await database(), options.endpoint, options.event);
      const lines = deliveries.flatMap((d) => [
        `${d.eventId}  ${d.state}  ${d.attempts} attempt(s)${d.nextAttemptAt ? `  next ${d.nextAttemptAt}` : ''}`,
        ...d.log.map((a) => `  ${a.manual ? 'manual' : `#${a.number}`}  ${a.startedAt}  ${a.durationMs} ms  ${a.httpStatus ?? '-'}  ${a.error ?? 'ok'}`),
      ]);
      print(options, deliveries, lines.join('\n') || 'No deliveries');
    });
  webhook
    .command('redeliver')
    .description('make one manual attempt now (outside the 8 scheduled ones) and print its outcome')
    .requiredOption('--event <id>', 'event id (the webhook-id)')
    .requiredOption('--endpoint <id>', 'endpoint id')
    .addOption(json())
    .action(async (options: Output & { event: string; endpoint: string }) => {
      const connection = await database();
      const deliveryId = await findDelivery(connection, options.event, options.endpoint);
      const { deliverer, sender } = createDeliverer({
        db: connection,
        config: config(),
        logger: createLogger('silent'),
        box: await secretBox(),
        trustedCertificates: io.trustedCertificates,
      });
      try {
        const result = await deliverer.runManual(deliveryId);
        if (!result) throw new InputError('Another attempt of this event to this endpoint is under way; try again in a moment');
        const { deliveryId: _ignored, ...outcome } = result;
        print(options, outcome, result.ok ? `Delivered (HTTP ${result.httpStatus}) in ${result.durationMs} ms` : `Failed: ${result.error}${result.httpStatus ? ` (HTTP ${result.httpStatus})` : ''}`);
      } finally {
        sender.close();
      }
    });

  program
    .command('worker')
    .description('run a webhook delivery worker until SIGTERM or SIGINT (any number may run at once)')
    .action(async () => {
      const settings = config();
      const connection = await database();
      const logger = createLogger(settings.LOG_LEVEL, { write: (line: string) => io.stdout.write(line) });
      const worker = await startWebhookWorker({
        db: connection,
        config: settings,
        logger,
        box: await secretBox(),
        trustedCertificates: io.trustedCertificates,
      });
      const signal = await (io.untilStopped ?? untilSignal)();
      logger.info({ signal }, 'shutting down');
      await worker.stop();
    });

  for (const command of program.commands) applyExitOverride(command, io);

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      if (error.code === 'commander.help') return 0;
      return 2;
    }
    if (isInputError(error)) {
      io.stderr.write(`error: ${error.message}\n`);
      return 1;
    }
    io.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    if (process.env.DEBUG && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
    return 1;
  } finally {
    const opened = db as Database | null;
    if (opened) await opened.close();
  }
}

function applyExitOverride(command: Command, io: CliIo): void {
  command.exitOverride().configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) });
  for (const sub of command.commands) applyExitOverride(sub, io);
}
