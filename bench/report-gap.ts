/**
 * Where the targets are out of reach, and why: the run's own CPU per cache hit split into what
 * node:http costs (the bare server), what express adds without any middleware, and what the service
 * adds to express; and what a miss adds to a build.
 */
import { ENDPOINTS } from './database.ts';
import { median } from './load.ts';
import { percent, round as fixed, table } from './format.ts';
import type { BenchResults, LoadRow } from './report.ts';

const cpuOf = (row: LoadRow) => [row.results.bare?.cpuMs, row.results.express?.cpuMs, row.results.hits?.cpuMs].map((value) => value ?? Number.NaN) as [number, number, number];

function split(row: LoadRow): string[] {
  const [bare, express, hits] = cpuOf(row);
  return [
    row.size,
    row.endpoint,
    row.generator,
    `${fixed(median(row.ratios['express/bare'] ?? [Number.NaN]), 2)}×`,
    fixed(hits, 3),
    `${fixed(bare, 3)} (${percent(bare, hits)})`,
    `${fixed(express - bare, 3)} (${percent(express - bare, hits)})`,
    `${fixed(hits - express, 3)} (${percent(hits - express, hits)})`,
    fixed(row.results.hits?.statementsPerRequest, 3),
  ];
}

const withReferences = (results: BenchResults) => results.rows.filter((row) => row.results.bare && row.results.express && row.results.hits);

/** Medians over the rows where the server, not the body's bytes or the client, limits the rate: S, and the small bodies at M. */
export function gapFigures(results: BenchResults) {
  const serverBound = withReferences(results).filter((row) => row.endpoint !== '/courses' || row.size === 'S');
  const expressTotal = median(serverBound.map((row) => cpuOf(row)[1]));
  return {
    expressShare: median(serverBound.map((row) => median(row.ratios['express/bare'] ?? [Number.NaN]))),
    service: median(serverBound.map((row) => cpuOf(row)[2] - cpuOf(row)[1])),
    expressCost: median(serverBound.map((row) => cpuOf(row)[1] - cpuOf(row)[0])),
    hitCost: median(serverBound.map((row) => cpuOf(row)[2])),
    expressTotal,
    // At 0.9× express's rate a hit may cost 1 / 0.9 of express's CPU: a ninth of it is the service's.
    budget: expressTotal / 0.9 - expressTotal,
  };
}

export function gapSection(results: BenchResults): string[] {
  const rows = withReferences(results);
  const { expressShare, service, expressCost, hitCost, expressTotal, budget } = gapFigures(results);
  const misses = ENDPOINTS.map((endpoint) => ({ label: endpoint.label, miss: results.misses.get(endpoint.label) })).filter((entry) => entry.miss);
  const head = ['size', 'endpoint', 'generator', 'express / bare req/s', 'facade CPU ms / hit', 'of it node:http (the bare server)', 'express without middleware, above node:http', 'the service, above express', 'SQL / hit'];
  return [
    '## Where the gap is',
    '',
    'The bare server is node:http writing recorded bytes; express without a single middleware sends the same',
    'bytes through its application and router, and the facade is that express app with the service\'s',
    'checks and cache. Each server\'s CPU per request in this run splits a cache hit\'s cost:',
    '',
    ...table(head, rows.map(split)),
    '',
    `- **Against the bare server (≥ 0.5× at M, ≥ 0.3× at S).** Where the server is what limits the rate (S, and the`,
    `  small bodies at M), express alone reaches ${fixed(expressShare, 2)}× the bare server in this run (median of those rows),`,
    `  its application and router costing ${fixed(expressCost, 3)} ms per request above node:http.` +
      (expressShare < 0.5
        ? ' That is below the 0.5× target itself: no facade on express can meet the targets against the bare server on this Node.js version, whatever it does itself.'
        : ' The rest of the gap is the service\'s own work, next.'),
    '  Where the body is large (/courses at M, 220 KB), writing it dominates and the facade stays near the bare',
    '  server with autocannon, which is then itself the ceiling; wrk shows the difference.',
    `- **Against express (≥ 0.9×).** The service adds ${fixed(service, 3)} ms to express's request (median of the same rows),`,
    `  ${percent(service, hitCost)} of a hit, where 0.9× express would leave it ${fixed(budget, 3)} ms (a ninth of express's own ${fixed(expressTotal, 3)} ms).`,
    '  That is what one answer needs beyond sending bytes: the key\'s SHA-256 and its cached',
    '  lookup, the per-key rate limit, the workspace\'s data-version read (shared by the hits that come in its turn),',
    '  the cache lookup, the security, rate-limit and cache headers, the request\'s JSON log line with its redaction,',
    '  and two metrics. Profiles of hits on Node 20 and 24 (`tsx bench/profile-hits.ts /bookings`, in',
    '  [benchmark-history.md](benchmark-history.md)) show the log line as the largest part (pino and its redaction),',
    '  then the key\'s hash, the client address, the metrics and the rate limit, none above a few percent of the',
    '  process\'s time. Each is a rule of docs/contract-rules.md or an operator\'s need, and together they cost',
    '  several times the budget above even with the log line gone: the target cannot close on this stack without',
    '  dropping a check or the logs.',
    '- **Statements per hit under load (≤ 0.05).** A hit reads its workspace\'s data version with a statement',
    '  sent after the request came (exactness); the hits that come before it is sent share it, and at most one',
    '  read per workspace and instance is on the wire, so the reads per second are bounded by the round trip, not',
    '  by the request rate. Where the facade is not what limits the rate (/courses at M under autocannon, whose',
    '  client is the ceiling) fewer hits come during each read and the share per hit is higher, for no more reads.',
    '- **Misses against builds (≤ 1.10×).** A miss reads the data version before building, one statement round',
    '  trip more than a build without the cache: ' +
      misses.map(({ label, miss }) => `${label} +${fixed(miss!.missStatements - miss!.offStatements, 2)} statements, ${fixed(miss!.missMs - miss!.offMs, 2)} ms on a build of ${fixed(miss!.offMs, 2)} ms`).join('; ') +
      '. The shorter the build, the larger that fixed round trip\'s share.',
    '',
  ];
}
