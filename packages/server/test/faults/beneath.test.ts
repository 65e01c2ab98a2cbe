// Faults beneath the server: its Docker Engine stops answering (SIGSTOP) or restarts while an exec, an
// upload, a download, a create and an output stream are under way. The built server (dist/main.js,
// PGlite, the Docker driver on an Engine of this test's own) must answer each request within its bound
// in the published shape (503 with Retry-After where the client must wait), recover by itself within
// 30 s of the Engine's return, and hold exactly what its answers said: a 200 upload's bytes, a create's
// operation finished one way or the other with the computer in the state it says.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { accessToken, type Replica, startReplica, stopReplica, tempDir } from '../cluster/processes.js';
import { describeEngines, type TestEngine } from '../support/engines.js';

/** The longest any request may take to be answered while the Engine is away. */
const ANSWER_BOUND_MS = 60_000;
/** How long the replica has to serve computers again once the Engine is back. */
const RECOVERY_MS = 30_000;
/** How long the Engine stays away: longer than the server's 10 s bound on its first answer. */
const AWAY_MS = 20_000;

interface Answered {
  what: string;
  status: number;
  ms: number;
  body: string;
  raw: Buffer;
  retryAfter: string | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeEngines('faults beneath: the Docker Engine', 1, (engines) => {
  let replica: Replica;
  let token: string;
  let dir: ReturnType<typeof tempDir>;
  const seed = Buffer.from('the seed file, before the faults\n');
  const engine = (): TestEngine => engines()[0] as TestEngine;

  const call = async (
    what: string,
    method: string,
    path: string,
    init: RequestInit = {},
  ): Promise<Answered> => {
    const started = performance.now();
    const answer = await fetch(`${replica.url}${path}`, {
      method,
      ...init,
      headers: {
        authorization: `Bearer ${token}`,
        ...(method === 'POST' ? { 'idempotency-key': `beneath-${randomBytes(6).toString('hex')}` } : {}),
        ...(init.headers as Record<string, string> | undefined),
      },
      signal: AbortSignal.timeout(ANSWER_BOUND_MS + 10_000),
    });
    const raw = Buffer.from(await answer.arrayBuffer());
    return {
      what,
      status: answer.status,
      ms: performance.now() - started,
      body: raw.toString('utf8'),
      raw,
      retryAfter: answer.headers.get('retry-after'),
    };
  };
  const json = (what: string, method: string, path: string, body?: unknown) =>
    call(
      what,
      method,
      path,
      body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } },
    );
  const files = (path: string) => `/workspaces/default/computers/box/files?path=${encodeURIComponent(path)}`;

  /** Every answer in the published shape, within its bound; a 503 says when to come back. */
  const published = (answers: Answered[]) => {
    for (const answer of answers) {
      expect(answer.ms, `${answer.what} took ${Math.round(answer.ms)} ms`).toBeLessThan(ANSWER_BOUND_MS);
      if (answer.status < 400) continue;
      // A fault beneath is the Engine's, not a bug of the server's: never a 500.
      if (answer.status === 500) {
        const id = (JSON.parse(answer.body) as { error?: { request_id?: string } }).error?.request_id ?? '';
        const lines = replica
          .output()
          .split('\n')
          .filter((line) => line.includes(id));
        expect.fail(`${answer.what}: 500 ${answer.body}\n${lines.join('\n')}`);
      }
      const error = (JSON.parse(answer.body) as { error?: { code?: string; request_id?: string } }).error;
      expect(error?.code, `${answer.what}: ${answer.status} ${answer.body}`).toBeTypeOf('string');
      expect(error?.request_id, answer.what).toBeTypeOf('string');
      expect(answer.body, answer.what).not.toMatch(/\bat .+\.js:\d+|ECONN|EPIPE|socket hang up/);
      if (answer.status === 503)
        expect(answer.retryAfter, `${answer.what}: 503 without Retry-After`).toMatch(/^\d+$/);
    }
  };

  /**
   * Within 30 s of the Engine's return, a command runs again on the computer (started again when the
   * Engine's restart stopped its container: the computer says `stopped`, as it is).
   */
  const recovers = async () => {
    const deadline = Date.now() + RECOVERY_MS;
    for (;;) {
      const state = JSON.parse((await json('state', 'GET', '/workspaces/default/computers/box')).body)
        .computer?.state as string | undefined;
      if (state === 'stopped') {
        const started = await json('start', 'POST', '/workspaces/default/computers/box/start');
        const op = JSON.parse(started.body).operations?.[0]?.id;
        if (op) await json('wait', 'GET', `/operations/${op}?wait=20`);
      }
      const ran = await json('exec after', 'POST', '/workspaces/default/computers/box/exec', {
        argv: ['echo', 'back'],
      });
      if (ran.status === 200 && JSON.parse(ran.body).execution.stdout === 'back\n') return;
      expect(Date.now(), `not recovered: ${ran.status} ${ran.body}`).toBeLessThan(deadline);
      await sleep(500);
    }
  };

