import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv } from '@svc/tools/child-process';
import { decodeJwt } from 'jose';
import { afterAll, describe, expect, test } from 'vitest';
import { signAssertion } from '../../src/identity/auth/assertion.js';
import { opened, openStream } from '../support/streams.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/** Starts the built server and resolves with its API base URL from the "listening" line. */
function start(env: Record<string, string>): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (/listening on/.test(output)) {
        clearInterval(timer);
        resolve({ child, output: () => output });
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`svc-server exited with ${code}: ${output}`));
    });
  });
}

describe('svc-server (dist/main.js), PGlite on disk', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  test.runIf(existsSync(MAIN))(
    'PORT=0: bootstraps; tokens and the key file name the real bound address; SIGTERM stops cleanly',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'svc-main-'));
      const keyFilePath = join(dir, 'bootstrap-key.json');
      const { child, output } = await start({
        PORT: '0',
        SVC_DATA_DIR: join(dir, 'data'),
        SVC_BOOTSTRAP_KEY_FILE: keyFilePath,
        SVC_BASE_URL: '',
        DATABASE_URL: '',
      });
      children.push(child);
      const base = /API (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(output())?.[1];
      expect(base).toMatch(/:\d+\/v1$/);
      expect(base).not.toContain(':0/');
      expect(output()).toContain(`SVC_KEY_FILE=${keyFilePath} pnpm svc token`);
      const file = JSON.parse(await readFile(keyFilePath, 'utf8'));
      expect(file.base_url).toBe(base);
      const assertion = await signAssertion(file, { tokenUrl: `${file.base_url}/auth/token` });
      const answer = await fetch(`${base}/auth/token`, {
        method: 'POST',
        headers: { authorization: `Bearer ${assertion}` },
      });
      expect(answer.status).toBe(200);
      const { token } = (await answer.json()) as { token: { access_token: string } };
      expect(decodeJwt(token.access_token)).toMatchObject({ iss: base, aud: base });
      const me = await fetch(`${base}/me`, { headers: { authorization: `Bearer ${token.access_token}` } });
      expect(me.status).toBe(200);
      expect(me.headers.get('ratelimit-policy')).toContain('"principal"');
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
    90_000,
  );

  test.runIf(existsSync(MAIN))(
    'SIGTERM under keep-alive load: every request sent during the drain is answered or refused, none reset',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'svc-main-'));
      const { child, output } = await start({
        PORT: '0',
        SVC_DATA_DIR: join(dir, 'data'),
        SVC_BOOTSTRAP_KEY_FILE: join(dir, 'bootstrap-key.json'),
        SVC_BASE_URL: '',
        DATABASE_URL: '',
        SVC_DRAIN_DELAY_MS: '1000',
        SVC_SHUTDOWN_TIMEOUT_MS: '15000',
        SVC_RATE_LIMITS: 'off',
      });
      children.push(child);
      const origin = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output())?.[1] as string;
      let exited = false;
      const exit = new Promise<number | null>((resolve) =>
        child.once('exit', (code) => {
          exited = true;
          resolve(code);
        }),
      );

      // Clients as a load tester runs them: each keeps one connection alive and sends its next request
      // as soon as the last is answered; a `Connection: close` answer makes it reconnect. A client
      // stops when it is refused (the replica no longer listens), when the replica is gone, or at
      // its bound.
      let sigtermAt = 0;
      const tally = { sent: 0, answered: 0, refused: 0, reset: [] as string[], notOk: 0, keptAlive: 0 };
      const client = async () => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        let toldToClose = false;
        try {
          for (let i = 0; i < 20_000 && !exited; i++) {
            const during = sigtermAt > 0;
            if (during) tally.sent++;
            const answer = await get(`${origin}/v1/health`, agent);
            if ('status' in answer) {
              if (during) tally.answered++;
              if (answer.status !== 200) tally.notOk++;
              if (answer.connection === 'close') toldToClose = true;
              else if (toldToClose) tally.keptAlive++; // once told to close, always told
              continue;
            }
            if (answer.code === 'ECONNREFUSED') {
              if (during) tally.refused++;
              return;
            }
            tally.reset.push(`${answer.code} (${during ? 'during the drain' : 'before it'})`);
          }
        } finally {
          agent.destroy();
        }
      };

      // A client idle across the listener's close: its connection was kept alive before SIGTERM, and
      // its next request, on that connection after the replica stopped accepting, is still answered.
      const idleAgent = new Agent({ keepAlive: true, maxSockets: 1 });
      expect(await get(`${origin}/v1/health`, idleAgent)).toMatchObject({
        status: 200,
        connection: 'keep-alive',
      });

      const clients = Array.from({ length: 8 }, client);
      await new Promise((resolve) => setTimeout(resolve, 500));
      sigtermAt = Date.now();
      child.kill('SIGTERM');
      // The drain delay (1 s) and then the listener's close: a new connection is refused.
      for (let i = 0; i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (Date.now() - sigtermAt > 1000 && 'code' in (await get(`${origin}/ready`, false))) break;
      }
      const idle = await get(`${origin}/v1/health`, idleAgent);
      idleAgent.destroy();
      await Promise.all(clients);
      const code = await exit;
      process.stdout.write(
        `SIGTERM under keep-alive load (8 clients): ${tally.sent} requests sent during the drain, ` +
          `${tally.answered} answered, ${tally.refused} refused, ${tally.reset.length} reset; ` +
          `the idle client ${JSON.stringify(idle)}; exit ${code} after ${Date.now() - sigtermAt} ms\n`,
      );
      expect(tally.reset).toEqual([]);
      expect(tally.answered + tally.refused).toBe(tally.sent);
      expect(tally.sent).toBeGreaterThan(50); // load there was, even on a busy machine
      expect(tally.notOk).toBe(0);
      expect(tally.keptAlive).toBe(0);
      expect(idle).toMatchObject({ status: 200, connection: 'close' });
      expect(code).toBe(0);
    },
    90_000,
  );

  test.runIf(existsSync(MAIN))(
    'SIGTERM with event streams open: each ends at once with shutting_down, and the drain is not held up',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'svc-main-'));
      const keyFilePath = join(dir, 'bootstrap-key.json');
      const { child, output } = await start({
        PORT: '0',
        SVC_DATA_DIR: join(dir, 'data'),
        SVC_BOOTSTRAP_KEY_FILE: keyFilePath,
        SVC_BASE_URL: '',
        DATABASE_URL: '',
        SVC_DRAIN_DELAY_MS: '3000',
        SVC_SHUTDOWN_TIMEOUT_MS: '20000',
      });
      children.push(child);
      const origin = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output())?.[1] as string;
      const file = JSON.parse(await readFile(keyFilePath, 'utf8'));
      const assertion = await signAssertion(file, { tokenUrl: `${file.base_url}/auth/token` });
      const exchanged = await fetch(`${origin}/v1/auth/token`, {
        method: 'POST',
        headers: { authorization: `Bearer ${assertion}` },
      });
      const token = ((await exchanged.json()) as { token: { access_token: string } }).token.access_token;
      const created = await fetch(`${origin}/v1/workspaces`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'idempotency-key': 'drain-1',
        },
        body: JSON.stringify({ name: 'drained' }),
      });
      expect(created.status).toBe(201);
      const streams = await Promise.all(
        [1, 2].map(async () =>
          opened(
            await openStream(
              (request) => fetch(request),
              '/v1/workspaces/drained/events',
              'WorkspaceEventStreamItem',
              {
                token,
                origin,
              },
            ),
          ),
        ),
      );
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const signalled = performance.now();
      child.kill('SIGTERM');
      for (const stream of streams) {
        const ended = await stream.waitFor((e) => e.event === 'stream.ended', 2000);
        expect(ended.data).toMatchObject({ reason: 'shutting_down', reconnect: true });
        // At once: well within the drain delay (a busy machine takes some of it to deliver the signal).
        expect(ended.at - signalled).toBeLessThan(1500);
        await stream.closed;
        expect(stream.violations).toEqual([]);
      }
      expect(await exited).toBe(0);
      // Stopped after the drain delay, well before the deadline would have cut the streams.
      expect(performance.now() - signalled).toBeLessThan(12_000);
      expect(output()).not.toContain('were cut');
    },
    90_000,
  );
});

/** One GET through node:http (fetch hides `Connection`): the answer, or the error's code. */
function get(
  url: string,
  agent: Agent | false,
): Promise<{ status: number; connection: string | undefined } | { code: string }> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
      res.on('error', (error: NodeJS.ErrnoException) => resolve({ code: error.code ?? error.message }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ code: error.code ?? error.message }));
    req.end();
  });
}
