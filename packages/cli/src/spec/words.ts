// What a value of a schema must be, in words a person types from: the answer of `--help` for a JSON
// flag and of every refused value. Read from the schema itself (type, bounds, enum, fields, unit in the
// field's name); only regular expressions need words kept here, in PATTERN_WORDS, keyed by the
// pattern exactly as the spec writes it (test/spec/words.test.ts fails when a pattern a request can
// carry has none).
import { deref, type OpenApiDocument } from '@svc/contract';
import type { SchemaObject } from './schema.js';

/**
 * Every pattern a request of the spec can carry, in words. Keyed by the pattern string: a new pattern
 * in `spec/` without words here fails `test/spec/words.test.ts`.
 */
export const PATTERN_WORDS: Readonly<Record<string, string>> = {
  '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$':
    "lowercase letters, digits and '-', 1 to 63 characters, starting and ending with a letter or digit",
  '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?=[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$':
    "key=value, each of lowercase letters, digits and '-' (1 to 63 characters, starting and ending with a letter or digit)",
  '^[0-9a-hjkmnp-tv-z]{27}$': 'an id: 27 digits and lowercase letters (no i, l, o or u)',
  '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z$':
    'a UTC time such as 2026-11-10T18:00:00Z (RFC 3339)',
  '^[\\x20-\\x7E]{1,255}$': '1 to 255 printable ASCII characters',
  '^[A-Za-z0-9._~-]{43,128}$': "43 to 128 letters, digits, '.', '_', '~' and '-'",
  '^[A-Za-z0-9_-]+$': "letters, digits, '_' and '-', as the last page's next_cursor gave it",
  '^[^\\x00-\\x1F\\x7F]+$': 'at least one character, and no control characters (no newline, no tab)',
  '^[^\\x00-\\x1f]*$': 'no control characters (no newline, no tab)',
  '^[^\\x00]*$': 'no NUL character',
  '^/[^\\x00]*$': 'an absolute path (starting with /), with no NUL character',
  '^[0-9]+$': 'digits only',
  '^[a-z]+(,[a-z]+){0,8}$': 'up to 9 lowercase words separated by commas, such as running,failed',
  '^[0-7]{3,4}$': '3 or 4 octal digits, such as 0644 or 755',
  '^https?://[^\\s@#]+$': "an http:// or https:// URL, with no space, '@' or '#'",
  '^(\\*|[a-z_]+\\.[a-z_]+)$': 'an event type such as computer.created, or * for every type',
  '^[a-z_]+\\.[a-z_]+$': 'an event type such as computer.created',
  '^[A-Za-z0-9_]+(\\+[A-Za-z0-9_]+)*$': "key names joined by '+', such as ctrl+s or Return",
  '^[A-Za-z_][A-Za-z0-9_]{0,255}$':
    "an environment variable's name: letters, digits and '_', not starting with a digit, at most 256",
};

/** Units a field's name can end in (`idle_timeout_seconds`): a whole number of them. */
const UNITS = ['seconds', 'bytes', 'minutes', 'hours', 'days'];

const typesOf = (schema: SchemaObject): string[] =>
  Array.isArray(schema.type)
    ? (schema.type as string[])
    : typeof schema.type === 'string'
      ? [schema.type]
      : Array.isArray(schema.enum)
        ? [...new Set((schema.enum as unknown[]).map((v) => (v === null ? 'null' : typeof v)))]
        : [];

const between = (min: unknown, max: unknown, what: string) =>
  typeof min === 'number' && typeof max === 'number'
    ? min === max
      ? `${min} ${what}`
      : `${min} to ${max} ${what}`
    : typeof min === 'number'
      ? `at least ${min} ${what}`
      : typeof max === 'number'
        ? `at most ${max} ${what}`
        : '';

/** The fields of an object schema, by name. */
export function fieldsOf(document: OpenApiDocument, schema: SchemaObject): Record<string, SchemaObject> {
  return Object.fromEntries(
    Object.entries((deref(document, schema).properties ?? {}) as Record<string, unknown>).map(
      ([name, value]) => [name, deref(document, value)],
    ),
  );
}

