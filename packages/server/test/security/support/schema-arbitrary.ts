import { deref, type OpenApiDocument } from '@svc/contract';
import fc from 'fast-check';

/** A JSON Schema (draft 2020-12) object as the bundled spec writes them. */
export type Schema = Record<string, unknown>;

/** Resolves `#/components/...` references against the bundled document. */
export type Resolve = (schema: unknown) => Schema;

/**
 * A resolver for local references of `document` (`@svc/contract`'s `deref`: chains followed, the
 * siblings of a `$ref`, e.g. `default`, laid over the target as in 2020-12).
 *
 * @example
 * const resolve = resolver(loadDocument());
 * resolve({ $ref: '#/components/schemas/Name' }).pattern; // '^[a-z0-9]…'
 */
export function resolver(document: OpenApiDocument): Resolve {
  return (schema) => deref(document, schema);
}

/** Strings that break most string schemas: huge, unicode, control characters, look-alike ids. */
/**
 * Date-times that look right but name no instant, or lie outside RFC 3339 / the spec's `Timestamp`:
 * leap seconds (RFC 3339 admits `23:59:60`; JavaScript's Date cannot hold it), five-digit years,
 * month 13 and 00, day 00 and 32, February 30, 29 February of a common year, hour 24, minute 60,
 * second 61, lower-case or space separators, offsets other than `Z`, expanded years. Each must be
 * `400 invalid_argument` with a field violation, never a 500 or a success.
 */
export const INVALID_DATE_TIMES: readonly string[] = [
  '2016-12-31T23:59:60Z',
  '2026-06-30T23:59:60.5Z',
  '2026-01-01T00:00:60Z',
  '10000-01-01T00:00:00Z',
  '99999-12-31T23:59:59Z',
  '2026-13-01T00:00:00Z',
  '2026-00-10T00:00:00Z',
  '2026-01-00T00:00:00Z',
  '2026-01-32T00:00:00Z',
  '2026-02-30T00:00:00Z',
  '2027-02-29T00:00:00Z',
  '2026-01-01T24:00:00Z',
  '2026-01-01T23:60:00Z',
  '2026-01-01T23:59:61Z',
  '2026-01-01t00:00:00z',
  '2026-01-01 00:00:00Z',
  '2026-01-01T00:00:00+01:00',
  '2026-01-01T00:00:00',
  '+275760-09-13T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '2026-01-01T00:00:00.1234567890Z',
];

/** Date-times at the edges that ARE valid (must not be a 500 either): first and last representable years, leap day, nanoseconds. */
const EDGE_VALID_DATE_TIMES: readonly string[] = [
  '9999-12-31T23:59:59.999999999Z',
  '0001-01-01T00:00:00Z',
  '0000-01-01T00:00:00Z',
  '2028-02-29T12:00:00.5Z',
];

const NASTY_STRINGS: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '-',
    'a-',
    '-a',
    'A',
    'ÄÖÜ',
    'ｆｕｌｌｗｉｄｔｈ',
    '💻🚀',
    'e\u0301',
    'a\u0000b',
    '\u202etxt.exe',
    '\ud800',
    '../../etc/passwd',
    "'; DROP TABLE computers; --",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a Log4Shell probe, meant literally
    '${jndi:ldap://x}',
    '<script>alert(1)</script>',
    '%00',
    'null',
    'true',
    '0x1f',
    '1e309',
    '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    '01arz3ndektsv4rrffq69g5faviu',
    '01arz3ndektsv4rrffq69g5fav',
  ),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 80 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
  fc.integer({ min: 64, max: 70_000 }).map((n) => 'a'.repeat(n)),
  fc.integer({ min: 1, max: 5_000 }).map((n) => '💥'.repeat(n)),
);

/** Numbers at the edges of what JSON, int32 and JavaScript can hold. */
const NASTY_NUMBERS: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    -1,
    0,
    0.5,
    -0,
    2 ** 31,
    2 ** 31 - 1,
    -(2 ** 31) - 1,
    2 ** 53 + 1,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    1e308,
    5e-324,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Any JSON value at all, for "wrong type" and "extra field" mutations. */
const ANY_JSON: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  NASTY_NUMBERS,
  NASTY_STRINGS,
  fc.array(fc.oneof(fc.integer(), fc.string()), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.integer(), fc.string()), { maxKeys: 3 }),
);

function typeOf(schema: Schema): string | undefined {
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== 'null') as string | undefined;
  if (typeof schema.type === 'string') return schema.type;
  if (schema.properties || schema.patternProperties || schema.additionalProperties !== undefined)
    return 'object';
  if (schema.enum) return typeof (schema.enum as unknown[])[0];
  return undefined;
}

