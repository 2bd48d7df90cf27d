import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.ts';
import { loadConfig } from '../../src/config.ts';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** What `admin <words> --help` prints. */
async function help(words: readonly string[]): Promise<string> {
  let stdout = '';
  await runCli([...words, '--help'], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: () => true },
    openDb: () => Promise.reject(new Error('help opens no database')),
    config: loadConfig({}),
  });
  return stdout;
}

/** Every command the CLI runs, as its words (`internal-token documents add`), found through its own help. */
async function commands(words: readonly string[] = []): Promise<string[]> {
  const text = await help(words);
  const listed = text.split(/\nCommands:\n/)[1];
  if (listed === undefined) return [words.join(' ')];
  const names = [...listed.matchAll(/^ {2}(\S+)/gm)].map((match) => match[1]!).filter((name) => name !== 'help');
  return (await Promise.all(names.map((name) => commands([...words, name])))).flat();
}

/** The commands the README's table names: its first column, up to the first option or argument. */
function tabled(): string[] {
  const section = README.slice(README.indexOf('## Operator CLI'), README.indexOf('### Fixture format'));
  return [...section.matchAll(/^\| `([^`]+)`/gm)].map((match) => {
    const words = match[1]!.split(' ');
    const end = words.findIndex((word) => !/^[a-z][a-z-]*$/.test(word));
    return words.slice(0, end === -1 ? undefined : end).join(' ');
  });
}

describe("README.md's operator command table", () => {
  it('names every command of the CLI, and nothing the CLI does not run', async () => {
    const run = await commands();
    expect(run.length).toBeGreaterThan(20);
    expect(new Set(tabled())).toEqual(new Set(run));
  });
});