/**
 * What a value of `schema` must be, in words: `a whole number of seconds from 60 to 2592000, or null`.
 * `name` is the field's (its unit is read from it).
 *
 * @example
 * expected(document, { type: ['integer', 'null'], minimum: 60 }, 'idle_timeout_seconds');
 * // 'a whole number of seconds of at least 60, or null'
 */
export function expected(document: OpenApiDocument, raw: unknown, name = ''): string {
  const schema = deref(document, raw);
  const nullable = typesOf(schema).includes('null');
  const orNull = (text: string) => (nullable ? `${text}, or null` : text);
  if ('const' in schema) return JSON.stringify(schema.const);
  const choices = Array.isArray(schema.enum) ? (schema.enum as unknown[]).filter((v) => v !== null) : [];
  if (choices.length > 0) return orNull(`one of ${choices.map((v) => String(v)).join(', ')}`);
  const type = typesOf(schema).find((t) => t !== 'null');
  switch (type) {
    case 'integer':
    case 'number': {
      const unit = UNITS.find((u) => name.endsWith(`_${u}`));
      const what = `${type === 'integer' ? 'a whole number' : 'a number'}${unit ? ` of ${unit}` : ''}`;
      const { minimum: min, maximum: max } = schema;
      const range =
        typeof min === 'number' && typeof max === 'number'
          ? ` from ${min} to ${max}`
          : typeof min === 'number'
            ? ` of at least ${min}`
            : typeof max === 'number'
              ? ` of at most ${max}`
              : '';
      return orNull(what + range);
    }
    case 'boolean':
      return orNull('true or false');
    case 'string': {
      const words = typeof schema.pattern === 'string' ? PATTERN_WORDS[schema.pattern] : undefined;
      if (words) return orNull(words);
      if (schema.format === 'date-time')
        return orNull(PATTERN_WORDS['^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z$'] as string);
      const length = between(schema.minLength, schema.maxLength, 'characters');
      const kind =
        schema.format === 'uri' ? 'a URL' : schema.format === 'email' ? 'an email address' : 'text';
      const pattern = typeof schema.pattern === 'string' ? ` matching ${schema.pattern}` : '';
      return orNull(`${kind}${length ? ` of ${length}` : ''}${pattern}`);
    }
    case 'array': {
      const count = between(schema.minItems, schema.maxItems, 'items');
      return orNull(`a list${count ? ` of ${count}` : ''}, each ${expected(document, schema.items)}`);
    }
    case 'object': {
      const fields = Object.keys(fieldsOf(document, schema));
      if (fields.length > 0) return orNull(`an object with the fields ${fields.join(', ')}`);
      const values = schema.additionalProperties ?? Object.values(schema.patternProperties ?? {})[0];
      return orNull(
        values && typeof values === 'object'
          ? `an object of keys to values, each ${expected(document, values)}`
          : 'an object',
      );
    }
    default:
      return orNull('a value');
  }
}

/** What is wrong with a value, and where in it (field names and list indexes from the top). */
export interface Problem {
  at: (string | number)[];
  /** The problem in words, without the place: `must be a whole number of seconds …`. */
  says: string;
}

/**
 * The distance between two words counting a swap of neighbours as one edit (optimal string alignment),
 * so `defualt` is one edit from `default`.
 *
 * @example
 * editDistance('defualt', 'default'); // 1
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 0; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
    }
  return (d[a.length] as number[])[b.length] as number;
}

/**
 * The word of `candidates` nearest to `word` (case aside), when it is near enough to be a slip: at most
 * a third of its letters off (at least one), or a part of the candidate (`idle_timeout` of
 * `idle_timeout_seconds`). Undefined when none is.
 *
 * @example
 * nearest('defualt', ['default', 'staging']); // 'default'
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    const distance = editDistance(typed, other);
    const part = typed.length >= 3 && (other.includes(typed) || typed.includes(other));
    if (distance > Math.max(1, Math.floor(typed.length / 3)) && !part) continue;
    if (!best || distance < best.distance) best = { candidate, distance };
  }
  return best?.candidate;
}

const quoted = (value: unknown) => JSON.stringify(value);

/**
 * The first thing wrong with `value` as a value of `schema`, in words, or undefined when the schema's
 * type, enum, bounds, pattern and fields accept it. Combinators (`oneOf`…) are not judged here: the
 * server is. `name` is the value's field name (for its unit).
 *
 * @example
 * problemOf(document, lifetimeSchema, { idle_timeout: 1800 });
 * // { at: ['idle_timeout'], says: 'is not a field; did you mean "idle_timeout_seconds"? The fields: …' }
 */
