// The kit's mocks never lie: in every mode, every answer of every operation, errors included, fits the
// bundled spec: a documented status, the declared headers, a body the response's schema accepts (the
// contract suite's own checks, ajv over the bundle: @svc/contract-tests/validate). Modes: the examples;
// every documented error status and named example through `mock.answer`; the stateful mode on the spec's
// example requests; and the stateful mode's own refusals (a taken name, an unknown parent, item or
// operation, an action from the wrong state or during another, a body that is not JSON or not the
// request's shape). The cases come from the spec and the kit's collections, never a hand-kept list.
// The examples mode is not cross-checked (`Request-Id` = `error.request_id`, `Location` naming the
// operation): the spec's examples need not agree with each other, as in mock-honest.test.ts; the
// stateful mode's answers are made together, so they are.
import {
  deref,
  isAnonymous,
  listOperations,
  type OperationInfo,
  operationResponses,
  requestBody,
} from '@svc/contract/browser';
import { exampleRequest } from '@svc/contract-tests/example-requests';
import { headerViolations, responseViolations } from '@svc/contract-tests/validate';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUNDLED_DOCUMENT,
  type Collection,
  createMock,
  findCollections,
  type Stored,
  type SvcMock,
} from '../../src/msw/index.js';

const BASE = 'http://api.test/v1';
const document = BUNDLED_DOCUMENT;
const OPERATIONS = listOperations(document);
const COLLECTIONS = findCollections(document);
const server = setupServer();
/** An id no memory holds (ids fit every path parameter, names do not). */
const UNKNOWN_ID = '01m6zzzzzzzzzzzzzzzzzzzzzzz';

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

/** One exchange with the mock in front: what came back, and every way it breaks the spec. */
async function exchange(
  op: OperationInfo,
  path: string,
  init: RequestInit,
  options: { crossChecks: boolean },
): Promise<{ status: number; body: unknown; problems: string[] }> {
  const response = await fetch(`${BASE}${path}`, init);
  const text = await response.text();
  const json = (response.headers.get('Content-Type') ?? '').startsWith('application/json');
  const body = text && json ? (JSON.parse(text) as unknown) : text || undefined;
  const problems = [
    ...responseViolations(op, response, body, { crossChecks: options.crossChecks }),
    ...headerViolations(op, response.status, response.headers),
  ].map((p) => `${op.operationId} ${init.method} ${path} -> ${response.status}: ${p}`);
  return { status: response.status, body, problems };
}

/** The names of the examples an operation documents for a status. */
function exampleNames(op: OperationInfo, status: string): string[] {
  const response = operationResponses(document, op).find((r) => r.status === status)!;
  const content = (response.response.content ?? {}) as Record<string, { examples?: object }>;
  return Object.keys(content['application/json']?.examples ?? {});
}

function use(mock: SvcMock): SvcMock {
  server.resetHandlers(...mock.handlers);
  return mock;
}

/** A fresh stateful mock whose operations end only when a test settles them. */
const stateful = () => use(createMock({ baseUrl: BASE, stateful: { stepMs: 60_000 } }));

/** Whether an operation's request body sets a `name`. */
const namesItself = (op: OperationInfo) => {
  const schema = requestBody(document, op)?.schema;
  return schema !== undefined && 'name' in ((deref(document, schema).properties ?? {}) as object);
};

const errorCode = (body: unknown) => (body as { error?: { code?: string } } | undefined)?.error?.code;

/** The path of an operation on one stored item (its parents and itself by id), with the example's query. */
function itemPath(op: OperationInfo, collection: Collection, item: Stored): string {
  const ids: Record<string, string> = { ...item.parents, [collection.param]: item.value.id };
  const path = op.path.replaceAll(/\{([^}]+)\}/g, (_, name: string) => ids[name] ?? name);
  const query = exampleRequest(op).path.split('?')[1];
  return query ? `${path}?${query}` : path;
}

describe('the examples mode', () => {
  it('answers every operation’s example request within the spec', async () => {
    use(createMock({ baseUrl: BASE }));
    const problems: string[] = [];
    for (const op of OPERATIONS) {
      const { path, init } = exampleRequest(op);
      problems.push(...(await exchange(op, path, init, { crossChecks: false })).problems);
    }
    expect(problems).toEqual([]);
  });

  it('answers every documented error status, each named example, within the spec', async () => {
    const mock = use(createMock({ baseUrl: BASE }));
    const problems: string[] = [];
    let answered = 0;
    for (const op of OPERATIONS) {
      for (const { status } of operationResponses(document, op).filter((r) => /^[45]/.test(r.status))) {
        const names = exampleNames(op, status);
        for (const example of names.length > 0 ? names : [undefined]) {
          const choice = { status: Number(status), ...(example === undefined ? {} : { example }) };
          server.use(mock.answer(op.operationId as 'getMe', choice as { status: 401 }, { once: true }));
          const { path, init } = exampleRequest(op);
          const answer = await exchange(op, path, init, { crossChecks: false });
          expect(answer.status, `${op.operationId} ${status} ${example}`).toBe(Number(status));
          problems.push(...answer.problems);
          answered += 1;
        }
      }
    }
    expect(problems).toEqual([]);
    expect(answered).toBeGreaterThan(250);
  });
});

