import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { addDocuments, listDocuments, removeDocuments } from '../../auth/internal-document-store.ts';
import {
  createInternalToken,
  listInternalTokens,
  parseCostPerMinute,
  parseDocumentMode,
  parseWorkspaceList,
  revokeInternalToken,
  updateInternalToken,
  type DocumentMode,
} from '../../auth/internal-token-store.ts';
import { documentsFromFile, hashOfDocumentId } from '../../auth/trusted-documents.ts';
import { InputError } from '../../input-error.ts';
import { jsonOption, nonEmpty, type CliContext, type Output } from '../context.ts';

const DOCUMENTS_HELP = 'which documents it may run: any, log (any, logging those not registered) or trusted (registered ones only)';
/** `--cost-per-minute` as the store takes it: null for the service's default, undefined when not given. */
const budgetOption = (value: number | 'default' | undefined) => (value === 'default' ? null : value);

const COST_HELP = 'its budget of cost points per minute (default: INTERNAL_COST_PER_MINUTE)';

const PERSONAL_HELP = 'grant personal data: participants and the columns the overlay marks personal (off for a new token)';

const budgetText = (costPerMinute: number | null) => (costPerMinute === null ? 'the default budget' : `${costPerMinute} cost points per minute`);
const personalText = (personalData: boolean) => (personalData ? 'personal data granted' : 'no personal data');
const INTEGRATIONS_HELP = "grant integrations: manage a workspace's keys, webhooks and feeds on behalf of its owners and admins (off for a new token)";
const integrationsText = (integrations: boolean) => (integrations ? 'integrations granted' : 'no integrations');

export function registerInternalTokenCommands(program: Command, ctx: CliContext): void {
  const token = program.command('internal-token').description('named tokens of the internal GraphQL listener');
  token
    .command('create')
    .description('create a named internal token, optionally restricted to workspaces (the token is shown only now)')
    .requiredOption('--name <name>', 'a unique name; the audit trail records it with every request', nonEmpty('--name'))
    .option('--workspaces <ids>', 'comma-separated workspace ids the token may read (default: every workspace)', parseWorkspaceList)
    .option('--documents <mode>', `${DOCUMENTS_HELP} (default: any)`, parseDocumentMode)
    .option('--cost-per-minute <points>', COST_HELP, parseCostPerMinute)
    .option('--personal-data', PERSONAL_HELP)
    .option('--integrations', INTEGRATIONS_HELP)
    .addOption(jsonOption())
    .action(async (options: Output & { name: string; workspaces?: string[]; documents?: DocumentMode; costPerMinute?: number | 'default'; personalData?: boolean; integrations?: boolean }) => {
      const issued = await createInternalToken(await ctx.database(), { ...options, costPerMinute: budgetOption(options.costPerMinute) });
      const scope = issued.workspaces ? `workspaces ${issued.workspaces.join(', ')}` : 'every workspace';
      ctx.print(
        options,
        issued,
        `Internal token ${issued.id} "${issued.name}" (${scope}; documents: ${issued.documents}; ${budgetText(issued.costPerMinute)}; ${personalText(issued.personalData)}; ${integrationsText(issued.integrations)}):\n${issued.token}\nIt is shown only now.`,
      );
    });
  token
    .command('update')
    .description('change the document mode, the budget, the personal-data grant or the integrations grant of an active token, from its next request on')
    .requiredOption('--name <name>', 'name of an active token', nonEmpty('--name'))
    .option('--documents <mode>', DOCUMENTS_HELP, parseDocumentMode)
    .option('--cost-per-minute <points>', `${COST_HELP}; "default" returns to it`, parseCostPerMinute)
    .option('--personal-data', 'grant personal data')
    .option('--no-personal-data', 'withdraw the personal-data grant')
    .option('--integrations', 'grant integrations')
    .option('--no-integrations', 'withdraw the integrations grant')
    .addOption(jsonOption())
    .action(async (options: Output & { name: string; documents?: DocumentMode; costPerMinute?: number | 'default'; personalData?: boolean; integrations?: boolean }) => {
      const updated = await updateInternalToken(await ctx.database(), options.name, {
        documents: options.documents,
        costPerMinute: budgetOption(options.costPerMinute),
        personalData: options.personalData,
        integrations: options.integrations,
      });
      ctx.print(
        options,
        updated,
        `Internal token ${updated.id} "${updated.name}": documents ${updated.documents}, ${budgetText(updated.costPerMinute)}, ${personalText(updated.personalData)}, ${integrationsText(updated.integrations)}`,
      );
    });
  token
    .command('list')
    .description('list the internal tokens (no secrets)')
    .addOption(jsonOption())
    .action(async (options: Output) => {
      const tokens = await listInternalTokens(await ctx.database());
      const lines = tokens.map(
        (t) =>
          `${t.id}  ${t.state.padEnd(7)}  …${t.last4}  ${t.name}  ${t.workspaces ? t.workspaces.join(',') : 'every workspace'}  documents ${t.documents}  ${t.costPerMinute ?? 'default'} cost/min  ${personalText(t.personalData)}  ${integrationsText(t.integrations)}  created ${t.createdAt}`,
      );
      ctx.print(options, tokens, lines.join('\n') || 'No internal tokens');
    });
  token
    .command('revoke')
    .description('revoke an internal token at once, by id or by name')
    .option('--id <id>', 'token id', nonEmpty('--id'))
    .option('--name <name>', 'name of an active token', nonEmpty('--name'))
    .addOption(jsonOption())
    .action(async (options: Output & { id?: string; name?: string }) => {
      if ((options.id === undefined) === (options.name === undefined)) throw new InputError('Give either --id or --name');
      const revoked = await revokeInternalToken(await ctx.database(), options.id !== undefined ? { id: options.id } : { name: options.name! });
      ctx.print(options, revoked, `Internal token ${revoked.id} "${revoked.name}" revoked`);
    });
  registerDocumentCommands(token, ctx);
}