export function problemOf(
  document: OpenApiDocument,
  raw: unknown,
  value: unknown,
  name = '',
): Problem | undefined {
  const schema = deref(document, raw);
  if (schema.oneOf || schema.anyOf || schema.allOf || schema.not) return undefined;
  const must = () => ({ at: [], says: `must be ${expected(document, schema, name)} (not ${quoted(value)})` });
  const types = typesOf(schema);
  const actual =
    value === null
      ? 'null'
      : Array.isArray(value)
        ? 'array'
        : typeof value === 'number' && Number.isInteger(value)
          ? 'integer'
          : typeof value;
  if (types.length > 0 && !types.includes(actual) && !(actual === 'integer' && types.includes('number')))
    return must();
  if ('const' in schema && schema.const !== value) return must();
  if (Array.isArray(schema.enum) && !schema.enum.includes(value as never)) return must();
  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof schema.minLength === 'number' && length < schema.minLength) return must();
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) return must();
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) return must();
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) return must();
    if (typeof schema.maximum === 'number' && value > schema.maximum) return must();
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) return must();
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) return must();
    if (schema.uniqueItems === true && new Set(value.map((v) => JSON.stringify(v))).size < value.length)
      return { at: [], says: 'must not name the same item twice' };
    for (const [index, item] of value.entries()) {
      const problem = problemOf(document, schema.items, item);
      if (problem) return { at: [index, ...problem.at], says: problem.says };
    }
  }
  if (actual === 'object') return objectProblem(document, schema, value as Record<string, unknown>);
  return undefined;
}

function objectProblem(
  document: OpenApiDocument,
  schema: SchemaObject,
  value: Record<string, unknown>,
): Problem | undefined {
  const fields = fieldsOf(document, schema);
  const names = Object.keys(fields);
  const patterns = Object.entries((schema.patternProperties ?? {}) as Record<string, unknown>);
  for (const [key, item] of Object.entries(value)) {
    if (key in fields) {
      const problem = problemOf(document, fields[key], item, key);
      if (problem) return { at: [key, ...problem.at], says: problem.says };
      continue;
    }
    const matching = patterns.find(([pattern]) => new RegExp(pattern, 'u').test(key));
    if (matching) {
      const problem = problemOf(document, matching[1], item, key);
      if (problem) return { at: [key, ...problem.at], says: problem.says };
      continue;
    }
    if (patterns.length > 0 && schema.additionalProperties === false) {
      const [pattern] = patterns[0] as [string, unknown];
      return {
        at: [key],
        says: `is not a valid key: a key must be ${PATTERN_WORDS[pattern] ?? `matching ${pattern}`}`,
      };
    }
    if (typeof schema.additionalProperties === 'object') {
      const problem = problemOf(document, schema.additionalProperties, item, key);
      if (problem) return { at: [key, ...problem.at], says: problem.says };
      continue;
    }
    if (schema.additionalProperties === false) {
      const near = nearest(key, names);
      return {
        at: [key],
        says: `is not a field${near ? `; did you mean "${near}"?` : '.'}${names.length > 0 ? ` The fields: ${names.join(', ')}.` : ''}`,
      };
    }
  }
  for (const required of (schema.required ?? []) as string[])
    if (!(required in value))
      return { at: [required], says: `is required: ${expected(document, fields[required], required)}` };
  const count = Object.keys(value).length;
  if (typeof schema.minProperties === 'number' && count < schema.minProperties)
    return { at: [], says: `must give at least ${schema.minProperties} of the fields ${names.join(', ')}` };
  if (typeof schema.maxProperties === 'number' && count > schema.maxProperties)
    return { at: [], says: `must have at most ${schema.maxProperties} entries` };
  return undefined;
}

/**
 * A place in a value as the server's field violations write it: `lifetime.idle_timeout_seconds`,
 * `argv[2]`.
 *
 * @example
 * placeOf(['lifetime', 'idle_timeout_seconds']); // 'lifetime.idle_timeout_seconds'
 */
export function placeIn(at: readonly (string | number)[]): string {
  return at.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? key : `.${key}`)).join('');
}
