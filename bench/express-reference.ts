/**
 * The framework's own ceiling: an express 5 app with no middleware that answers each benchmarked
 * request with the bytes the facade sent for it (bench/recordings.ts). The facade against this
 * server shows what the service itself costs; this server against the bare one what express does.
 */
import express from 'express';
import { answerKey, loadRecordedAnswers } from './recordings.ts';

const answers = loadRecordedAnswers();
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

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
