/**
 * The layers of the service, checked by `npm run lint:layers` (part of `npm test`). Each layer may
 * import the layers below it, never one above (docs/architecture.md):
 *
 *   src/main.ts, src/server.ts, src/listeners.ts,    composition root
 *   src/build-embedded-template.ts
 *   rest/, src/cli/, src/internal-api/              ways in
 *   src/{auth,calendar,webhooks,workspaces,integrations,…}/  features and their stores (the answer cache among them)
 *   src/graphql/                                    schema, fixed operations, in-process execution
 *   src/loaders/                                    per-request DataLoaders
 *   src/sql/                                        SQL generated from the resource model
 *   src/model/                                      the resource model: catalog, overlay, registry
 *   src/db/                                         database plumbing: pools, embedded, replicas, migrations
 *   src/{config,errors,flights,http-answers,input-error,logger,package-root}.ts, src/contract/   ground floor
 *
 * bench/ stands beside the service: it may import any of it, and nothing of the service imports it.
 */
const GROUND = '^src/(config|errors|flights|http-answers|input-error|logger|package-root)\\.ts$|^src/contract/';
const FEATURES = '^src/(answer-cache|auth|calendar|webhooks|workspaces|integrations|fixtures|demo|rate-limit|observability)/';
const WAYS_IN = '^(rest/|src/cli/|src/internal-api/)';
const ROOT = '^src/(main|server|listeners|build-embedded-template)\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'ground-floor-imports-nothing-above',
      comment: 'config, errors, logging and the generated contract types are imported by every layer, so they import none.',
      severity: 'error',
      from: { path: GROUND },
      to: { path: '^(src|rest)/', pathNot: GROUND },
    },
    {
      name: 'db-imports-only-the-ground-floor',
      comment: 'The database plumbing knows nothing of the resource model, SQL generation, loaders, GraphQL, features or the ways in.',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: '^(src|rest)/', pathNot: `^src/db/|${GROUND}` },
    },
    {
      name: 'model-imports-only-the-plumbing',
      comment: 'The resource model reads the catalog through the plumbing; it generates no SQL and knows no request.',
      severity: 'error',
      from: { path: '^src/model/' },
      to: { path: '^(src|rest)/', pathNot: `^src/(model|db)/|${GROUND}` },
    },
    {
      name: 'sql-imports-only-the-model',
      comment: 'SQL generation reads the resource model; it knows nothing of loaders, GraphQL or features.',
      severity: 'error',
      from: { path: '^src/sql/' },
      to: { path: '^(src|rest)/', pathNot: `^src/(sql|model|db)/|${GROUND}` },
    },
    {
      name: 'loaders-import-only-the-data-layer',
      comment: 'Loaders receive what they need (selected field names, rows) instead of importing GraphQL helpers.',
      severity: 'error',
      from: { path: '^src/loaders/' },
      to: { path: '^(src|rest)/', pathNot: `^src/(loaders|sql|model|db)/|${GROUND}` },
    },
    {
      name: 'only-graphql-uses-loaders',
      comment: 'Running an operation (fresh loaders, a connection, priming) is src/graphql/execute-operation.ts: nobody else builds loaders.',
      severity: 'error',
      from: { path: '^(src|rest)/', pathNot: '^src/(graphql|loaders)/' },
      to: { path: '^src/loaders/' },
    },
    {
      name: 'graphql-is-below-the-features',
      severity: 'error',
      from: { path: '^src/graphql/' },
      to: { path: '^(src|rest)/', pathNot: `^src/(graphql|loaders|sql|model|db)/|${GROUND}` },
    },
    {
      name: 'features-are-below-the-ways-in',
      comment: 'Stores, the calendar and webhooks never import the REST facade, the CLI or the composition root.',
      severity: 'error',
      from: { path: FEATURES },
      to: { path: `${WAYS_IN}|${ROOT}` },
    },
    {
      name: 'ways-in-are-apart',
      comment: 'The REST facade, the CLI and the internal GraphQL listener are ways in: none imports another.',
      severity: 'error',
      from: { path: '^(rest|src/cli|src/internal-api)/' },
      to: { path: '^(rest|src/cli|src/internal-api)/', pathNot: '^$1/' },
    },
    {
      name: 'composition-root-is-on-top',
      comment: 'Only the composition root imports itself: src/main.ts imports src/server.ts, which imports src/listeners.ts; nothing imports src/main.ts.',
      severity: 'error',
      from: { path: '^(src|rest)/', pathNot: '^src/(main|server)\\.ts$' },
      to: { path: ROOT },
    },
    {
      name: 'nothing-imports-the-bench',
      comment: 'The bench measures the service from outside: no module of the service imports it.',
      severity: 'error',
      from: { path: '^(src|rest)/' },
      to: { path: '^bench/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'runtime-code-uses-no-dev-dependency',
      comment: 'A production install (npm ci, then npm prune --omit=dev) must still run npm start and the CLI.',
      severity: 'error',
      from: { path: '^(src|rest)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-undeclared-package',
      comment: 'Every package the service imports is declared in package.json.',
      severity: 'error',
      from: { path: '^(src|rest)/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown', 'unknown', 'undetermined'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
