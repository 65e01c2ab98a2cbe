// One JSON log line per request without secrets, Prometheus metrics and OpenTelemetry spans, observed
// on the app in-process (docs/runbook.md lists what each means).
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { Metrics } from '../../src/compose/metrics.js';
import { signAssertion } from '../../src/identity/auth/assertion.js';
import { setLocalAccount } from '../../src/identity/signin/accounts.js';
import { createLoggerSync } from '../../src/platform/observe/logger.js';
import { startTracing } from '../../src/platform/observe/tracing.js';
import { postSignin, signinForm } from '../security/support/signin.js';
import { ORIGIN, openTestApp, type TestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';

const PASSWORD = 'observe-me-not 7f3a91';

interface Line {
  level: string;
  message: string;
  [field: string]: unknown;
}

describeEngines('observability', (engine) => {
  let raw = '';
  const lines: Line[] = [];
  const exporter = new InMemorySpanExporter();
  const metrics = new Metrics({ processMetrics: false });
  let t: TestApp;
  let requests = 0;
  const secrets: string[] = [];

  const scrape = async () => (await metrics.render()).body;
  /** One value of the exposition text, e.g. `svc_operations{state="pending"}`. */
  const sample = (text: string, series: string): number | undefined => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  beforeAll(async () => {
    // The most verbose level: whatever the server logs at all, it logs here.
    const logger = createLoggerSync({
      level: 'trace',
      destination: {
        write(chunk: string) {
          raw += chunk;
          for (const line of chunk.split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Line);
        },
      },
    });
    const tracing = await startTracing({ exporter });
    t = await openTestApp(engine, {
      env: { SVC_RATE_LIMITS: 'principal=20/60' },
      app: { observe: { logger, metrics, tracing } },
    });
    const call = t.call;
    t.call = (...args) => {
      requests++;
      return call(...args);
    };
  });
  afterAll(() => t?.close());

  test('a request: one log line with its ids, status and time; metrics and a span with its queries', async () => {
    const user = await t.user();
    secrets.push(user.token);
    const before = lines.length;
    const me = await t.call('GET', '/v1/me', { token: user.token });
    expect(me.status).toBe(200);
    const requestId = me.headers.get('request-id');
    const logged = lines.slice(before).filter((l) => l.message === 'request');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      level: 'info',
      request_id: requestId,
      principal_id: user.id,
      operation_id: 'getMe',
      method: 'GET',
      path: '/v1/me',
      status: 200,
    });
    expect(logged[0]?.duration_ms).toEqual(expect.any(Number));

    const text = await scrape();
    expect(sample(text, 'svc_http_requests_total{operation="getMe",status="200"}')).toBe(1);
    expect(sample(text, 'svc_http_request_duration_seconds_count{operation="getMe",status="200"}')).toBe(1);

    const spans = exporter.getFinishedSpans();
    const server = spans.find((s) => s.attributes['svc.request_id'] === requestId);
    expect(server?.name).toBe('GET getMe');
    expect(server?.attributes['http.response.status_code']).toBe(200);
    const queries = spans.filter((s) => s.parentSpanContext?.spanId === server?.spanContext().spanId);
    expect(queries.length).toBeGreaterThan(0);
    for (const query of queries) {
      expect(query.attributes['db.query.text']).toEqual(expect.any(String));
      // Parameters are not recorded: the principal's id is a parameter of the authentication query.
      expect(JSON.stringify(query.attributes)).not.toContain(user.id);
    }
  });

  test('a command run is audited in the request log at info, never with its stdin or output', async () => {
    const team = await t.team();
    secrets.push(team.editor.token);
    const ws = `/v1/workspaces/${team.workspace.id}`;
    const created = await t.call('POST', `${ws}/computers`, {
      token: team.editor.token,
      body: { name: unique('box'), size: 'small', image: 'ubuntu-2404' },
    });
    expect(created.status).toBe(202);
    const done = await t.call('GET', `/v1/operations/${created.body.operations[0].id}?wait=10`, {
      token: team.editor.token,
    });
    expect(done.body.operation.state).toBe('succeeded');
    const ran = await t.call('POST', `${ws}/computers/${created.body.computer.id}/exec`, {
      token: team.editor.token,
      body: { argv: ['cat'], stdin: 'stdin-never-logged 42' },
    });
    expect(ran.status).toBe(200);
    const audit = lines.find(
      (l) => l.message === 'command run' && l.request_id === ran.headers.get('request-id'),
    );
    expect(audit).toMatchObject({ level: 'info', program: 'cat', exit_code: 0 });
    expect(raw).not.toContain('stdin-never-logged');
  });

  test('a refused request and an unrouted one are logged and counted too', async () => {
    const user = await t.user();
    secrets.push(user.token);
    let refused = 0;
    for (let i = 0; i < 22; i++) {
      const answer = await t.call('GET', '/v1/me', { token: user.token });
      if (answer.status === 429) refused++;
    }
    expect(refused).toBe(2);
    const other = await t.user();
    const missing = await t.call('GET', '/v1/no-such-route', { token: other.token });
    expect(missing.status).toBe(404);
    const text = await scrape();
    expect(sample(text, 'svc_rate_limit_refusals_total{policy="principal"}')).toBe(2);
    // The principal limit is checked before routing: its refusals have no operation yet.
    expect(sample(text, 'svc_http_requests_total{operation="unrouted",status="429"}')).toBe(2);
    expect(sample(text, 'svc_http_requests_total{operation="unrouted",status="404"}')).toBe(1);
    const last = lines.filter((l) => l.message === 'request').at(-1);
    expect(last).toMatchObject({ operation_id: 'unrouted', status: 404, path: '/v1/no-such-route' });
  });

  test('operation queue depth and lag come from the database; in-flight from this worker', async () => {
    const team = await t.team();
    await t.app.worker.stop();
    const created = await t.call('POST', `/v1/workspaces/${team.workspace.id}/computers`, {
      token: team.editor.token,
      body: { name: unique('pc'), size: 'small', image: 'debian-13' },
    });
    expect(created.status).toBe(202);
    let text = await scrape();
    expect(sample(text, 'svc_operations{state="pending"}')).toBe(1);
    expect(sample(text, 'svc_operation_queue_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'svc_worker_operations_in_flight')).toBe(0);
    await t.app.worker.start();
    const operationId = created.body.operations[0].id as string;
    for (let i = 0; i < 200; i++) {
      const { rows } = await t.db.query<{ state: string }>('SELECT state FROM operations WHERE id = $1', [
        operationId,
      ]);
      if (rows[0]?.state === 'succeeded') break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    text = await scrape();
    expect(sample(text, 'svc_operations{state="pending"}')).toBe(0);
    expect(sample(text, 'svc_operation_queue_lag_seconds')).toBe(0);
    expect(sample(text, 'svc_streams_open')).toBe(0);
    const stream = await t.app.fetch(
      new Request(`${ORIGIN}/v1/workspaces/${team.workspace.id}/events`, {
        headers: { authorization: `Bearer ${team.viewer.token}` },
      }),
    );
    expect(stream.status).toBe(200);
    expect(sample(await scrape(), 'svc_streams_open')).toBe(1);
    await stream.body?.cancel();
    if (engine.name === 'postgres') {
      expect(sample(text, 'svc_db_pool_connections{state="max"}')).toBe(10);
      expect(sample(text, 'svc_db_pool_connections{state="in_use"}')).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'svc_db_pool_waiting_requests')).toBe(0);
    } else {
      expect(text).not.toContain('svc_db_pool_connections');
    }
  });

  test('secrets never reach the log or the spans: tokens, assertions, private keys, passwords', async () => {
    const team = await t.team();
    // A service account's key: the private key is in the create's answer only.
    const account = await t.call('POST', `/v1/workspaces/${team.workspace.id}/service-accounts`, {
      token: team.owner.token,
      body: { name: unique('robot'), role: 'editor' },
    });
    expect(account.status).toBe(201);
    const key = await t.call(
      'POST',
      `/v1/workspaces/${team.workspace.id}/service-accounts/${account.body.service_account.id}/keys`,
      { token: team.owner.token, body: {} },
    );
    expect(key.status).toBe(201);
    const file = key.body.key.key_file;
    const privateKey = file.private_key as string;
    expect(privateKey).toContain('PRIVATE KEY');
    const assertion = await signAssertion(file, { tokenUrl: `${ORIGIN}/v1/auth/token` });
    const exchanged = await t.call('POST', '/v1/auth/token', {
      headers: { authorization: `Bearer ${assertion}` },
    });
    expect(exchanged.status).toBe(200);
    const accessToken = exchanged.body.token.access_token as string;
    expect((await t.call('GET', '/v1/me', { token: accessToken })).status).toBe(200);
    // A wrong and a right password at browser sign-in.
    const email = `${unique('ada')}@example.com`;
    await setLocalAccount(t.db, { email, password: PASSWORD });
    for (const password of ['wrong-password-1', PASSWORD]) {
      const answer = await signIn(t, email, password);
      expect(answer.status).toBe(password === PASSWORD ? 303 : 401);
      if (password === PASSWORD) {
        const code = new URL(answer.headers.get('location') ?? 'http://x/').searchParams.get('code');
        expect(code).toBeTruthy();
        secrets.push(code as string);
      }
    }
    // A failure the server logs at error level carries no request detail either.
    secrets.push(assertion, accessToken, PASSWORD, 'wrong-password-1');
    const keyBody = privateKey.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
    expect(keyBody.length).toBeGreaterThan(40);
    const spans = JSON.stringify(
      exporter.getFinishedSpans().map((s: ReadableSpan) => [s.name, s.attributes]),
    );
    expect(raw.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      expect(raw).not.toContain(secret);
      expect(spans).not.toContain(secret);
    }
    for (const chunk of keyBody.match(/.{32}/g) ?? []) {
      expect(raw).not.toContain(chunk);
      expect(spans).not.toContain(chunk);
    }
    expect(raw).not.toMatch(/bearer /i);
    // Outside /v1 by area, never with a query string; anonymous requests name no principal.
    const signins = lines.filter((l) => l.message === 'request' && l.operation_id === 'signin');
    expect(signins.map((l) => [l.method, l.path, l.status])).toEqual([
      ['GET', '/signin/authorize', 200],
      ['POST', '/signin/authorize', 401],
      ['GET', '/signin/authorize', 200],
      ['POST', '/signin/authorize', 303],
    ]);
    for (const line of signins) expect(line.principal_id).toBeUndefined();
    const exchange = lines.find((l) => l.message === 'request' && l.operation_id === 'exchangeToken');
    expect(exchange).toMatchObject({ status: 200, path: '/v1/auth/token' });
    expect(exchange?.principal_id).toBeUndefined();
    expect(lines.filter((l) => l.message === 'request').length).toBeGreaterThanOrEqual(requests);
  });
});

/** Browser sign-in through the app: the form (CSRF cookie and fields), then the POST. */
async function signIn(t: TestApp, email: string, password: string): Promise<Response> {
  const send = (request: Request) => t.app.fetch(request);
  return postSignin(send, await signinForm(send, ORIGIN), { email, password });
}

test('tracing is off without OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
  expect(await startTracing({ env: {} })).toBeUndefined();
  expect(
    await startTracing({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' },
    }),
  ).toBeUndefined();
});
