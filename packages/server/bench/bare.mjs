// The ceiling of the end-to-end bench: node:http answering a small JSON body, nothing else.
// Prints "listening on http://127.0.0.1:<port>" (port 0: a free one).
import { createServer } from 'node:http';

const body = JSON.stringify({ hello: 'world' });
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
