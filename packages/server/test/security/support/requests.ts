import fc from 'fast-check';
import type { JwtMutation } from './jwt-mutations.js';
import { jwtMutationArbitrary } from './jwt-mutations.js';
import type { Resolve } from './schema-arbitrary.js';
import { invalidValue, validValue } from './schema-arbitrary.js';
import type { OperationSpec } from './spec-oracle.js';

/** A path parameter whose value is chosen when the request is sent: a live resource from a pool. */
export interface PoolRef {
  pool: string;
  index: number;
}

/** One generated request, before pool references are resolved. */
export interface FuzzRequest {
  operationId: string;
  method: string;
  /** Path template segments: literal text, or a value (already a string) or a pool reference. */
  pathParams: Record<string, string | PoolRef>;
  query: [string, string][];
  headers: Record<string, string>;
  /**
   * The Authorization the request carries: the fuzzing owner, nothing, garbage, an assertion, or (with
   * `jwt`) the owner's assertion or access token with one header parameter or claim of a wrong JSON type.
   */
  auth: 'owner' | 'none' | 'garbage' | 'assertion' | 'mutated-assertion' | 'mutated-token';
  jwt?: JwtMutation;
  /** A protected route without a usable access token: authentication comes first, so exactly 401. */
  expect401: boolean;
  body?:
    | { kind: 'json'; value: unknown }
    | { kind: 'text'; text: string }
    | { kind: 'bytes'; bytes: number[] }
    | { kind: 'huge' };
  /** Why the generator KNOWS the request is invalid (empty: it may be valid). A 2xx then fails the run. */
  invalid: string[];
  /** What was done to it, for the figures and failure messages. */
  tags: string[];
}

const JSON_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json;charset="UTF-8"',
];
const WRONG_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/json; charset=utf-16',
  'application/jsonp',
  'application/xml',
  'application/json, text/plain',
  '',
];
const BROKEN_JSON = [
  '{',
  '{"a":',
  '[1,2',
  'nul',
  "{'a':1}",
  '{"a":1}}',
  '\u00ef\u00bb\u00bf{}',
  '{"a":1,}',
  'NaN',
  '"\\ud800"',
  '{"__proto__":{"x":1}}',
];

/** Pool names by path parameter, and the pools destructive operations may touch. */
export function poolFor(operationId: string, param: string): string {
  if (param === 'workspace' && (operationId === 'deleteWorkspace' || operationId === 'updateWorkspace'))
    return 'scratch_workspace';
  return param;
}

/**
 * All the ways one operation is called by the fuzzer: valid and invalid path parameters (pool
 * resources, schema values, bad ids and names), query parameters (valid, invalid, repeated, unknown),
 * Idempotency-Key (fresh, reused, missing, invalid), content types, bodies (valid, schema-invalid,
 * broken JSON, invalid UTF-8, over 1 MiB) and credentials. Ajv (through `op.params[].accepts` and
 * `op.body.validate`) decides what is known to be invalid.
 *
 * @example
 * const arbitrary = requestArbitrary(oracle.operation('createComputer'), oracle.resolve);
 */
