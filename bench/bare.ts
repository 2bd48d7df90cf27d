/**
 * The physical limit: a bare `node:http` server that answers each benchmarked request with the
 * status, headers and body the facade sent for it (bench/recordings.ts). No routing framework, no
 * authentication, no database: the same bytes through the same HTTP stack, nothing else.
 */
import { createServer } from 'node:http';
import { answerKey, loadRecordedAnswers } from './recordings.ts';

const answers = loadRecordedAnswers();

const server = createServer({ maxHeaderSize: 16 * 1024, requestTimeout: 30_000, headersTimeout: 10_000 }, (req, res) => {
  const answer = answers.get(answerKey(req.url ?? '', req.headers.authorization ?? ''));
  if (!answer) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(answer.status, answer.headers);
  res.end(req.method === 'HEAD' ? undefined : answer.body);
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
