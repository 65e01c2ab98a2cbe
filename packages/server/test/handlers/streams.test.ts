// The event streams (`GET /workspaces/{workspace}/events`, `GET /operations/{operation}/output`) on
// one replica: who may open them (the errors before a stream are JSON), what they carry (every event
// checked against the spec), how they end (`stream.ended`: token expiry, revoked access, the drain)
// and that a client's leaving leaves nothing behind.
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { listen } from '../../src/http/node-adapter.js';
import { AccessTokens } from '../../src/identity/auth/access-token.js';
import { newId } from '../../src/platform/ids.js';
import { errorOf, ORIGIN, openTestApp, type Team, type TestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import { type OpenedStream, opened, openStream, type StreamItem } from '../support/streams.js';

describeEngines(
  'handlers: event streams',
  (engine) => {
    let t: TestApp;
    let team: Team;
    let other: Team;
    let computerId: string;
    beforeAll(async () => {
      t = await openTestApp(engine, { env: { SVC_STREAM_KEEPALIVE_MS: '100' } });
      team = await t.team();
      other = await t.team();
      computerId = await runningComputer(team);
    });
    afterAll(() => t.close());
    const events = (team: Team) => `/v1/workspaces/${team.workspace.id}/events`;
    const output = (id: string) => `/v1/operations/${id}/output`;
    const open = (path: string, item: StreamItem, options: Parameters<typeof openStream>[3] = {}) =>
      openStream(t.app.fetch, path, item, options);
    const openEvents = async (token: string, query = '', headers: Record<string, string> = {}) =>
      opened(await open(`${events(team)}${query}`, 'WorkspaceEventStreamItem', { token, headers }));
    /** Every stream a test opens is closed after it, and none broke the spec. */
    const streams: OpenedStream[] = [];
    const track = (stream: OpenedStream) => {
      streams.push(stream);
      return stream;
    };
    afterAll(async () => {
      for (const stream of streams) {
        await stream.close();
        expect(stream.violations).toEqual([]);
      }
    });

    async function runningComputer(of: Team): Promise<string> {
      const created = await t.call('POST', `/v1/workspaces/${of.workspace.id}/computers`, {
        token: of.editor.token,
        body: { name: unique('stream'), size: 'small', image: 'ubuntu-2404' },
      });
      expect(created.status).toBe(202);
      await t.call('GET', `/v1/operations/${created.body.operations[0].id}?wait=10`, {
        token: of.editor.token,
      });
      return created.body.computer.id;
    }
    /** A `computer.exec` operation running `argv` (POST …/run), and its id. */
    async function run(argv: string[], of = team, computer = computerId): Promise<string> {
      const answer = await t.call('POST', `/v1/workspaces/${of.workspace.id}/computers/${computer}/run`, {
        token: of.editor.token,
        body: { argv },
      });
      expect(answer.status).toBe(202);
      return answer.body.operations[0].id;
    }
    /** A change in the workspace that writes one event: the computer's labels. */
    const touch = (of: Team, computer: string, value = unique('v')) =>
      t.call('PATCH', `/v1/workspaces/${of.workspace.id}/computers/${computer}`, {
        token: of.editor.token,
        body: { labels: { touched: value } },
      });
    const waitUntil = async (what: () => boolean, timeoutMs = 2000) => {
      const deadline = Date.now() + timeoutMs;
      while (!what()) {
        if (Date.now() > deadline) throw new Error('timed out');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };

    describe('refused before the stream starts, as JSON errors', () => {
      const cases: {
        name: string;
        path: () => string;
        token: () => string | undefined;
        headers?: Record<string, string>;
        status: number;
        code: string;
      }[] = [
        {
          name: 'events, no token',
          path: () => events(team),
          token: () => undefined,
          status: 401,
          code: 'unauthenticated',
        },
        {
          name: 'events, forged token',
          path: () => events(team),
          token: () => 'e30.e30.sig',
          status: 401,
          code: 'unauthenticated',
        },
        {
          name: 'output, no token',
          path: () => output(newId()),
          token: () => undefined,
          status: 401,
          code: 'unauthenticated',
        },
        {
          name: 'events, non-member',
          path: () => events(team),
          token: () => team.outsider.token,
          status: 404,
          code: 'not_found',
        },
        {
          name: 'events, unknown workspace',
          path: () => `/v1/workspaces/${newId()}/events`,
          token: () => team.owner.token,
          status: 404,
          code: 'not_found',
        },
        {
          name: 'output, unknown operation',
          path: () => output(newId()),
          token: () => team.owner.token,
          status: 404,
          code: 'not_found',
        },
        {
          name: 'events, malformed Last-Event-ID',
          path: () => events(team),
          token: () => team.viewer.token,
          headers: { 'last-event-id': '12a' },
          status: 400,
          code: 'invalid_argument',
        },
        {
          name: 'events, negative after',
          path: () => `${events(team)}?after=-1`,
          token: () => team.viewer.token,
          status: 400,
          code: 'invalid_argument',
        },
        {
          name: 'events, after too long',
          path: () => `${events(team)}?after=${'9'.repeat(21)}`,
          token: () => team.viewer.token,
          status: 400,
          code: 'invalid_argument',
        },
        {
          name: 'events, after past any id',
          path: () => `${events(team)}?after=${'9'.repeat(20)}`,
          token: () => team.viewer.token,
          status: 400,
          code: 'invalid_argument',
        },
        {
          name: 'output, malformed Last-Event-ID',
          path: () => output(newId()),
          token: () => team.owner.token,
          headers: { 'last-event-id': '1x' },
          status: 400,
          code: 'invalid_argument',
        },
      ];
      test.each(cases)('$name: $status $code', async ({ path, token, headers, status, code }) => {
        const answer = await open(path(), 'WorkspaceEventStreamItem', {
          token: token(),
          headers: headers ?? {},
        });
        expect(answer.status).toBe(status);
        expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
        expect(errorOf(answer as never).code).toBe(code);
      });

      test('output: a viewer is 403, a non-member and another workspace 404, a non-command 404', async () => {
        const id = await run(['echo', 'hi']);
        const viewer = await open(output(id), 'OperationOutputStreamItem', { token: team.viewer.token });
        expect([viewer.status, errorOf(viewer as never).code]).toEqual([403, 'permission_denied']);
        for (const token of [team.outsider.token, other.owner.token]) {
          const refused = await open(output(id), 'OperationOutputStreamItem', { token });
          expect([refused.status, errorOf(refused as never).code]).toEqual([404, 'not_found']);
        }
        const created = await t.call('POST', `/v1/workspaces/${team.workspace.id}/computers`, {
          token: team.editor.token,
          body: { name: unique('noexec'), size: 'small', image: 'ubuntu-2404' },
        });
        const notCommand = await open(output(created.body.operations[0].id), 'OperationOutputStreamItem', {
          token: team.editor.token,
        });
        expect([notCommand.status, errorOf(notCommand as never).code]).toEqual([404, 'not_found']);
      });

      test('output past retention: 404, the operation itself still readable', async () => {
        const id = await run(['echo', 'old']);
        await t.call('GET', `/v1/operations/${id}?wait=10`, { token: team.editor.token });
        await t.db.query(`UPDATE operations SET completed_at = now() - interval '25 hours' WHERE id = $1`, [
          id,
        ]);
        const answer = await open(output(id), 'OperationOutputStreamItem', { token: team.editor.token });
        expect([answer.status, errorOf(answer as never).code]).toEqual([404, 'not_found']);
        expect((await t.call('GET', `/v1/operations/${id}`, { token: team.editor.token })).status).toBe(200);
      });

      test('the 17th concurrent stream of one principal: 429 rate_limited, policy streams, Retry-After', async () => {
        const caller = await t.user();
        await t.call('POST', `/v1/workspaces/${team.workspace.id}/members`, {
          token: team.owner.token,
          body: { principal_id: caller.id, role: 'viewer' },
        });
        const held: OpenedStream[] = [];
        for (let i = 0; i < 16; i++) held.push(await openEvents(caller.token));
        const refused = await open(events(team), 'WorkspaceEventStreamItem', { token: caller.token });
        expect(refused.status).toBe(429);
        const error = errorOf(refused as never);
        expect([error.code, error.details.policy]).toEqual(['rate_limited', 'streams']);
        expect(refused.headers.get('retry-after')).toBe('1');
        // Another principal is not held back by this one's streams; a slot given back is free again.
        track(await openEvents(team.viewer.token));
        await held.pop()?.close();
        await waitUntil(() => t.app.deps.streams.size <= 16);
        held.push(await openEvents(caller.token));
        for (const stream of held) await stream.close();
      });
    });

    describe('workspace events', () => {
      test('the 200: text/event-stream with CORS, Request-Id and RateLimit headers; keepalive comments', async () => {
        const stream = track(await openEvents(team.viewer.token));
        expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
        expect(stream.headers.get('access-control-allow-origin')).toBe('*');
        expect(stream.headers.get('request-id')).toBeTruthy();
        expect(stream.headers.get('ratelimit')).toBeTruthy();
        expect(stream.headers.get('cache-control')).toMatch(/no-cache/);
        await waitUntil(() => stream.comments.length >= 2, 2000);
        expect(stream.comments[0]?.text).toBe('keepalive');
      });

      test('without a cursor: only changes after it opened; after=0 replays the log; Last-Event-ID wins over after', async () => {
        const before = await touch(team, computerId);
        expect(before.status).toBe(200);
        const live = track(await openEvents(team.viewer.token));
        await touch(team, computerId, 'live');
        const change = await live.waitFor((e) => e.data.computer?.labels?.touched === 'live');
        expect(change.event).toBe('computer.updated');
        expect(live.events).toHaveLength(1);

        const replay = track(await openEvents(team.viewer.token, '?after=0'));
        const again = await replay.waitFor((e) => e.id === change.id);
        const ids = replay.events.map((e) => Number(e.id));
        expect(ids).toEqual(Array.from({ length: Number(again.id) }, (_, i) => i + 1));

        const resumed = track(
          await openEvents(team.viewer.token, '?after=0', { 'last-event-id': String(Number(change.id) - 1) }),
        );
        expect((await resumed.waitFor(() => true)).id).toBe(change.id);
      });

      test('events of another workspace never appear, with activity in both', async () => {
        const otherComputer = await runningComputer(other);
        const mine = track(await openEvents(team.viewer.token, '?after=0'));
        for (let i = 0; i < 3; i++) {
          await touch(other, otherComputer);
          await touch(team, computerId, `mine-${i}`);
        }
        await mine.waitFor((e) => e.data.computer?.labels?.touched === 'mine-2');
        expect(mine.events.every((e) => e.data.workspace_id === team.workspace.id)).toBe(true);
        expect(mine.events.some((e) => e.data.computer?.id === otherComputer)).toBe(false);
      });

      test('a cursor older than the log keeps: stream.ended cursor_expired, no reconnect', async () => {
        await touch(team, computerId);
        await touch(team, computerId);
        const { rows } = await t.db.query<{ sequence: number }>(
          'SELECT max(sequence)::int AS sequence FROM workspace_events WHERE workspace_id = $1',
          [team.workspace.id],
        );
        const last = Number(rows[0]?.sequence);
        // Retention took everything but the last event.
        await t.db.query('DELETE FROM workspace_events WHERE workspace_id = $1 AND sequence < $2', [
          team.workspace.id,
          last,
        ]);
        const stale = track(await openEvents(team.viewer.token, '?after=1'));
        const ended = await stale.waitFor((e) => e.event === 'stream.ended');
        expect(ended.data).toMatchObject({ reason: 'cursor_expired', reconnect: false });
        expect(ended.id).toBe('1');
        await stale.closed;
        // The cursor just before what is kept still resumes.
        const fresh = track(await openEvents(team.viewer.token, `?after=${last - 1}`));
        expect((await fresh.waitFor(() => true)).id).toBe(String(last));
      });
    });

    describe('a command output', () => {
      test('from the start: the chunks joined are the result; ends after exit', async () => {
        const id = await run(['echo', 'hello', 'stream']);
        const stream = track(
          opened(await open(output(id), 'OperationOutputStreamItem', { token: team.editor.token })),
        );
        await stream.closed;
        const final = stream.events.at(-1);
        expect(final?.event).toBe('exit');
        const done = await t.call('GET', `/v1/operations/${id}?wait=10`, { token: team.editor.token });
        const execution = done.body.operation.result.execution;
        const stdout = stream.events
          .filter((e) => e.event === 'output' && e.data.stream === 'stdout')
          .map((e) =>
            e.data.encoding === 'base64' ? Buffer.from(e.data.data, 'base64').toString() : e.data.data,
          )
          .join('');
        expect(stdout).toBe(execution.stdout);
        expect(final?.data.exit_code).toBe(execution.exit_code);
        expect(stream.events.map((e) => Number(e.id))).toEqual(stream.events.map((_, i) => i + 1));
      });

      test('written while it runs: each chunk reaches the stream before the command ends, resume gets the rest', async () => {
        const id = await run(['sleep', '3']);
        const stream = track(
          opened(await open(output(id), 'OperationOutputStreamItem', { token: team.editor.token })),
        );
        // The worker's appends, as SQL: the log notifies every replica's streams when it commits.
        const append = (sequence: number, text: string, offset: number) =>
          t.db.query(
            `INSERT INTO operation_output (operation_id, sequence, event, data) VALUES ($1, $2, 'output', $3)`,
            [id, sequence, { stream: 'stdout', offset, encoding: 'utf-8', data: text }],
          );
        const started = performance.now();
        await append(1, 'a\n', 0);
        const first = await stream.waitFor((e) => e.id === '1', 1000);
        expect(first.at - started).toBeLessThan(500);
        await append(2, 'b\n', 2);
        await stream.waitFor((e) => e.id === '2', 1000);
        await stream.close();
        const state = await t.call('GET', `/v1/operations/${id}`, { token: team.editor.token });
        expect(state.body.operation.state).toBe('running');
        const resumed = track(
          opened(
            await open(output(id), 'OperationOutputStreamItem', {
              token: team.editor.token,
              headers: { 'last-event-id': '1' },
            }),
          ),
        );
        expect((await resumed.waitFor(() => true)).id).toBe('2');
        await t.call('GET', `/v1/operations/${id}?wait=10`, { token: team.editor.token });
        await resumed.closed;
        expect(['exit', 'failed']).toContain(resumed.events.at(-1)?.event);
      });
    });

    describe('a cursor at or past the end of an ended command', () => {
      test.each([
        ['the final event', 0],
        ['past the log', 1],
        ['far past the log', 92],
      ])('at %s: the stream closes at once with nothing new', async (_name, past) => {
        const id = await run(['echo', 'done']);
        const first = track(
          opened(await open(output(id), 'OperationOutputStreamItem', { token: team.editor.token })),
        );
        await first.closed;
        const final = first.events.at(-1);
        expect(final?.event).toBe('exit');
        const cursor = String(Number(final?.id) + past);
        const sent: Record<string, string>[] = [{ 'last-event-id': cursor }, {}];
        for (const headers of sent) {
          const query = 'last-event-id' in headers ? '' : `?after=${cursor}`;
          const again = track(
            opened(
              await open(`${output(id)}${query}`, 'OperationOutputStreamItem', {
                token: team.editor.token,
                headers,
              }),
            ),
          );
          await again.closed;
          expect(again.events).toEqual([]);
        }
      });

      test('a log that never got its final event: the one made from the operation keeps its id', async () => {
        const id = await run(['echo', 'kept']);
        const first = track(
          opened(await open(output(id), 'OperationOutputStreamItem', { token: team.editor.token })),
        );
        await first.closed;
        // The final event gone (as for a command that ended before its output was logged).
        await t.db.query(
          `DELETE FROM operation_output WHERE operation_id = $1 AND event IN ('exit', 'failed')`,
          [id],
        );
        const replayed = track(
          opened(await open(output(id), 'OperationOutputStreamItem', { token: team.editor.token })),
        );
        await replayed.closed;
        const made = replayed.events.at(-1);
        expect(made?.event).toBe('exit');
        expect(made?.id).toBe(first.events.at(-1)?.id);
        const after = track(
          opened(
            await open(output(id), 'OperationOutputStreamItem', {
              token: team.editor.token,
              headers: { 'last-event-id': String(made?.id) },
            }),
          ),
        );
        await after.closed;
        expect(after.events).toEqual([]);
      });
    });

    describe('how a stream ends', () => {
      test('member removed: stream.ended access_revoked within 1 s, reconnect false', async () => {
        const member = await t.user();
        const added = await t.call('POST', `/v1/workspaces/${team.workspace.id}/members`, {
          token: team.owner.token,
          body: { principal_id: member.id, role: 'viewer' },
        });
        expect(added.status).toBe(201);
        const stream = track(await openEvents(member.token));
        const removed = performance.now();
        const gone = await t.call(
          'DELETE',
          `/v1/workspaces/${team.workspace.id}/members/${added.body.member.id}`,
          {
            token: team.owner.token,
          },
        );
        expect(gone.status).toBe(204);
        const ended = await stream.waitFor((e) => e.event === 'stream.ended', 2000);
        expect(ended.at - removed).toBeLessThan(1000);
        expect(ended.data).toMatchObject({ reason: 'access_revoked', reconnect: false });
        expect(ended.retry).toBeGreaterThan(0);
        await stream.closed;
      });

      test('role lowered below exec: the output stream ends access_revoked', async () => {
        const member = await t.user();
        const added = await t.call('POST', `/v1/workspaces/${team.workspace.id}/members`, {
          token: team.owner.token,
          body: { principal_id: member.id, role: 'editor' },
        });
        const id = await run(['sleep', '3']);
        const stream = track(
          opened(await open(output(id), 'OperationOutputStreamItem', { token: member.token })),
        );
        const lowered = await t.call(
          'PATCH',
          `/v1/workspaces/${team.workspace.id}/members/${added.body.member.id}`,
          {
            token: team.owner.token,
            body: { role: 'viewer' },
          },
        );
        expect(lowered.status).toBe(200);
        const ended = await stream.waitFor((e) => e.event === 'stream.ended', 2000);
        expect(ended.data.reason).toBe('access_revoked');
      });

      test('the key a token was issued for is revoked: stream.ended access_revoked within 1 s', async () => {
        const ws = team.workspace.id;
        const sa = await t.call('POST', `/v1/workspaces/${ws}/service-accounts`, {
          token: team.owner.token,
          body: { name: unique('streamer'), role: 'viewer' },
        });
        expect(sa.status).toBe(201);
        const saId = sa.body.service_account.id;
        const key = await t.call('POST', `/v1/workspaces/${ws}/service-accounts/${saId}/keys`, {
          token: team.owner.token,
        });
        expect(key.status).toBe(201);
        const keyId = key.body.key.key_file.key_id;
        const token = (await t.app.deps.tokens.issue(saId, { keyId })).access_token;
        const stream = track(await openEvents(token));
        const revoked = performance.now();
        const deleted = await t.call(
          'DELETE',
          `/v1/workspaces/${ws}/service-accounts/${saId}/keys/${keyId}`,
          {
            token: team.owner.token,
          },
        );
        expect(deleted.status).toBe(204);
        const ended = await stream.waitFor((e) => e.event === 'stream.ended', 2000);
        expect(ended.at - revoked).toBeLessThan(1000);
        expect(ended.data).toMatchObject({ reason: 'access_revoked', reconnect: false });
      });

      test('the token expires mid-stream: stream.ended token_expired, reconnect true', async () => {
        const shortLived = new AccessTokens(t.app.deps.serverKeys, {
          baseUrl: `${ORIGIN}/v1`,
          ttlSeconds: 1,
        });
        const issued = await shortLived.issue(team.viewer.id);
        const stream = track(await openEvents(issued.access_token));
        const ended = await stream.waitFor((e) => e.event === 'stream.ended', 3000);
        expect(ended.data).toMatchObject({ reason: 'token_expired', reconnect: true });
        expect(ended.at).toBeGreaterThan(0);
        expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(issued.expires_at));
        await stream.closed;
      });

      test('HEAD answers the headers and leaves no stream open', async () => {
        const before = t.app.deps.streams.size;
        const response = await t.app.fetch(
          new Request(`${ORIGIN}${events(team)}`, {
            method: 'HEAD',
            headers: { authorization: `Bearer ${team.viewer.token}` },
          }),
        );
        expect(response.status).toBe(200);
        expect(response.body).toBeNull();
        await waitUntil(() => t.app.deps.streams.size === before);
      });
    });

    describe('a client that leaves', () => {
      test('hanging up stops the stream: no slot, wake-up or timer is left (core and socket)', async () => {
        const base = { streams: t.app.deps.streams.size, wakeups: t.app.deps.workspaceEvents.size };
        // The stream's timers: its keep-alive interval and its token-expiry timeout (minutes away).
        const intervals = new Set<unknown>();
        const expiries = new Set<unknown>();
        const setInterval = vi.spyOn(globalThis, 'setInterval');
        const setTimeout = vi.spyOn(globalThis, 'setTimeout');
        const clearInterval = vi.spyOn(globalThis, 'clearInterval');
        const clearTimeout = vi.spyOn(globalThis, 'clearTimeout');
        try {
          const stream = await openEvents(team.viewer.token);
          await waitUntil(() => t.app.deps.workspaceEvents.size > base.wakeups);
          for (const [i, call] of setInterval.mock.calls.entries()) {
            if (call[1] === 100) intervals.add(setInterval.mock.results[i]?.value);
          }
          for (const [i, call] of setTimeout.mock.calls.entries()) {
            if ((call[1] ?? 0) > 60_000) expiries.add(setTimeout.mock.results[i]?.value);
          }
          expect([intervals.size, expiries.size]).toEqual([1, 1]);
          await stream.close();
          await waitUntil(
            () =>
              t.app.deps.streams.size === base.streams && t.app.deps.workspaceEvents.size === base.wakeups,
          );
          const cleared = new Set<unknown>(
            [...clearInterval.mock.calls, ...clearTimeout.mock.calls].map((c) => c[0]),
          );
          expect([...intervals, ...expiries].every((handle) => cleared.has(handle))).toBe(true);
        } finally {
          vi.restoreAllMocks();
        }

        const running = await listen(t.app.fetch, { port: 0 });
        try {
          const aborted = new AbortController();
          const socket = opened(
            await openStream((request) => fetch(request), events(team), 'WorkspaceEventStreamItem', {
              token: team.viewer.token,
              origin: running.url,
              signal: aborted.signal,
            }),
          );
          await waitUntil(() => socket.comments.length > 0);
          expect(t.app.deps.streams.size).toBe(base.streams + 1);
          aborted.abort();
          await waitUntil(
            () =>
              t.app.deps.streams.size === base.streams && t.app.deps.workspaceEvents.size === base.wakeups,
          );
        } finally {
          // What is checked is checked above; the listener's close must not wait on a connection the
          // client's abort has not torn down yet (seen once under a loaded CI run).
          (running.server as { closeAllConnections?: () => void }).closeAllConnections?.();
          await running.close();
        }
      });
    });

    // Last: the app refuses streams from here on.
    describe('the drain', () => {
      test('ends every open stream with shutting_down at once; a new one is 503', async () => {
        const a = await openEvents(team.viewer.token);
        const b = await openEvents(team.owner.token);
        const started = performance.now();
        t.app.endStreams();
        for (const stream of [a, b]) {
          const ended = await stream.waitFor((e) => e.event === 'stream.ended', 1000);
          expect(ended.data).toMatchObject({ reason: 'shutting_down', reconnect: true });
          await stream.closed;
          expect(performance.now() - started).toBeLessThan(500);
          expect(stream.violations).toEqual([]);
        }
        const refused = await open(events(team), 'WorkspaceEventStreamItem', { token: team.viewer.token });
        expect([refused.status, errorOf(refused as never).code]).toEqual([503, 'unavailable']);
        expect(refused.headers.get('retry-after')).toBe('1');
        await waitUntil(() => t.app.deps.streams.size === 0);
      });
    });
  },
  ['pglite'],
);