export function requestArbitrary(op: OperationSpec, resolve: Resolve): fc.Arbitrary<FuzzRequest> {
  const method = op.info.method.toUpperCase();
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const idempotency = op.params.find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
  const anonymous = op.anonymous;
  const exchange = op.info.operationId === 'exchangeToken';

  const pathArb = fc.record(
    Object.fromEntries(
      pathParams.map((p) => {
        const pool = poolFor(op.info.operationId, p.name);
        return [
          p.name,
          fc.oneof(
            { weight: 6, arbitrary: fc.nat(1000).map((index): string | PoolRef => ({ pool, index })) },
            { weight: 2, arbitrary: validValue(p.schema, resolve).map((v) => String(v)) },
            { weight: 3, arbitrary: invalidValue(p.schema, resolve).map((m) => pathText(m.value)) },
          ),
        ];
      }),
    ),
  ) as fc.Arbitrary<Record<string, string | PoolRef>>;

  const oneQuery = (p: (typeof queryParams)[number]) => {
    // `?wait=` long-polls up to 60 s: valid waits stay short so the run keeps its pace.
    const valid = p.name === 'wait' ? fc.constantFrom('0', '1') : validValue(p.schema, resolve).map(String);
    return fc.oneof(
      { weight: 4, arbitrary: fc.constant([] as string[]) },
      { weight: 3, arbitrary: valid.map((v) => [v]) },
      { weight: 3, arbitrary: invalidValue(p.schema, resolve).map((m) => [queryText(m.value)]) },
      { weight: 1, arbitrary: fc.tuple(valid, valid).map(([a, b]) => [a, b]) },
    );
  };
  const queryArb = fc
    .tuple(
      fc.tuple(
        ...queryParams.map((p) =>
          oneQuery(p).map((values) => values.map((v) => [p.name, v] as [string, string])),
        ),
      ),
      fc.option(
        fc.tuple(
          fc.constantFrom('x', 'utm_source', 'LIMIT', 'limit[]', '__proto__'),
          fc.string({ maxLength: 10 }),
        ),
        {
          freq: 8,
        },
      ),
    )
    .map(([declared, unknown]) => [...declared.flat(), ...(unknown ? [unknown] : [])]);

  const keyArb = fc.oneof(
    { weight: 6, arbitrary: fc.uuid().map((u): string | undefined => u) },
    { weight: 1, arbitrary: fc.constantFrom('fuzz-reused-1', 'fuzz-reused-2') },
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('k'.repeat(256), 'caf\u00e9', '\u00ff', '') },
  );

  type Body = FuzzRequest['body'] | undefined;
  const bodyArb: fc.Arbitrary<Body> = op.body
    ? (fc.oneof(
        {
          weight: 5,
          arbitrary: validValue(op.body.schema, resolve).map((value) => ({ kind: 'json' as const, value })),
        },
        {
          weight: 5,
          arbitrary: invalidValue(op.body.schema, resolve).map((m) => ({
            kind: 'json' as const,
            value: m.value,
          })),
        },
        {
          weight: 1,
          arbitrary: fc.constantFrom(...BROKEN_JSON).map((text) => ({ kind: 'text' as const, text })),
        },
        {
          weight: 1,
          arbitrary: fc.constant({ kind: 'bytes' as const, bytes: [0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d] }),
        },
        { weight: 1, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constant<FuzzRequest['body']>({ kind: 'huge' }) },
      ) as fc.Arbitrary<Body>)
    : (fc
        .option(fc.constant({ kind: 'json' as const, value: { ignored: true } }), { freq: 5 })
        .map((b) => b ?? undefined) as fc.Arbitrary<Body>);

  const contentTypeArb = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...JSON_TYPES).map((t): string | undefined => t) },
    { weight: 2, arbitrary: fc.constantFrom(...WRONG_TYPES) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );

  const authArb: fc.Arbitrary<FuzzRequest['auth']> = anonymous
    ? fc.constant('none' as const)
    : exchange
      ? fc.constantFrom(
          'assertion' as const,
          'assertion' as const,
          'owner' as const,
          'garbage' as const,
          'none' as const,
          'mutated-assertion' as const,
        )
      : fc.oneof(
          { weight: 30, arbitrary: fc.constant('owner' as const) },
          { weight: 1, arbitrary: fc.constantFrom('none' as const, 'garbage' as const) },
          { weight: 1, arbitrary: fc.constant('mutated-token' as const) },
        );
  const jwtArb = exchange ? jwtMutationArbitrary('assertion') : jwtMutationArbitrary('access_token');

  return fc
    .record({
      pathParams: pathArb,
      query: queryArb,
      key: keyArb,
      body: bodyArb,
      contentType: contentTypeArb,
      auth: authArb,
      jwt: jwtArb,
      hugeBodySometimes: fc.nat(200),
    })
    .map(({ pathParams: params, query, key, body, contentType, auth, jwt, hugeBodySometimes }) => {
      const invalid: string[] = [];
      const tags: string[] = [];
      for (const p of pathParams) {
        const value = params[p.name];
        // An empty segment changes the route (`/workspaces/` is another URL), so it is not "this operation, invalid".
        if (value === '') tags.push('empty-segment');
        else if (typeof value === 'string' && !p.accepts(value))
          invalid.push(`path ${p.name}=${JSON.stringify(value.slice(0, 40))}`);
      }
      for (const p of queryParams) {
        const values = query.filter(([name]) => name === p.name).map(([, v]) => v);
        if (values.length > 1) {
          invalid.push(`query ${p.name} repeated`);
          tags.push('repeated-query');
        } else if (values.length === 1 && !p.accepts(values[0] as string))
          invalid.push(`query ${p.name}=${JSON.stringify((values[0] as string).slice(0, 40))}`);
      }
      const headers: Record<string, string> = {};
      if (idempotency) {
        if (key === undefined) {
          if (idempotency.required) invalid.push('missing Idempotency-Key');
        } else {
          headers['idempotency-key'] = key;
          if (!idempotency.accepts(key)) invalid.push('bad Idempotency-Key');
          if (key.startsWith('fuzz-reused')) tags.push('reused-key');
        }
      }
      let sent = body;
      // Over 1 MiB is rare: building it costs more than the request.
      if (sent?.kind === 'huge' && hugeBodySometimes > 3) sent = undefined;
      if (sent !== undefined) {
        if (contentType !== undefined) headers['content-type'] = contentType;
        if (op.body) {
          if (sent.kind === 'huge') invalid.push('body over 1 MiB');
          else if (contentType === undefined || !JSON_TYPES.includes(contentType))
            invalid.push(`content type ${contentType}`);
          else if (sent.kind === 'text' || sent.kind === 'bytes') invalid.push('broken JSON');
          else if (!op.body.validate(sent.value)) invalid.push('body breaks its schema');
        }
        tags.push(`body:${sent.kind}`);
      } else if (op.body?.required) invalid.push('missing body');
      if (sent === undefined && contentType !== undefined && op.body && !JSON_TYPES.includes(contentType)) {
        headers['content-type'] = contentType;
        invalid.push(`content type ${contentType} without a body`);
      }
      const mutated = auth === 'mutated-assertion' || auth === 'mutated-token';
      if (auth === 'none' || auth === 'garbage' || mutated) {
        if (!anonymous) invalid.push(`credential: ${auth}`);
      }
      if (mutated) tags.push(`jwt:${jwt.part}.${jwt.field}`);
      if (exchange) {
        if (auth !== 'assertion') invalid.push('not an assertion');
        const grant =
          sent?.kind === 'json' ? (sent.value as { grant_type?: unknown } | null)?.grant_type : undefined;
        if (grant !== undefined && grant !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
          invalid.push(`grant ${JSON.stringify(grant)} with an assertion`);
      }
      return {
        operationId: op.info.operationId,
        method,
        pathParams: params,
        query,
        headers,
        auth,
        ...(mutated ? { jwt } : {}),
        // An empty path segment is another route (maybe none): 404 comes before any credential check.
        // POST /auth/token checks only the form of its credential first: nothing, or garbage.
        expect401:
          !anonymous &&
          !tags.includes('empty-segment') &&
          (exchange ? auth === 'none' || auth === 'garbage' : auth !== 'owner'),
        ...(sent === undefined ? {} : { body: sent }),
        invalid,
        tags,
      };
    });
}

/** A value as a path segment: strings as they are (`.` and `..` would be resolved away by URL parsing). */
function pathText(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined');
  return text === '.' || text === '..' ? `${text}x` : text;
}

function queryText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}
