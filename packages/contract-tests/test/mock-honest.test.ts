// The mock never lies: every operation, called with the spec's own example request, answers in both of
// `pnpm mock`'s modes (examples, and `--dynamic` generated data) with a status, headers and a body that
// the bundle accepts (JSON Schema 2020-12, ajv). Examples must also keep the conventions the schema does
// not state (paging pairs, 202 `Retry-After: 1`); generated data is held to the schema only. Runs in the
// default (mock) run only.
import { byteResponse, responseFor } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_REQUESTS } from '../src/example-requests.js';
import { type PrismMock, startPrism } from '../src/prism.js';
import { headerViolations, responseViolations } from '../src/validate.js';
import { document, OPERATIONS } from './support/spec-index.js';
import { eventViolations, parseStream, streamOf } from './support/streams.js';

/** Headers for checking a body alone. */
const JSON_HEADERS = { 'Content-Type': 'application/json', 'Request-Id': '01m6ty2frhn2f2c4v4t96368nge' };

/** How many times each operation is called in dynamic mode: every call draws new data. */
const DYNAMIC_ROUNDS = 5;

describe.each([
  { mode: 'examples', dynamic: false, rounds: 1 },
  { mode: 'dynamic', dynamic: true, rounds: DYNAMIC_ROUNDS },
])('pnpm mock ($mode)', ({ dynamic, rounds }) => {
  let prism: PrismMock;
  beforeAll(async () => {
    prism = await startPrism({ dynamic });
  });
  afterAll(() => prism?.stop());

  it('covers every operation of the spec', () => {
    expect(EXAMPLE_REQUESTS.map((r) => r.op.operationId)).toEqual(OPERATIONS.map((op) => op.operationId));
  });

  it.each(EXAMPLE_REQUESTS.map((r) => [r.op.operationId, r] as const))(
    '%s answers within the spec',
    async (_id, { op, path, init }) => {
      for (let round = 0; round < rounds; round++) {
        const response = await fetch(`${prism.baseUrl}${path}`, init);
        const text = await response.text();
        // An event stream (served by the mock's front): its events are checked one by one.
        const stream = (response.headers.get('Content-Type') ?? '').startsWith('text/event-stream');
        // Bytes (a download, served by the mock's front too): not JSON; their type and headers are checked.
        const bytes = byteResponse(document, op.operationId) !== undefined && response.ok;
        const body = text && !stream && !bytes ? JSON.parse(text) : undefined;
        const problems = [
          ...(response.status >= 400 ? [`status ${response.status}: ${text.slice(0, 300)}`] : []),
          ...(stream ? eventViolations(streamOf(op.operationId), parseStream(text).events) : []),
          ...responseViolations(op, response, body, { crossChecks: false, beyondSchema: !dynamic }),
          ...headerViolations(op, response.status, response.headers),
        ];
        expect(problems, `${init.method} ${path} round ${round + 1}`).toEqual([]);
      }
    },
  );
});

describe('Prefer: code=…, example=… (the README documents these)', () => {
  let prism: PrismMock;
  beforeAll(async () => {
    prism = await startPrism();
  });
  afterAll(() => prism?.stop());

  const stop = EXAMPLE_REQUESTS.find((r) => r.op.operationId === 'stopComputer')!;
  const list = EXAMPLE_REQUESTS.find((r) => r.op.operationId === 'listComputers')!;
  const call = async ({ path, init }: (typeof EXAMPLE_REQUESTS)[number], prefer: string) => {
    const response = await fetch(`${prism.baseUrl}${path}`, {
      ...init,
      headers: { ...init.headers, Prefer: prefer },
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const examples = (op: (typeof EXAMPLE_REQUESTS)[number]['op'], status: number) =>
    (responseFor(document, op, status)!.response.content as Record<string, { examples: unknown }>)[
      'application/json'
    ]!.examples as Record<string, { value: unknown }>;

  it.each([
    ['code=404', stop, 404, 'not_found'],
    ['code=409, example=operation_in_progress', stop, 409, 'operation_in_progress'],
    ['code=409, example=stop_invalid_state', stop, 409, 'invalid_state'],
  ] as const)('Prefer: %s answers that status with that example', async (prefer, request, status, code) => {
    const answer = await call(request, prefer);
    expect(answer.status).toBe(status);
    expect((answer.body.error as { code: string }).code).toBe(code);
  });

  it('Prefer: dynamic=true generates data for one request of the static mock', async () => {
    const [first, second] = [await call(list, 'dynamic=true'), await call(list, 'dynamic=true')];
    expect(first.status).toBe(200);
    expect(
      responseViolations(list.op, { status: 200, headers: new Headers(JSON_HEADERS) }, first.body, {
        crossChecks: false,
        beyondSchema: false,
      }),
    ).toEqual([]);
    expect(first.body).not.toEqual(second.body);
  });

  it('Prefer: example=<name> picks a named success example', async () => {
    const answer = await call(list, 'example=first_page');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(examples(list.op, 200).first_page!.value);
  });
});
