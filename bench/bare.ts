/**
 * The physical limit: a bare `node:http` server that answers each benchmarked request with the
 * status, headers and body the facade sent for it, recorded before the load (BARE_RECORDINGS: a
 * JSON file of recordings by path and Authorization header). No routing framework, no
 * authentication, no database: the same bytes through the same HTTP stack, nothing else.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

export interface Recording {
  path: string;
  authorization: string;
  status: number;
  /** Header name and value pairs as the facade sent them, without Date, Connection and Keep-Alive (Node adds those). */
  headers: string[];
  /** The body, base64. */
  body: string;
}

interface Answer {
  status: number;
  headers: string[];
  body: Buffer;
}

const recordings = JSON.parse(readFileSync(process.env.BARE_RECORDINGS!, 'utf8')) as Recording[];
const answers = new Map<string, Answer>(
  recordings.map((recording) => [`${recording.path}\n${recording.authorization}`, { status: recording.status, headers: recording.headers, body: Buffer.from(recording.body, 'base64') }]),
);

const server = createServer({ maxHeaderSize: 16 * 1024, requestTimeout: 30_000, headersTimeout: 10_000 }, (req, res) => {
  const answer = answers.get(`${req.url}\n${req.headers.authorization ?? ''}`);
  if (!answer) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(answer.status, answer.headers);
  res.end(req.method === 'HEAD' ? undefined : answer.body);
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`bare on http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
