// `pnpm --filter @svc/cli bench`: start-up time of the built `svc` as a person meets it, median of ten
// runs each (after one warm-up run), against the 150 ms / 300 ms targets:
//   svc --help    no network, no credentials
//   svc whoami    a stored session whose access token is still valid (cached), GET /me against the
//                 built server (`svc-server --sandbox` on 127.0.0.1, a free port)
// Needs `pnpm turbo run build --filter=@svc/cli...` first (the server is built with it).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnServer } from '@svc/tools/server-process';

const BIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const RUNS = 10;

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function time(args, env, script = BIN) {
  const samples = [];
  for (let i = 0; i <= RUNS; i++) {
    const started = process.hrtime.bigint();
    const result = spawnSync(process.execPath, script ? [script, ...args] : args, { env, encoding: 'utf8' });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (result.status !== 0)
      throw new Error(`svc ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
    if (i > 0) samples.push(ms); // the first run warms the file cache
  }
  return { median: median(samples), min: Math.min(...samples), max: Math.max(...samples) };
}

const server = await spawnServer();
const config = mkdtempSync(join(tmpdir(), 'svc-bench-'));
try {
  const base = { PATH: process.env.PATH, HOME: config, SVC_CONFIG_DIR: config };
  // A session as `svc login` leaves it: `svc token` with the key file gives a real access token.
  const token = execFileSync(process.execPath, [BIN, 'token'], {
    env: { ...base, SVC_KEY_FILE: server.keyFilePath },
    encoding: 'utf8',
  }).trim();
  mkdirSync(config, { recursive: true, mode: 0o700 });
  writeFileSync(
    join(config, 'session.json'),
    JSON.stringify({
      base_url: server.baseUrl,
      refresh_token: 'not-used-while-the-access-token-is-valid',
      access_token: token,
      expires_at: new Date(Date.now() + 10 * 60_000).toISOString(),
      updated_at: new Date().toISOString(),
    }),
    { mode: 0o600 },
  );
  // Node's own start (an empty script, and one that only fetches GET /me) in the same run, to read the
  // figures against the machine's load: on a shared machine these move as much as svc does.
  const bare = time(['-e', '0'], base, '');
  const bareFetch = time(
    [
      '-e',
      `fetch(${JSON.stringify(`${server.baseUrl}/me`)}, { headers: { authorization: 'Bearer ${token}' } }).then((r) => r.text())`,
    ],
    base,
    '',
  );
  const rows = [
    ['svc --help', time(['--help'], base), 150],
    ['svc whoami (token cached)', time(['whoami'], base), 300],
  ];
  console.log(
    `svc start-up, median of ${RUNS} runs (node ${process.version}, load average ${loadavg()[0].toFixed(1)}):`,
  );
  console.log(`  ${'node -e 0 (bare start)'.padEnd(28)} ${bare.median.toFixed(0).padStart(4)} ms`);
  console.log(`  ${'node -e fetch(/me) (bare)'.padEnd(28)} ${bareFetch.median.toFixed(0).padStart(4)} ms`);
  for (const [name, t, target] of rows)
    console.log(
      `  ${name.padEnd(28)} ${t.median.toFixed(0).padStart(4)} ms  (min ${t.min.toFixed(0)}, max ${t.max.toFixed(0)}; target ${target} ms, ${(t.median / target).toFixed(2)}× of it) ${t.median <= target ? 'ok' : 'OVER'}`,
    );
  if (rows.some(([, t, target]) => t.median > target)) process.exitCode = 1;
} finally {
  rmSync(config, { recursive: true, force: true });
  await server.close();
}
