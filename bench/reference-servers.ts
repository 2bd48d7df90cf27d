/**
 * The servers the facade is measured against, each started as a process of its own
 * (`tsx bench/reference-servers.ts <kind>`, by bench/servers.ts), on PORT:
 *
 * - `bare`: the physical limit, a bare `node:http` server that answers each benchmarked request
 *   with the status, headers and body the facade sent for it (BENCH_RECORDINGS). No routing
 *   framework, no authentication, no database: the same bytes through the same HTTP stack.
 * - `express`: the framework's own ceiling, an express 5 app with no middleware sending the same
 *   recorded bytes. The facade against it shows what the service itself costs.
 * - `otlp`: an OTLP/HTTP receiver for the traced facades: it accepts every export as a collector
 *   does and counts what arrived (`GET /stats`).
 */
import { readFileSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import express from 'express';

/** The facade's answer to one request as it sent it: header pairs without Date, Connection and Keep-Alive (Node adds those), the body in base64. */
export interface Recording {
  path: string;
  authorization: string;
  status: number;
  headers: string[];
  body: string;
}

const answerKey = (path: string, authorization: string) => `${path}\n${authorization}`;

function recordedAnswers(): Map<string, { status: number; headers: string[]; body: Buffer }> {
  const recordings = JSON.parse(readFileSync(process.env.BENCH_RECORDINGS!, 'utf8')) as Recording[];
  return new Map(recordings.map((recording) => [answerKey(recording.path, recording.authorization), { ...recording, body: Buffer.from(recording.body, 'base64') }]));
}

function bare(): RequestListener {
  const answers = recordedAnswers();
  return (req, res) => {
    const answer = answers.get(answerKey(req.url ?? '', req.headers.authorization ?? ''));
    if (!answer) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(answer.status, answer.headers);
    res.end(req.method === 'HEAD' ? undefined : answer.body);
  };
}

function expressReference(): RequestListener {
  const answers = recordedAnswers();
  const app = express();
  // Nothing the facade's recorded answers do not carry: no X-Powered-By, no ETag of express's own.
  app.set('x-powered-by', false);
  app.set('etag', false);
  app.use((req, res) => {
    const answer = answers.get(answerKey(req.originalUrl, req.get('authorization') ?? ''));
    if (!answer) {
      res.status(404).end();
      return;
    }
    res.writeHead(answer.status, answer.headers);
    res.end(req.method === 'HEAD' ? undefined : answer.body);
  });
  return app;
}

function otlpSink(): RequestListener {
  let exports = 0;
  let bytes = 0;
  return (req, res) => {
    if (req.method === 'GET' && req.url === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ exports, bytes }));
      return;
    }
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      exports += 1;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  };
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const kind = process.argv[2];
  const listener = kind === 'bare' ? bare() : kind === 'express' ? expressReference() : kind === 'otlp' ? otlpSink() : null;
  if (!listener) throw new Error('usage: tsx bench/reference-servers.ts bare|express|otlp');
  const server = createServer({ maxHeaderSize: 16 * 1024, requestTimeout: 30_000, headersTimeout: 10_000 }, listener);
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