/**
 * Values meant to satisfy `schema`. The generator aims at validity; the caller decides with Ajv
 * (the oracle) whether each value really is valid, so a near miss is still classified correctly.
 *
 * @example
 * fc.sample(validValue(resolve({ $ref: '#/components/schemas/Name' }), resolve), 3);
 */
export function validValue(raw: unknown, resolve: Resolve, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(raw);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  for (const key of ['oneOf', 'anyOf'] as const) {
    const branches = schema[key] as unknown[] | undefined;
    if (branches?.length) return fc.oneof(...branches.map((b) => validValue(b, resolve, depth + 1)));
  }
  if (Array.isArray(schema.allOf)) {
    const merged: Schema = Object.assign({}, ...(schema.allOf as unknown[]).map((part) => resolve(part)));
    const { allOf: _allOf, ...rest } = schema;
    return validValue({ ...rest, ...merged }, resolve, depth + 1);
  }
  switch (typeOf(schema)) {
    case 'string':
      return validString(schema);
    case 'integer': {
      const min = (schema.minimum as number | undefined) ?? -1000;
      const max = Math.min((schema.maximum as number | undefined) ?? 1000, 2 ** 31 - 1);
      return fc.oneof(fc.integer({ min, max: Math.min(max, min + 300) }), fc.integer({ min, max }));
    }
    case 'number':
      return fc.double({
        min: (schema.minimum as number | undefined) ?? -1e6,
        max: (schema.maximum as number | undefined) ?? 1e6,
        noNaN: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const item = schema.items ? validValue(schema.items, resolve, depth + 1) : fc.string();
      return fc.array(item, {
        minLength: (schema.minItems as number | undefined) ?? 0,
        maxLength: Math.min((schema.maxItems as number | undefined) ?? 4, 4),
      });
    }
    case 'object':
      return validObject(schema, resolve, depth);
    default:
      return ANY_JSON;
  }
}

function validString(schema: Schema): fc.Arbitrary<string> {
  const min = (schema.minLength as number | undefined) ?? 0;
  const max = (schema.maxLength as number | undefined) ?? 64;
  if (schema.format === 'date-time')
    return fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .date({
            min: new Date('2000-01-01T00:00:00Z'),
            max: new Date('2099-12-31T23:59:59Z'),
            noInvalidDate: true,
          })
          .map((d) => d.toISOString()),
      },
      { weight: 1, arbitrary: fc.constantFrom(...EDGE_VALID_DATE_TIMES) },
    );
  if (schema.format === 'uri')
    return fc.constantFrom('http://127.0.0.1:8976/callback', 'http://localhost/cb', 'https://example.com/x');
  if (typeof schema.pattern === 'string')
    return fc
      .stringMatching(new RegExp(schema.pattern, 'u'))
      .filter((s) => [...s].length >= min && [...s].length <= max);
  return fc.string({ minLength: min, maxLength: Math.min(max, 64) });
}

/**
 * The entries of a map schema (no `properties`): for each `patternProperties` pattern, keys matching it
 * with values from its sub-schema; otherwise keys from `propertyNames` and values from an
 * `additionalProperties` schema. Undefined when `schema` is not a map.
 */
function mapEntry(
  schema: Schema,
  resolve: Resolve,
  depth: number,
): fc.Arbitrary<[string, unknown]> | undefined {
  if (Object.keys((schema.properties ?? {}) as object).length > 0) return undefined;
  const patterns = Object.entries((schema.patternProperties ?? {}) as Record<string, unknown>);
  if (patterns.length > 0)
    return fc.oneof(
      ...patterns.map(([pattern, sub]) =>
        fc.tuple(fc.stringMatching(new RegExp(pattern, 'u')), validValue(sub, resolve, depth + 1)),
      ),
    );
  const extra = schema.additionalProperties;
  if (!extra || typeof extra !== 'object') return undefined;
  // Property names are strings whether or not `propertyNames` says `type: string`.
  const names = schema.propertyNames as Schema | undefined;
  const keys = names ? validValue({ type: 'string', ...names }, resolve, depth + 1) : fc.string();
  return fc.tuple(keys as fc.Arbitrary<string>, validValue(extra, resolve, depth + 1));
}

