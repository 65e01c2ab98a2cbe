// A burst of anonymous sign-in posts, in a process of its own so the client that measures latency
// is not slowed by it. argv: the form as JSON ({ origin, cookie, hidden }), concurrency, max posts,
// max milliseconds, and the pause of each client between its posts (so concurrency × 1000 / pause
// posts per second at most). Stops at those bounds or when the parent sends 'stop'; then sends its tally
// ({ posts, counts: { '<status>' | '429:<policy>': n }, retryAfter }) and exits.
import { randomBytes } from 'node:crypto';

const [formJson, concurrency, maxPosts, maxMs, pauseMs] = process.argv.slice(2);
const form = JSON.parse(formJson);
const stopAt = Date.now() + Number(maxMs);
let stopped = false;
let sent = 0;
const counts = {};
let retryAfter;
process.on('message', (message) => {
  if (message === 'stop') stopped = true;
});

async function post() {
  const body = new URLSearchParams({
    ...form.hidden,
    email: `nobody-${randomBytes(4).toString('hex')}@example.com`,
    password: 'guess',
  });
  const response = await fetch(`${form.origin}/signin/authorize`, {
    method: 'POST',
    body,
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: form.origin,
      cookie: form.cookie,
      accept: 'application/json',
    },
  });
  let key = String(response.status);
  if (response.status === 429) {
    const parsed = await response.json();
    key = `429:${parsed.error?.details?.policy}`;
    retryAfter ??= response.headers.get('retry-after');
  } else await response.body?.cancel();
  counts[key] = (counts[key] ?? 0) + 1;
}

await Promise.all(
  Array.from({ length: Number(concurrency) }, async () => {
    while (!stopped && sent < Number(maxPosts) && Date.now() < stopAt) {
      sent++;
      await post();
      await new Promise((resolve) => setTimeout(resolve, Number(pauseMs)));
    }
  }),
);
process.send({ posts: sent, counts, retryAfter, stoppedByParent: stopped });
process.disconnect();
