/**
 * An OTLP/HTTP receiver for the bench's traced facades, in a process of its own: it accepts every
 * export as a collector does and counts what arrived (`GET /stats`), so that the report shows the
 * spans were really sent while tracing's cost was measured.
 */
import { createServer } from 'node:http';

let exports = 0;
let bytes = 0;

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ exports, bytes }));
    return;
  }
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => {
    exports += 1;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
