// The ceiling of the end-to-end benches: node:http answering a small JSON body, nothing else (or the
// body given as the first argument, e.g. a computer's JSON). Prints "listening on http://127.0.0.1:<port>".
import { createServer } from 'node:http';

const body = process.argv[2] ?? JSON.stringify({ hello: 'world' });
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
