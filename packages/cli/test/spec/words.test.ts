import {
  deref,
  listOperations,
  loadDocument,
  type OpenApiDocument,
  operationParameters,
  requestBody,
} from '@svc/contract';
import { describe, expect, test } from 'vitest';
import { expected, nearest, PATTERN_WORDS, problemOf } from '../../src/spec/words.js';

const document = loadDocument();

/** Every pattern a request can carry: its parameters' and its body's, through every field, item and map key. */
function requestPatterns(doc: OpenApiDocument): Map<string, string> {
  const found = new Map<string, string>();
  const seen = new Set<unknown>();
  const walk = (raw: unknown, where: string) => {
    if (!raw || typeof raw !== 'object' || seen.has(raw)) return;
    seen.add(raw);
    const schema = deref(doc, raw);
    if (typeof schema.pattern === 'string' && !found.has(schema.pattern)) found.set(schema.pattern, where);
    for (const [name, value] of Object.entries((schema.properties ?? {}) as Record<string, unknown>))
      walk(value, `${where}.${name}`);
    for (const [pattern, value] of Object.entries(
      (schema.patternProperties ?? {}) as Record<string, unknown>,
    )) {
      if (!found.has(pattern)) found.set(pattern, `${where} (a key)`);
      walk(value, `${where}.*`);
    }
    for (const key of ['items', 'additionalProperties', 'propertyNames']) walk(schema[key], `${where}[]`);
    for (const key of ['oneOf', 'anyOf', 'allOf'])
      for (const branch of (schema[key] ?? []) as unknown[]) walk(branch, where);
  };
  for (const op of listOperations(doc)) {
    for (const parameter of operationParameters(doc, op))
      walk(parameter.schema, `${op.operationId} ${parameter.in} ${parameter.name}`);
    walk(requestBody(doc, op)?.schema, `${op.operationId} body`);
  }
  return found;
}

describe('patterns in words', () => {
  const patterns = requestPatterns(document);

  test('the spec’s requests carry patterns (so the check below means something)', () => {
    expect(patterns.size).toBeGreaterThan(10);
  });

  test.each([...patterns].map(([pattern, where]) => [pattern, where] as const))(
    'the pattern %s (%s) has words',
    (pattern) => {
      expect(PATTERN_WORDS[pattern], `add words for ${pattern} to PATTERN_WORDS`).toBeTruthy();
    },
  );

  test('no words are kept for a pattern no request carries', () => {
    expect(Object.keys(PATTERN_WORDS).filter((pattern) => !patterns.has(pattern))).toEqual([]);
  });

  test('a test of the table: a pattern added to a request without words fails it', () => {
    const changed = structuredClone(document);
    const name = (changed.components.schemas as Record<string, Record<string, unknown>>).Name as Record<
      string,
      unknown
    >;
    name.pattern = '^[a-z]+$';
    expect([...requestPatterns(changed).keys()].filter((p) => !PATTERN_WORDS[p])).toEqual(['^[a-z]+$']);
  });
});

const schemas = document.components.schemas as Record<string, unknown>;
const lifetime = schemas.ComputerLifetimeRequest;

describe('what a value must be, and what is wrong with one, in words', () => {
  test.each<[string, { schema: unknown; name?: string; want: string }]>([
    [
      'a number of seconds, or null',
      {
        schema: { type: ['integer', 'null'], minimum: 60, maximum: 2592000 },
        name: 'idle_timeout_seconds',
        want: 'a whole number of seconds from 60 to 2592000, or null',
      },
    ],
    ['an enum', { schema: schemas.ComputerEndAction, want: 'one of stop, delete' }],
    [
      'a name (its pattern)',
      {
        schema: schemas.Name,
        want: "lowercase letters, digits and '-', 1 to 63 characters, starting and ending with a letter or digit",
      },
    ],
    ['a boolean', { schema: { type: 'boolean' }, want: 'true or false' }],
    [
      'text of bounded length',
      { schema: { type: 'string', maxLength: 500 }, want: 'text of at most 500 characters' },
    ],
    [
      'an object',
      { schema: lifetime, want: 'an object with the fields idle_timeout_seconds, expires_at, on_end' },
    ],
  ])('%s', (_name, { schema, name, want }) => {
    expect(expected(document, schema, name)).toBe(want);
  });

  test.each<[string, { value: unknown; want: { at: (string | number)[]; says: RegExp } | undefined }]>([
    ['a good value', { value: { idle_timeout_seconds: 1800, on_end: 'delete' }, want: undefined }],
    [
      'a field of the wrong type',
      {
        value: { idle_timeout_seconds: '30m' },
        want: {
          at: ['idle_timeout_seconds'],
          says: /^must be a whole number of seconds .*, or null \(not "30m"\)$/,
        },
      },
    ],
    [
      'a number out of bounds',
      {
        value: { idle_timeout_seconds: 5 },
        want: { at: ['idle_timeout_seconds'], says: /from 60 to 2592000/ },
      },
    ],
    [
      'an unknown field, near a known one',
      {
        value: { idle_timeout: 1800 },
        want: {
          at: ['idle_timeout'],
          says: /^is not a field; did you mean "idle_timeout_seconds"\? The fields: idle_timeout_seconds, expires_at, on_end\.$/,
        },
      },
    ],
    [
      'a value outside the enum',
      { value: { on_end: 'halt' }, want: { at: ['on_end'], says: /one of stop, delete/ } },
    ],
    ['an empty object', { value: {}, want: { at: [], says: /at least 1 of the fields/ } }],
    ['not an object', { value: 1800, want: { at: [], says: /^must be an object with the fields/ } }],
  ])('%s', (_name, { value, want }) => {
    const problem = problemOf(document, lifetime, value);
    if (!want) expect(problem).toBeUndefined();
    else {
      expect(problem?.at).toEqual(want.at);
      expect(problem?.says).toMatch(want.says);
    }
  });

  test('a map key off its pattern is said in words', () => {
    expect(problemOf(document, schemas.Labels, { Team: 'a' })).toEqual({
      at: ['Team'],
      says: expect.stringContaining("a key must be lowercase letters, digits and '-'"),
    });
  });

  test.each<[string, string[], string | undefined]>([
    ['defualt', ['default', 'demo'], 'default'],
    ['bxo', ['box', 'idle'], 'box'],
    ['Box', ['box'], 'box'],
    ['idle_timeout', ['idle_timeout_seconds', 'expires_at'], 'idle_timeout_seconds'],
    ['production', ['default', 'demo'], undefined],
  ])('the name nearest to %s', (word, candidates, want) => {
    expect(nearest(word, candidates)).toBe(want);
  });
});