  /** A create's operation ends one way or the other, and the computer is in the state it says. */
  const settled = async (created: Answered) => {
    if (created.status !== 202) return;
    const { computer, operations } = JSON.parse(created.body) as {
      computer: { id: string };
      operations: { id: string }[];
    };
    const done = await json('wait', 'GET', `/operations/${operations[0]?.id}?wait=30`);
    const operation = JSON.parse(done.body).operation as { state: string };
    expect(['succeeded', 'failed']).toContain(operation.state);
    const now = JSON.parse((await json('get', 'GET', `/workspaces/default/computers/${computer.id}`)).body)
      .computer as { state: string };
    // Made, then (an Engine restart stops every container) perhaps stopped since; never left half-made.
    if (operation.state === 'succeeded') expect(['running', 'stopped']).toContain(now.state);
    else expect(now.state).toBe('failed');
    const removed = await json('delete', 'DELETE', `/workspaces/default/computers/${computer.id}`);
    expect([202, 404]).toContain(removed.status);
  };

  /** The uploaded path holds the seed or one upload whole; a 200 means that upload. */
  const whole = async (upload: Answered, sent: Buffer, path: string) => {
    const now = await call('read back', 'GET', files(path));
    expect(now.status).toBe(200);
    const held = now.raw.equals(seed)
      ? 'seed'
      : now.raw.equals(sent)
        ? 'sent'
        : `${now.raw.length} other bytes`;
    if (upload.status === 200) expect(held).toBe('sent');
    else expect(['seed', 'sent']).toContain(held);
  };

  beforeAll(async () => {
    dir = tempDir();
    replica = await startReplica('beneath', {
      databaseUrl: '',
      keyFile: join(dir.path, 'key.json'),
      env: {
        SVC_DATA_DIR: join(dir.path, 'data'),
        SVC_DRIVER: 'docker',
        SVC_DOCKER_SOCKET: engine().socketPath,
        SVC_DOCKER_INSTANCE: `beneath-${randomBytes(4).toString('hex')}`,
      },
    });
    token = await accessToken(replica, join(dir.path, 'key.json'));
    const created = await json('create box', 'POST', '/workspaces/default/computers', {
      name: 'box',
      size: 'small',
      image: 'busybox',
    });
    expect(created.status).toBe(202);
    await settled({ ...created, status: 0 });
    const op = JSON.parse(created.body).operations[0].id;
    await json('wait', 'GET', `/operations/${op}?wait=30`);
    const put = await call('seed', 'PUT', files('/home/svc/seed.txt'), {
      body: seed,
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(put.status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    engine().resume();
    if (replica) await stopReplica(replica);
    dir?.remove();
  });

  /** Runs the requests through `fault`, which resolves once the Engine has stopped answering and returns when it is back. */
  const underWay = async (fault: () => Promise<{ back: Promise<void> }>) => {
    const small = randomBytes(200_000);
    const large = randomBytes(3_000_000);
    const run = JSON.parse(
      (
        await json('run', 'POST', '/workspaces/default/computers/box/run', {
          argv: ['sh', '-c', 'sleep 1; echo out'],
        })
      ).body,
    ) as { operations: { id: string }[] };
    const requests = [
      json('exec', 'POST', '/workspaces/default/computers/box/exec', {
        argv: ['sh', '-c', 'sleep 1; echo done'],
      }),
      call('upload small', 'PUT', files('/home/svc/small.bin'), {
        body: small,
        headers: { 'content-type': 'application/octet-stream' },
      }),
      call('upload large', 'PUT', files('/home/svc/large.bin'), {
        body: large,
        headers: { 'content-type': 'application/octet-stream' },
      }),
      call('download', 'GET', files('/home/svc/seed.txt')),
      json('create', 'POST', '/workspaces/default/computers', {
        name: `c-${randomBytes(3).toString('hex')}`,
        size: 'small',
        image: 'busybox',
      }),
      call('stream', 'GET', `/operations/${run.operations[0]?.id}/output`),
    ];
    await sleep(150);
    const { back } = await fault();
    // Asked while the Engine is away: answered within the bound, by a 503 with Retry-After at worst.
    await sleep(300);
    requests.push(
      call('download while away', 'GET', files('/home/svc/seed.txt')),
      call('stat while away', 'GET', `/workspaces/default/computers/box/files/stat?path=%2Fhome%2Fsvc`),
    );
    const answers = await Promise.all(requests);
    published(answers);
    await back;
    await recovers();
    const byWhat = Object.fromEntries(answers.map((a) => [a.what, a]));
    await whole(byWhat['upload small'] as Answered, small, '/home/svc/small.bin').catch(async (error) => {
      // A small upload refused before anything was written leaves no file at all.
      if ((byWhat['upload small'] as Answered).status === 200) throw error;
    });
    await whole(byWhat['upload large'] as Answered, large, '/home/svc/large.bin').catch(async (error) => {
      if ((byWhat['upload large'] as Answered).status === 200) throw error;
    });
    for (const what of ['download', 'download while away']) {
      const download = byWhat[what] as Answered;
      if (download.status === 200) expect(download.body).toBe(seed.toString());
    }
    await settled(byWhat.create as Answered);
    console.log(answers.map((a) => `${a.what} ${a.status} ${Math.round(a.ms)} ms`).join('; '));
  };

  test('paused (SIGSTOP) while requests are under way: each is answered within its bound, and it recovers', {
    timeout: 240_000,
  }, async () => {
    await underWay(async () => {
      await engine().pause();
      return { back: sleep(AWAY_MS).then(() => engine().resume()) };
    });
  });

  test('restarted while requests are under way: each is answered within its bound, and it recovers', {
    timeout: 240_000,
  }, async () => {
    await underWay(async () => {
      return { back: engine().restart() };
    });
  });
});
