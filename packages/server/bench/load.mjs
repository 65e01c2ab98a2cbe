// The load generator of bench/living.mjs, in its own process so that its CPU is not the measuring
// script's (which changes the workspace meanwhile): autocannon against one URL, a warm-up first, then
// the measured run; prints one JSON line { rps, p50, p99, total, bad, bytes }.
//
//   node bench/load.mjs '{"url":"http://127.0.0.1:1/v1/me","headers":{…},"connections":32,"duration":5}'
//
// `create: { name }` makes each request a POST of a computer with a unique name and Idempotency-Key
// (`<name>-<pid>-<n>`), as separate clients' creates are.
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2]);
const { url, headers = {}, connections, duration, warmup = 1, create } = options;
let sent = 0;
const request = create
  ? {
      method: 'POST',
      setupRequest: (req) => {
        const name = `${create.name}-${process.pid}-${++sent}`;
        return {
          ...req,
          headers: { ...req.headers, 'content-type': 'application/json', 'idempotency-key': name },
          body: JSON.stringify({ name, image: 'busybox', size: 'small' }),
        };
      },
    }
  : { method: 'GET' };
const base = { url, headers, connections, requests: [request] };
if (warmup > 0) await autocannon({ ...base, duration: warmup });
const result = await autocannon({ ...base, duration });
process.stdout.write(
  `${JSON.stringify({
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    bad: result.non2xx + result.errors + result.timeouts,
    bytes: result.requests.total > 0 ? Math.round(result.throughput.total / result.requests.total) : 0,
  })}\n`,
);
