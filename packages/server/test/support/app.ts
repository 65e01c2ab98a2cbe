import type { App, AppOptions } from '../../src/compose/app.js';
import { createApp } from '../../src/compose/app.js';
import { loadConfig } from '../../src/compose/config.js';
import type { Database } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import type { EngineUnderTest } from './databases.js';

export const ORIGIN = 'http://svc.test';

/** A response, read once. */
export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers loosely; the app validated them against the spec
  body: any;
}

export interface CallOptions {
  token?: string | undefined;
  body?: unknown;
  /** A raw body (sent as is, with `content-type` from `headers`). */
  raw?: string;
  headers?: Record<string, string>;
  /** Adds a fresh Idempotency-Key (default for POST). */
  key?: string | false;
}

/** An app on a fresh database of `engine`, answering through its core (no socket), with every response validated. */
export interface TestApp {
  app: App;
  db: Database;
  call(method: string, path: string, options?: CallOptions): Promise<Answer>;
  /** A user principal (straight in SQL) with a fresh access token. */
  user(name?: string): Promise<{ id: string; token: string }>;
  /** A workspace owned by a new user, plus users with each other role. */
  team(): Promise<Team>;
  close(): Promise<void>;
}

export interface Team {
  workspace: { id: string; name: string };
  owner: { id: string; token: string };
  admin: { id: string; token: string };
  editor: { id: string; token: string };
  viewer: { id: string; token: string };
  outsider: { id: string; token: string };
}

let counter = 0;
/** A unique DNS-label name. */
export const unique = (prefix: string): string =>
  `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

export async function openTestApp(
  engine: EngineUnderTest,
  options: {
    env?: Record<string, string>;
    app?: Partial<AppOptions>;
    wrapDb?: (db: Database) => Database;
    /** How the database is opened (a small pool, tight bounds). */
    database?: Parameters<EngineUnderTest['open']>[0];
  } = {},
): Promise<TestApp> {
  const opened = await engine.open(options.database);
  const db = options.wrapDb ? options.wrapDb(opened) : opened;
  const config = loadConfig(
    {
      SVC_BASE_URL: `${ORIGIN}/v1`,
      SVC_SIM_STEP_MS: '10',
      SVC_RATE_LIMITS: 'principal=100000/60',
      ...options.env,
    },
    { sandbox: true },
  );
  const app = await createApp({ config, db, responseValidation: 'throw', ...options.app });
  await app.start();
  const call = async (method: string, path: string, call: CallOptions = {}): Promise<Answer> => {
    // Tests also change rows straight in SQL: let the app's principal cache hear of it first, as it
    // would of a change made through its own API (PostgreSQL delivers notifications asynchronously).
    await db.notificationBarrier();
    const headers: Record<string, string> = { ...call.headers };
    if (call.token) headers.authorization = `Bearer ${call.token}`;
    if (call.body !== undefined || call.raw !== undefined) headers['content-type'] ??= 'application/json';
    const key = call.key ?? (method === 'POST' && !path.endsWith('/auth/token') ? newId() : false);
    if (key !== false) headers['idempotency-key'] = key;
    const response = await app.fetch(
      new Request(`${ORIGIN}${path}`, {
        method,
        headers,
        ...(call.raw !== undefined
          ? { body: call.raw }
          : call.body !== undefined
            ? { body: JSON.stringify(call.body) }
            : {}),
      }),
    );
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text === '' ? undefined : JSON.parse(text),
    };
  };
  const user = async (name = unique('user')) => {
    const id = newId();
    await db.query(`INSERT INTO principals (id, kind, name, display_name) VALUES ($1, 'user', $2, $2)`, [
      id,
      name,
    ]);
    return { id, token: (await app.deps.tokens.issue(id)).access_token };
  };
  const team = async (): Promise<Team> => {
    const owner = await user();
    const created = await call('POST', '/v1/workspaces', {
      token: owner.token,
      body: { name: unique('ws') },
    });
    if (created.status !== 201) throw new Error(`team: ${created.status} ${JSON.stringify(created.body)}`);
    const workspace = created.body.workspace as { id: string; name: string };
    const members: Record<string, { id: string; token: string }> = {};
    for (const role of ['admin', 'editor', 'viewer'] as const) {
      members[role] = await user();
      const added = await call('POST', `/v1/workspaces/${workspace.id}/members`, {
        token: owner.token,
        body: { principal_id: members[role].id, role },
      });
      if (added.status !== 201) throw new Error(`team: ${added.status}`);
    }
    return {
      workspace,
      owner,
      admin: members.admin!,
      editor: members.editor!,
      viewer: members.viewer!,
      outsider: await user(),
    };
  };
  return { app, db, call, user, team, close: () => app.close() };
}

/** Asserts an error answer: status, code, the envelope and `Request-Id` = `request_id`. */
// biome-ignore lint/suspicious/noExplicitAny: details differ per code
export function errorOf(answer: Answer): { code: string; message: string; details: Record<string, any> } {
  const error = answer.body?.error;
  if (!error) throw new Error(`expected an error, got ${answer.status} ${JSON.stringify(answer.body)}`);
  if (error.request_id !== answer.headers.get('request-id'))
    throw new Error('request_id differs from Request-Id');
  return error;
}