function registerDocumentCommands(token: Command, ctx: CliContext): void {
  const documents = token.command('documents').description("the documents registered for a token (its trusted documents)");
  documents
    .command('add')
    .description("register the documents of a file: GraphQL Code Generator's persisted-documents.json, Apollo's persisted query manifest, or GraphQL operations")
    .requiredOption('--name <name>', 'name of an active token', nonEmpty('--name'))
    .requiredOption('--file <path>', 'the file (.json for a manifest)', nonEmpty('--file'))
    .addOption(jsonOption())
    .action(async (options: Output & { name: string; file: string }) => {
      let text: string;
      try {
        text = await readFile(options.file, 'utf8');
      } catch (error) {
        throw new InputError(`Cannot read ${options.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      const found = documentsFromFile(text, options.file);
      const counts = await addDocuments(await ctx.database(), options.name, found);
      const ids = found.map((document) => ({ id: `sha256:${document.hash}`, operationNames: document.operationNames }));
      const lines = ids.map((document) => `${document.id}  ${document.operationNames.join(', ')}`);
      ctx.print(
        options,
        { ...counts, documents: ids },
        `${counts.added} document(s) registered for "${options.name}", ${counts.alreadyRegistered} already were:\n${lines.join('\n')}`,
      );
    });
  documents
    .command('list')
    .description('list the documents registered for a token')
    .requiredOption('--name <name>', 'name of an active token', nonEmpty('--name'))
    .addOption(jsonOption())
    .action(async (options: Output & { name: string }) => {
      const registered = await listDocuments(await ctx.database(), options.name);
      const lines = registered.map((document) => `${document.id}  ${document.operationNames.join(', ')}  added ${document.addedAt}`);
      ctx.print(options, registered, lines.join('\n') || `No documents registered for "${options.name}"`);
    });
  documents
    .command('remove')
    .description('remove documents of a token by id, or all of them; they are refused from the next request on')
    .requiredOption('--name <name>', 'name of an active token', nonEmpty('--name'))
    .option('--id <ids...>', 'document ids (sha256:<hex>) as list shows them')
    .option('--all', 'every document of the token')
    .addOption(jsonOption())
    .action(async (options: Output & { name: string; id?: string[]; all?: boolean }) => {
      if ((options.id === undefined) === (options.all === undefined)) throw new InputError('Give either --id or --all');
      const hashes = (options.id ?? []).map((id) => {
        const hash = hashOfDocumentId(id);
        if (hash === null) throw new InputError(`"${id}" is not a document id (sha256: and 64 lowercase hexadecimal characters, or those alone)`);
        return hash;
      });
      const result = await removeDocuments(await ctx.database(), options.name, options.all ? 'all' : { hashes });
      ctx.print(options, result, `${result.removed} document(s) removed from "${options.name}"`);
    });
}