function validObject(schema: Schema, resolve: Resolve, depth: number): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const required = new Set((schema.required ?? []) as string[]);
  const entry = mapEntry(schema, resolve, depth);
  if (entry) {
    // A map (e.g. labels). Unique keys, so the entry count is what `maxProperties` sees.
    return fc
      .uniqueArray(entry, {
        selector: ([key]) => key,
        maxLength: Math.min((schema.maxProperties as number | undefined) ?? 4, 4),
      })
      .map((entries) => Object.fromEntries(entries));
  }
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, sub] of Object.entries(properties)) record[name] = validValue(sub, resolve, depth + 1);
  const requiredKeys = Object.keys(properties).filter((k) => required.has(k));
  const minProperties = (schema.minProperties as number | undefined) ?? 0;
  return fc
    .record(record, { requiredKeys })
    .filter((value) => Object.keys(value as object).length >= minProperties);
}

/** One way of breaking a value; the name is printed when a case fails. */
export interface Mutation {
  kind: string;
  value: unknown;
}

/**
 * Values meant to break `schema`: wrong types, missing required and unknown extra fields, strings
 * that are huge, unicode or off-pattern, numbers beyond the bounds. Each carries the name of the
 * mutation. As with {@link validValue}, Ajv decides whether the result is really invalid.
 *
 * @example
 * fc.sample(invalidValue(resolve({ $ref: '#/components/schemas/CreateComputerRequest' }), resolve), 3);
 */
export function invalidValue(raw: unknown, resolve: Resolve, depth = 0): fc.Arbitrary<Mutation> {
  const schema = resolve(raw);
  const wrongType: fc.Arbitrary<Mutation> = ANY_JSON.map((value) => ({ kind: 'wrong-type', value }));
  const type = typeOf(schema);
  const options: fc.Arbitrary<Mutation>[] = [wrongType];
  if (type === 'string' || Array.isArray(schema.enum)) {
    options.push(NASTY_STRINGS.map((value) => ({ kind: 'bad-string', value })));
    const max = schema.maxLength as number | undefined;
    if (max !== undefined) options.push(fc.constant({ kind: 'too-long', value: 'a'.repeat(max + 1) }));
  }
  if (schema.format === 'date-time')
    options.push(fc.constantFrom(...INVALID_DATE_TIMES).map((value) => ({ kind: 'edge-date-time', value })));
  if (type === 'integer' || type === 'number') {
    options.push(NASTY_NUMBERS.map((value) => ({ kind: 'bad-number', value })));
    if (schema.maximum !== undefined)
      options.push(fc.constant({ kind: 'above-maximum', value: (schema.maximum as number) + 1 }));
    if (schema.minimum !== undefined)
      options.push(fc.constant({ kind: 'below-minimum', value: (schema.minimum as number) - 1 }));
  }
  if (type === 'object' && depth < 3) options.push(...objectMutations(schema, resolve, depth));
  return fc.oneof(...options);
}

function objectMutations(schema: Schema, resolve: Resolve, depth: number): fc.Arbitrary<Mutation>[] {
  const properties = Object.keys((schema.properties ?? {}) as object);
  const required = (schema.required ?? []) as string[];
  const base = validValue(schema, resolve, depth) as fc.Arbitrary<Record<string, unknown>>;
  const out: fc.Arbitrary<Mutation>[] = [
    fc
      .tuple(base, fc.string({ minLength: 1, maxLength: 12 }), ANY_JSON)
      .map(([value, key, extra]) => ({ kind: 'extra-field', value: { ...value, [`x_${key}`]: extra } })),
    fc.constant({ kind: 'empty-object', value: {} }),
  ];
  if (required.length > 0)
    out.push(
      fc.tuple(base, fc.constantFrom(...required)).map(([value, key]) => {
        const { [key]: _dropped, ...rest } = value;
        return { kind: `missing-${key}`, value: rest };
      }),
    );
  for (const name of properties) {
    const sub = (schema.properties as Record<string, unknown>)[name];
    out.push(
      fc
        .tuple(base, invalidValue(sub, resolve, depth + 1))
        .map(([value, bad]) => ({ kind: `${name}:${bad.kind}`, value: { ...value, [name]: bad.value } })),
    );
  }
  if (mapEntry(schema, resolve, depth)) {
    // A map: too many entries, or keys and values that break their schemas.
    const max = (schema.maxProperties as number | undefined) ?? 32;
    out.push(
      fc.constant({
        kind: 'too-many-entries',
        value: Object.fromEntries(Array.from({ length: max + 1 }, (_, i) => [`k${i}`, `v${i}`])),
      }),
      NASTY_STRINGS.map((key) => ({ kind: 'bad-key', value: { [key]: 'ok' } })),
      ANY_JSON.map((value) => ({ kind: 'bad-entry', value: { ok: value } })),
    );
  }
  return out;
}
