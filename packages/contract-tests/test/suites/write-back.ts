import { type Operation, waitForOperations } from '@svc/client';
import { webhookEventTypes } from '@svc/contract';
import { afterAll, expect, it } from 'vitest';
import { fx } from '../support/fixtures.js';
import { contractClient, statefulIt, takeViolations } from '../support/harness.js';
import { writeBackUrl } from '../support/receivers.js';
import { document } from '../support/spec-index.js';
import { onMock } from '../support/target.js';
import { buildBody, declaredKeys, unechoed, type WriteCase, writeCases } from '../support/write-back.js';

type Json = Record<string, unknown>;
type Call = (
  path: string,
  init: { params: { path?: Json; query?: Json }; body?: Json },
) => Promise<{ data?: Json; error?: unknown; response: Response }>;

const WAIT = { timeoutMs: 60_000, pollSeconds: 10, minIntervalMs: 200 };

let lifetimes = 0;

/**
 * Request fields that name another resource, or that only the run can give a value. The schema says only "an id" or "a name", not of what, so
 * the run supplies them (the catalogue's first size and image, the suite's service account, which is no
 * member of the workspace created here). And fields whose valid values move with the clock: a
 * computer's lifetime (its expiry must lie ahead, at most 30 days), with the workspace's defaults
 * beside it, each call a new value so that an update changes it. `test/write-back.test.ts` fails on a
 * key no write has.
 */
export const REFERENCES: Readonly<Record<string, () => unknown>> = {
  size: () => fx.size,
  image: () => fx.image,
  principal_id: () => fx.serviceAccount,
  lifetime: () => ({
    idle_timeout_seconds: 3600 + ++lifetimes,
    expires_at: new Date(Math.ceil(Date.now() / 1000 + 86_400 + lifetimes) * 1000)
      .toISOString()
      .replace('.000Z', 'Z'),
    on_end: 'delete',
  }),
  lifetime_defaults: () => ({
    idle_timeout_seconds: 3600 + ++lifetimes,
    max_lifetime_seconds: 86_400,
    on_end: 'delete',
  }),
  // A webhook endpoint's: new on every call so an update changes it, under a receiver URL the target
  // accepts (support/receivers.ts: the suite's receiver's, else the spec's example); nothing need answer.
  url: () => writeBackUrl(++urls),
  // One event type of the spec's, another on every call, so an update changes the list.
  event_types: () => [webhookEventTypes[++urls % webhookEventTypes.length] as string],
  // A snapshot is taken of a computer of the workspace it is made in: the one this suite created there.
  computer: () => made.computer ?? fx.computer,
};

/** What this suite created, by path parameter: a later write may name it in its body (`computer`). */
const made: Record<string, string> = {};

let urls = 0;

/**
 * Write then read back, generated from the spec (support/write-back.ts): every create and update with a
 * JSON body sets every writable field, then the resource must hold each one.
 * - Against both targets: the request is valid for the spec, and the write's own answer echoes each
 *   field. Against the mock the body starts from the spec's request example and only the fields that
 *   came from it are compared (Prism answers the response example, which repeats them); a field the
 *   example leaves out is sent but not compared there.
 * - Against a server only (statefulIt): every value is fresh (not the default, not the value before an
 *   update) and a GET of the resource, or its collection's list, returns each field.
 * What the server made is deleted again after the suite (server only).
 */
