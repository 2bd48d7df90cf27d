import { mkdtemp, mkdir, rm, symlink, writeFile, copyFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise, type IForbiddenRuleType } from 'dependency-cruiser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/service-commands.ts';

const config = createRequire(import.meta.url)('../../.dependency-cruiser.cjs') as { forbidden: IForbiddenRuleType[]; options: Record<string, unknown> };

interface Violation {
  rule: string;
  from: string;
  to: string;
}

async function violations(baseDir: string): Promise<Violation[]> {
  await mkdir(join(baseDir, 'src'), { recursive: true });
  await mkdir(join(baseDir, 'rest'), { recursive: true });
  const result = await cruise(['src', 'rest'], {
    ...config.options,
    baseDir,
    ruleSet: { forbidden: config.forbidden },
    validate: true,
    outputType: 'json',
  });
  const output = (typeof result.output === 'string' ? JSON.parse(result.output) : result.output) as {
    summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> };
  };
  return output.summary.violations.map((violation) => ({ rule: violation.rule.name, from: violation.from, to: violation.to }));
}

describe('the layer rules (.dependency-cruiser.cjs, run by npm run lint:layers)', () => {
  it("hold for the service's own modules", async () => {
    const found = await violations(ROOT);
    expect(found).toEqual([]);
  });

  describe('refuse a planted wrong-way import', () => {
    let base: string;
    beforeAll(async () => {
      base = await mkdtemp(join(tmpdir(), 'layers-'));
    });
    afterAll(async () => {
      await rm(base, { recursive: true, force: true });
    });

    // [the importing module, what it imports, the rule that refuses it]
    const plants: Array<[string, string, string]> = [
      ['src/errors.ts', './db/database.ts', 'ground-floor-imports-nothing-above'],
      ['src/db/database.ts', '../model/catalog.ts', 'db-imports-only-the-ground-floor'],
      ['src/model/resource-model.ts', '../sql/sql-builder.ts', 'model-imports-only-the-plumbing'],
      ['src/sql/sql-builder.ts', '../graphql/selection.ts', 'sql-imports-only-the-model'],
      ['src/loaders/loaders.ts', '../graphql/selection.ts', 'loaders-import-only-the-data-layer'],
      ['rest/routes/public-v1.ts', '../../src/loaders/loaders.ts', 'only-graphql-uses-loaders'],
      ['src/graphql/schema.ts', '../auth/secret-format.ts', 'graphql-is-below-the-features'],
      ['src/webhooks/payload.ts', '../../rest/pipeline/answers.ts', 'features-are-below-the-ways-in'],
      ['rest/app.ts', '../src/cli/run-cli.ts', 'ways-in-are-apart'],
      ['src/cli/run-cli.ts', '../../rest/app.ts', 'ways-in-are-apart'],
      ['src/internal-api/internal-app.ts', '../../rest/app.ts', 'ways-in-are-apart'],
      ['src/cli/run-cli.ts', '../server.ts', 'composition-root-is-on-top'],
    ];

    it.each(plants)('%s importing %s breaks %s', async (from, target, rule) => {
      const dir = await mkdtemp(join(base, 'case-'));
      const to = join(dirname(from), target);
      for (const file of [from, to]) await mkdir(join(dir, dirname(file)), { recursive: true });
      await writeFile(join(dir, to), 'export const planted = 1;\n');
      await writeFile(join(dir, from), `import { planted } from '${target}';\nexport const uses = planted;\n`);
      expect(await violations(dir)).toContainEqual({ rule, from, to });
    });

    it('a cycle between two modules breaks no-circular', async () => {
      const dir = await mkdtemp(join(base, 'cycle-'));
      await mkdir(join(dir, 'src/auth'), { recursive: true });
      await writeFile(join(dir, 'src/auth/a.ts'), "import { b } from './b.ts';\nexport const a = () => b;\n");
      await writeFile(join(dir, 'src/auth/b.ts'), "import { a } from './a.ts';\nexport const b = () => a;\n");
      expect((await violations(dir)).map((violation) => violation.rule)).toContain('no-circular');
    });

    it('a runtime module importing a development dependency breaks runtime-code-uses-no-dev-dependency', async () => {
      const dir = await mkdtemp(join(base, 'dev-'));
      await copyFile(join(ROOT, 'package.json'), join(dir, 'package.json'));
      await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
      await mkdir(join(dir, 'src'), { recursive: true });
      await writeFile(join(dir, 'src/config.ts'), "import { parse } from 'yaml';\nexport const read = parse;\n");
      expect((await violations(dir)).map((violation) => violation.rule)).toContain('runtime-code-uses-no-dev-dependency');
    });
  });
});
