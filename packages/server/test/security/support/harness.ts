import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { App } from '../../../src/compose/app.js';
import { createApp } from '../../../src/compose/app.js';
import { bootstrap } from '../../../src/compose/bootstrap.js';
import { loadConfig } from '../../../src/compose/config.js';
import { signAssertion } from '../../../src/identity/auth/assertion.js';
import type { KeyFile } from '../../../src/identity/auth/keypair.js';
import type { Database } from '../../../src/platform/db/database.js';
import { newId } from '../../../src/platform/ids.js';

/** The public address the in-process app believes it has (tokens' `iss`/`aud`, key files' `base_url`). */
export const BASE_URL = 'http://svc.test/v1';
export const TOKEN_URL = `${BASE_URL}/auth/token`;

/** One answer, read once: status, headers and the parsed JSON body (or the raw text). */
export interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

export interface CallOptions {
  token?: string | undefined;
  /** A JSON value (sent as application/json) — or raw bytes/text with `contentType` of your own. */
  json?: unknown;
  raw?: string | Uint8Array;
  contentType?: string | null;
  headers?: Record<string, string>;
  /** Adds an `Idempotency-Key` (a fresh one when `true`). */
  idempotencyKey?: string | true;
}

/** A running in-process server (its `fetch`, no socket) with the bootstrap owner. */
export interface Harness {
  app: App;
  db: Database;
  /** The bootstrap workspace: id and name. */
  workspace: { id: string; name: string };
  /** The bootstrap user (owner of `workspace`) and a token for it. */
  ownerUserId: string;
  ownerToken: string;
  /** The bootstrap owner service account's key file (exchanged through POST /auth/token). */
  ownerKeyFile: KeyFile;
  call(method: string, path: string, options?: CallOptions): Promise<Answer>;
  /** Exchanges a key file for an access token through POST /v1/auth/token. */
  exchange(file: KeyFile): Promise<string>;
  /** A user principal (straight in SQL: users come from browser sign-in) and a token for it. */
  user(name?: string): Promise<{ id: string; token: string }>;
  /** `call` that must answer `status`; returns the body. */
  expectCall(
    status: number,
    method: string,
    path: string,
    options?: CallOptions,
  ): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * Starts the app on `db` the way `main` does (bootstrap included), with rate limits raised out of reach (the
 * suites send thousands of requests a minute) and quotas raised so they do not mask behaviour; the owner
 * user's token is issued by the app's own token service, the way browser sign-in ends.
 *
 * @example
 * const h = await startHarness(await engine.open());
 * const me = await h.call('GET', '/v1/me', { token: h.ownerToken });
 */
export async function startHarness(
  db: Database,
  options: { env?: Record<string, string>; clock?: () => number; start?: boolean } = {},
): Promise<Harness> {
  const config = loadConfig(
    {
      SVC_BASE_URL: BASE_URL,
      // On (their headers are part of every documented response) but far above what the suites send.
      SVC_RATE_LIMITS: 'principal=1000000000/60,workspace_mutations=1000000000/60',
      SVC_SIM_STEP_MS: '5',
      SVC_QUOTA_WORKSPACES_PER_PRINCIPAL: '100000',
      SVC_QUOTA_COMPUTERS_PER_WORKSPACE: '100000',
      SVC_QUOTA_MEMBERS_PER_WORKSPACE: '100000',
      SVC_QUOTA_ACTIVE_KEYS_PER_SERVICE_ACCOUNT: '100000',
      SVC_QUOTA_WEBHOOK_ENDPOINTS_PER_WORKSPACE: '100000',
      SVC_TERMINALS_PER_WORKSPACE: '100000',
      SVC_TERMINALS_PER_COMPUTER: '10000',
      SVC_QUOTA_SNAPSHOTS_PER_WORKSPACE: '100000',
      ...options.env,
    },
    { sandbox: true },
  );
  const logs: string[] = [];
  const app = await createApp({
    config,
    db,
    responseValidation: 'off',
    ...(options.clock ? { clock: options.clock } : {}),
    // The audit line of every command run is expected; anything else logged is shown after the suite.
    log: (message, fields) => {
      if (message !== 'command run') logs.push(`${message} ${JSON.stringify(fields)}`);
    },
  });
  if (options.start !== false) await app.start();
  const dir = mkdtempSync(join(tmpdir(), 'svc-security-'));
  const first = await bootstrap(db, { baseUrl: BASE_URL, keyFilePath: join(dir, 'owner-key.json') });
  if (!first) throw new Error('expected an empty database to bootstrap');

  const call = async (method: string, path: string, o: CallOptions = {}): Promise<Answer> => {
    const headers = new Headers(o.headers);
    if (o.token !== undefined) headers.set('authorization', `Bearer ${o.token}`);
    if (o.idempotencyKey)
      headers.set('idempotency-key', o.idempotencyKey === true ? newId() : o.idempotencyKey);
    let body: BodyInit | undefined;
    if (o.json !== undefined) {
      body = JSON.stringify(o.json);
      headers.set('content-type', 'application/json');
    } else if (o.raw !== undefined) body = o.raw as BodyInit;
    if (o.contentType === null) headers.delete('content-type');
    else if (o.contentType !== undefined) headers.set('content-type', o.contentType);
    const response = await app.fetch(new Request(`http://svc.test${path}`, { method, headers, body }));
    // An event stream does not end by itself: its status and headers are the answer here (the
    // streams' own suites read the events); hanging up ends it.
    if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
      await response.body?.cancel();
      return { status: response.status, headers: response.headers, body: undefined, text: '' };
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // not JSON: kept as text, and the suites say so
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };

  const exchange = async (file: KeyFile): Promise<string> => {
    const assertion = await signAssertion(file, { tokenUrl: TOKEN_URL });
    const answer = await call('POST', '/v1/auth/token', { token: assertion });
    if (answer.status !== 200) throw new Error(`token exchange failed: ${answer.status} ${answer.text}`);
    return (answer.body as { token: { access_token: string } }).token.access_token;
  };

  const user = async (name = `user-${newId().slice(-8)}`) => {
    const id = newId();
    await db.query(`INSERT INTO principals (id, kind, name, display_name) VALUES ($1, 'user', $2, $2)`, [
      id,
      name,
    ]);
    return { id, token: (await app.deps.tokens.issue(id)).access_token };
  };

  const expectCall = async (status: number, method: string, path: string, o?: CallOptions) => {
    const answer = await call(method, path, o);
    expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(status);
    return (answer.body ?? {}) as Record<string, unknown>;
  };

  return {
    app,
    db,
    workspace: { id: first.workspaceId, name: first.workspaceName },
    ownerUserId: first.userId,
    ownerToken: (await app.deps.tokens.issue(first.userId)).access_token,
    ownerKeyFile: first.keyFile,
    call,
    exchange,
    user,
    expectCall,
    async close() {
      await app.close();
      if (logs.length > 0) console.warn(`server log during the suite:\n${logs.slice(0, 20).join('\n')}`);
    },
  };
}

/**
 * Waits for an operation to finish (long-poll through the API) and returns its final state.
 *
 * @example
 * await settle(h, token, operationId); // 'succeeded'
 */
export async function settle(h: Harness, token: string, operationId: string): Promise<string> {
  for (let i = 0; i < 20; i += 1) {
    const answer = await h.call('GET', `/v1/operations/${operationId}?wait=5`, { token });
    const state = (answer.body as { operation?: { state: string } }).operation?.state;
    if (state === 'succeeded' || state === 'failed' || state === 'canceled') return state;
  }
  throw new Error(`operation ${operationId} did not finish`);
}