export function writeBackSuite(): void {
  const { cases, notApplicable } = writeCases();
  const ids: Record<string, string> = {};
  const current: Record<string, Json> = {};
  const sent = new Map<WriteCase, Json>();
  const created: { path: string; params: Json }[] = [];
  const client = () => contractClient();
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'): Call =>
    (client() as unknown as Record<string, Call>)[method] as Call;

  const paramsOf = (path: string, forCase: string): Json => {
    const params: Json = {};
    for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
      if (!name || !ids[name]) throw new Error(`${forCase}: no {${name}} was created before it`);
      params[name] = ids[name];
    }
    return params;
  };

  it('write-back: lists the writes it cannot check', () => {
    process.stdout.write(
      `\nwrite-back: ${cases.length} writes checked; not applicable: ${
        notApplicable.map((n) => `${n.op.operationId} (${n.reason})`).join('; ') || 'none'
      }\n`,
    );
    expect(cases.length).toBeGreaterThan(0);
  });

  for (const writeCase of cases) {
    const { op, kind, param } = writeCase;
    const method = op.method.toUpperCase() as 'POST' | 'PATCH' | 'PUT';
    const unreadable = writeCase.unreadable.length
      ? ` (not in the representation: ${writeCase.unreadable.join(', ')})`
      : '';

    it(`write-back: ${op.operationId} answers with every field it was sent${onMock ? ' (mock: those of the request example)' : ''}`, async () => {
      const before = kind === 'update' ? current[param] : undefined;
      const { body, sources } = buildBody(writeCase, {
        example: onMock ? writeCase.example : undefined,
        references: REFERENCES,
        current: before,
      });
      const { data, error, response } = await call(method)(op.path, {
        params: { path: paramsOf(op.path, op.operationId) },
        body,
      });
      expect(response.ok, `${method} ${op.path} -> ${response.status} ${JSON.stringify(error)}`).toBe(true);
      // Recorded before comparing, so the read-back below still runs (and reports) when the echo fails.
      const resource = data?.[writeCase.responseKey] as Json | undefined;
      sent.set(writeCase, body);
      if (kind === 'create' && typeof resource?.id === 'string') {
        ids[param] = resource.id;
        made[param] = resource.id;
        created.push({ path: writeCase.itemPath, params: paramsOf(writeCase.itemPath, op.operationId) });
      }
      if (resource) current[param] = resource;
      const operations = data?.operations as Operation[] | undefined;
      if (operations?.length) await waitForOperations(client(), operations, WAIT);
      const compared = Object.keys(body).filter(
        (field) => !writeCase.unreadable.includes(field) && (!onMock || sources[field] === 'example'),
      );
      expect(
        unechoed(Object.fromEntries(compared.map((f) => [f, body[f]])), resource, declaredKeys(writeCase)),
      ).toEqual([]);
    });

    statefulIt(
      `write-back: ${op.operationId}, then ${writeCase.read.op.operationId} returns every written field${unreadable}`,
      async () => {
        const body = sent.get(writeCase);
        if (!body) throw new Error(`${op.operationId} did not write (its test above failed)`);
        const { read } = writeCase;
        let resource: Json | undefined;
        if (!read.list) {
          const { data, response } = await call('GET')(read.op.path, {
            params: { path: paramsOf(read.op.path, read.op.operationId) },
          });
          expect(response.status).toBe(200);
          resource = data?.[read.key] as Json | undefined;
        } else {
          let cursor: string | undefined;
          for (let page = 0; page < 100 && !resource; page++) {
            const { data, response } = await call('GET')(read.op.path, {
              params: { path: paramsOf(read.op.path, read.op.operationId), query: cursor ? { cursor } : {} },
            });
            expect(response.status).toBe(200);
            const items = (data?.[read.key] as Json[] | undefined) ?? [];
            resource = items.find((item) => item.id === ids[param]);
            if (!data?.has_more) break;
            cursor = data.next_cursor as string;
          }
        }
        const readable = Object.keys(body).filter((field) => !writeCase.unreadable.includes(field));
        expect(
          unechoed(Object.fromEntries(readable.map((f) => [f, body[f]])), resource, declaredKeys(writeCase)),
        ).toEqual([]);
        if (resource) current[param] = resource;
      },
    );
  }

  afterAll(async () => {
    if (onMock) return; // nothing was made
    const failures: string[] = [];
    for (const { path, params } of created.reverse()) {
      if (!document.paths[path]?.delete) continue;
      const { data, response } = await call('DELETE')(path, { params: { path: params } });
      const operations = data?.operations as Operation[] | undefined;
      if (operations?.length) await waitForOperations(client(), operations, WAIT);
      if (!response.ok) failures.push(`DELETE ${path} -> ${response.status}`);
    }
    failures.push(...takeViolations());
    if (failures.length) throw new Error(`write-back cleanup: ${failures.join('; ')}`);
  }, 120_000);
}
