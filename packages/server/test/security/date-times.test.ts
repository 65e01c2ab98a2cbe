// Out-of-range date-times (SECURITY.md, #13 item 5): every `date-time` field of every request of the
// spec (bodies and parameters, found by walking the bundle's schemas) × every edge case that parses as
// text but names no instant or breaks RFC 3339 / `Timestamp` (a leap second, year 10000, month 13, …)
// → 400 `invalid_argument` with a field violation naming that field. Never a 500.
import type { OperationInfo } from '@svc/contract';
import { listOperations, loadDocument, operationParameters, requestBody } from '@svc/contract';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { describeEngines } from '../support/databases.js';
import type { Harness } from './support/harness.js';
import { startHarness } from './support/harness.js';
import type { Schema } from './support/schema-arbitrary.js';
import { INVALID_DATE_TIMES, resolver } from './support/schema-arbitrary.js';

const document = loadDocument();
const resolve = resolver(document);

/** One date-time field of a request: in the body (a property path) or a query/path parameter. */
interface DateTimeField {
  op: OperationInfo;
  in: 'body' | 'query' | 'path';
  /** Body: property names from the root; parameter: its name. */
  path: string[];
}

/** Object property paths to every `format: date-time` under `schema` (through $ref, allOf/anyOf/oneOf). */
function dateTimePaths(raw: unknown, at: string[] = [], depth = 0): string[][] {
  if (depth > 8 || raw === undefined) return [];
  const schema = resolve(raw) as Schema;
  const out: string[][] = [];
  if (schema.format === 'date-time') out.push(at);
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const)
    for (const sub of (schema[key] as unknown[] | undefined) ?? [])
      out.push(...dateTimePaths(sub, at, depth + 1));
  for (const [name, sub] of Object.entries((schema.properties as Record<string, unknown> | undefined) ?? {}))
    out.push(...dateTimePaths(sub, [...at, name], depth + 1));
  return out;
}

const fields: DateTimeField[] = listOperations(document).flatMap((op) => {
  const found: DateTimeField[] = [];
  for (const p of operationParameters(document, op)) {
    if ((p.in === 'query' || p.in === 'path') && dateTimePaths(p.schema).length > 0)
      found.push({ op, in: p.in, path: [p.name] });
  }
  for (const path of dateTimePaths(requestBody(document, op)?.schema))
    if (path.length > 0) found.push({ op, in: 'body', path });
  return found;
});

/** The spec's first example body, so everything but the field under test is valid. */
function exampleBody(op: OperationInfo): Record<string, unknown> {
  const media = requestBody(document, op)?.content['application/json'];
  const first = media?.examples ? resolve(Object.values(media.examples as object)[0]) : undefined;
  return structuredClone((first?.value ?? {}) as Record<string, unknown>);
}

function setAt(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path.at(-1) as string] = value;
}

const cases = fields.flatMap((field) =>
  INVALID_DATE_TIMES.map(
    (value) => [field.op.operationId, `${field.in}.${field.path.join('.')}`, value, field] as const,
  ),
);

test('the spec has date-time fields in requests, and every one is exercised', () => {
  expect(fields.length).toBeGreaterThan(0);
});

describeEngines('out-of-range date-times', (engine) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(await engine.open());
  });
  afterAll(() => h.close());

  test.each(cases)('%s %s = %s → 400 with a field violation', async (_id, where, value, field) => {
    const { op } = field;
    const query = new URLSearchParams();
    let path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
      encodeURIComponent(field.in === 'path' && name === field.path[0] ? value : '0'.repeat(27)),
    );
    if (field.in === 'query') query.set(field.path[0] as string, value);
    const body = op.operation.requestBody ? exampleBody(op) : undefined;
    if (field.in === 'body' && body) setAt(body, field.path, value);
    path = `/v1${path}${query.size > 0 ? `?${query}` : ''}`;
    const answer = await h.call(op.method.toUpperCase(), path, {
      token: h.ownerToken,
      idempotencyKey: true,
      ...(body === undefined ? {} : { json: body }),
    });
    const error = (answer.body as { error?: { code?: string; details?: Record<string, unknown> } }).error;
    expect([answer.status, error?.code], answer.text.slice(0, 300)).toEqual([400, 'invalid_argument']);
    const violations = (error?.details?.field_violations ?? []) as { field: string }[];
    const name = field.in === 'body' ? field.path.join('.') : `${field.in}.${field.path[0]}`;
    expect(
      violations.some((v) => v.field === name || v.field.endsWith(`.${name}`)),
      `${where}: ${JSON.stringify(violations)}`,
    ).toBe(true);
  });
});
