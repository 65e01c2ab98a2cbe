import { expect } from 'vitest';
import { SimulatedDriver } from '../../src/computers/simulated-driver.js';
import type { Team, TestApp } from '../support/app.js';
import { ORIGIN, openTestApp, unique } from '../support/app.js';
import type { EngineUnderTest } from '../support/databases.js';

/** An answer of the files API: its bytes, and its JSON when it is JSON. */
export interface ByteAnswer {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers loosely; the app validated them against the spec
  body: any;
}

/** What one request of the files API sends. */
export interface ByteCall {
  token?: string;
  /** The body: bytes, or a stream (sent without `Content-Length`). */
  body?: Uint8Array | ReadableStream<Uint8Array>;
  contentType?: string;
  headers?: Record<string, string>;
  key?: string;
}

/** A running app with a team, a running computer, the simulated driver and the audit lines it wrote. */
export interface FilesApp {
  t: TestApp;
  team: Team;
  driver: SimulatedDriver;
  computer: string;
  logs: { message: string; fields: Record<string, unknown> }[];
  /** `/v1/workspaces/{workspace}/computers/{computer}/files` of the running computer (or `id`). */
  files(id?: string): string;
  send(method: string, path: string, call?: ByteCall): Promise<ByteAnswer>;
  /** A new running computer's id. */
  newComputer(): Promise<string>;
  /** Waits for an operation to succeed. */
  settle(operationId: string): Promise<void>;
}

/**
 * Opens an app on `engine` with the simulated driver (its files in memory), a team and a running
 * computer; `env` adds settings (e.g. `SVC_FILES_MAX_BYTES`).
 *
 * @example
 * const f = await openFilesApp(engine, { SVC_FILES_MAX_BYTES: '1048576' });
 */
export async function openFilesApp(
  engine: EngineUnderTest,
  env: Record<string, string> = {},
  files: { quotaBytes?: number; maxEntries?: number } = {},
): Promise<FilesApp> {
  const logs: FilesApp['logs'] = [];
  const driver = new SimulatedDriver({
    stepMs: 10,
    ...(files.quotaBytes === undefined ? {} : { filesQuotaBytes: files.quotaBytes }),
    ...(files.maxEntries === undefined ? {} : { filesMaxArchiveEntries: files.maxEntries }),
  });
  const t = await openTestApp(engine, {
    env,
    app: { driver, log: (message, fields) => logs.push({ message, fields: fields ?? {} }) },
  });
  const team = await t.team();
  const ws = `/v1/workspaces/${team.workspace.id}`;
  const settle = async (operationId: string) => {
    const answer = await t.call('GET', `/v1/operations/${operationId}?wait=10`, { token: team.editor.token });
    expect(answer.body.operation.state).toBe('succeeded');
  };
  const newComputer = async () => {
    const created = await t.call('POST', `${ws}/computers`, {
      token: team.editor.token,
      body: { name: unique('box'), size: 'small', image: 'ubuntu-2404' },
    });
    expect(created.status).toBe(202);
    await settle(created.body.operations[0].id);
    return created.body.computer.id as string;
  };
  const computer = await newComputer();
  const send = async (method: string, path: string, call: ByteCall = {}): Promise<ByteAnswer> => {
    await t.db.notificationBarrier();
    const headers: Record<string, string> = { ...call.headers };
    headers.authorization = `Bearer ${call.token ?? team.editor.token}`;
    if (call.contentType) headers['content-type'] = call.contentType;
    if (call.key) headers['idempotency-key'] = call.key;
    const stream = call.body instanceof ReadableStream;
    const response = await t.app.fetch(
      new Request(`${ORIGIN}${path}`, {
        method,
        headers,
        ...(call.body === undefined ? {} : { body: call.body }),
        ...(stream ? { duplex: 'half' } : {}),
      } as RequestInit),
    );
    const bytes = new Uint8Array(await response.arrayBuffer());
    const json = response.headers.get('content-type') === 'application/json';
    return {
      status: response.status,
      headers: response.headers,
      bytes,
      body: json && bytes.length > 0 ? JSON.parse(Buffer.from(bytes).toString('utf8')) : undefined,
    };
  };
  return {
    t,
    team,
    driver,
    computer,
    logs,
    files: (id = computer) => `${ws}/computers/${id}/files`,
    send,
    newComputer,
    settle,
  };
}

/** Bytes 0–255, `times` over. */
export function allByteValues(times = 1): Uint8Array {
  return new Uint8Array(Array.from({ length: 256 * times }, (_, at) => at % 256));
}

/** A stream of `bytes` in pieces, that records whether anything was pulled from it. */
export function watchedStream(bytes: Uint8Array, piece = 64 * 1024) {
  const seen = { pulled: 0 };
  let at = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        seen.pulled++;
        if (at >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(at, at + piece));
        at += piece;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, seen };
}

/** `?path=` (and more), encoded. */
export function query(values: Record<string, string | boolean | number>): string {
  return `?${new URLSearchParams(Object.entries(values).map(([k, v]) => [k, String(v)])).toString()}`;
}