describe('the stateful mode', () => {
  it('answers every operation’s example request within the spec, from a fresh memory each', async () => {
    const problems: string[] = [];
    for (const op of OPERATIONS) {
      stateful();
      const { path, init } = exampleRequest(op);
      problems.push(...(await exchange(op, path, init, { crossChecks: true })).problems);
      if (isAnonymous(document, op)) continue;
      const { Authorization: _, ...anonymous } = init.headers;
      const refused = await exchange(op, path, { ...init, headers: anonymous }, { crossChecks: false });
      expect(`${op.operationId} ${refused.status}`).toBe(`${op.operationId} 401`);
      problems.push(...refused.problems);
    }
    expect(problems).toEqual([]);
  });

  it('creates under a new name, then refuses it taken (409 already_exists), a rename to it too', async () => {
    const problems: string[] = [];
    const codes: string[] = [];
    for (const collection of COLLECTIONS.filter((c) => c.create && namesItself(c.create))) {
      const mock = stateful();
      const create = collection.create!;
      const { path, init } = exampleRequest(create);
      const body = {
        ...(JSON.parse(init.body!) as object),
        name: `honest-${collection.plural.replaceAll('_', '-')}`,
      };
      const first = await exchange(
        create,
        path,
        { ...init, body: JSON.stringify(body) },
        { crossChecks: true },
      );
      const again = await exchange(
        create,
        path,
        { ...init, body: JSON.stringify(body) },
        { crossChecks: true },
      );
      expect(first.status, create.operationId).toBeLessThan(300);
      codes.push(`${create.operationId} ${errorCode(again.body)}`);
      problems.push(...first.problems, ...again.problems);
      const update = collection.update;
      if (!update || !namesItself(update)) continue;
      // Another item under the same parents, renamed to the name just taken.
      const items = mock.state!.items(collection.path);
      const made = items.find((s) => s.value.name === body.name)!;
      const item = items.find(
        (s) => s !== made && JSON.stringify(s.parents) === JSON.stringify(made.parents),
      )!;
      const renamed = await exchange(
        update,
        itemPath(update, collection, item),
        { ...exampleRequest(update).init, body: JSON.stringify({ name: body.name }) },
        { crossChecks: true },
      );
      codes.push(`${update.operationId} ${errorCode(renamed.body)}`);
      problems.push(...renamed.problems);
    }
    expect(problems).toEqual([]);
    expect(codes.length).toBeGreaterThan(4);
    for (const code of codes) expect(code).toMatch(/ already_exists$/);
  });

  it('answers an unknown parent, item or operation 404 not_found, for every path parameter', async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const op of OPERATIONS) {
      const { path, init } = exampleRequest(op);
      const segments = op.path.split('/');
      for (const [index, segment] of segments.entries()) {
        if (!segment.startsWith('{')) continue;
        stateful();
        const [bare = '', query] = path.split('?');
        const parts = bare.split('/');
        parts[index] = UNKNOWN_ID;
        const unknown = `${parts.join('/')}${query ? `?${query}` : ''}`;
        const answer = await exchange(op, unknown, init, { crossChecks: true });
        expect(`${op.operationId} ${segment} ${answer.status} ${errorCode(answer.body)}`).toBe(
          `${op.operationId} ${segment} 404 not_found`,
        );
        problems.push(...answer.problems);
        checked += 1;
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(80);
  });

  it('refuses an action from the wrong state (409 invalid_state) or during another (operation_in_progress)', async () => {
    const problems: string[] = [];
    const codes = new Set<string>();
    for (const collection of COLLECTIONS) {
      const ops = [collection.update, ...collection.actions, collection.remove].filter(
        (o) => o !== undefined,
      );
      for (const seeded of stateful().state!.items(collection.path)) {
        // Every change twice on each item as the examples seed it, then again once every operation ended.
        const mock = stateful();
        const item = mock.state!.items(collection.path).find((s) => s.value.id === seeded.value.id)!;
        for (const round of [1, 2]) {
          for (const op of [...ops, ...ops]) {
            const answer = await exchange(op, itemPath(op, collection, item), exampleRequest(op).init, {
              crossChecks: true,
            });
            problems.push(...answer.problems);
            if (answer.status >= 400)
              codes.add(`${op.operationId} ${answer.status} ${errorCode(answer.body)}`);
          }
          if (round === 1) mock.state!.settle();
        }
      }
    }
    expect(problems).toEqual([]);
    const seen = [...codes].map((c) => c.split(' ').slice(1).join(' '));
    expect(new Set(seen)).toEqual(
      new Set(['409 invalid_state', '409 operation_in_progress', '404 not_found']),
    );
  });

  it('refuses a body that is not JSON (400 invalid_request) or not of the request’s shape (400 invalid_argument)', async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const op of OPERATIONS.filter((o) => requestBody(document, o)?.content['application/json'])) {
      const { path, init } = exampleRequest(op);
      const schema = deref(document, requestBody(document, op)!.schema);
      const bodies: [string, string, string][] = [
        ['{"name": ', '400', 'invalid_request'],
        ['[]', '400', 'invalid_argument'],
      ];
      if (Array.isArray(schema.required) && schema.required.length > 0)
        bodies.push(['{}', '400', 'invalid_argument']);
      if (schema.additionalProperties === false)
        bodies.push([
          JSON.stringify({ ...JSON.parse(init.body!), not_in_the_spec: 1 }),
          '400',
          'invalid_argument',
        ]);
      for (const [body, status, code] of bodies) {
        stateful();
        const answer = await exchange(op, path, { ...init, body }, { crossChecks: true });
        expect(`${op.operationId} ${body} ${answer.status} ${errorCode(answer.body)}`).toBe(
          `${op.operationId} ${body} ${status} ${code}`,
        );
        problems.push(...answer.problems);
        checked += 1;
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(40);
  });
});
