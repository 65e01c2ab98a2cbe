// The length range read from a pattern, checked against the pattern itself: the strings at each end
// of the range match, the ones just past it do not.
import { describe, expect, test } from 'vitest';
import { impliedBounds, patternLength } from '../src/pattern-length.js';

describe('patternLength', () => {
  test.each<[string, [number, number], string, string | undefined]>([
    ['^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$', [1, 63], 'a', `a${'b'.repeat(61)}c`],
    ['^[\\x20-\\x7E]{1,255}$', [1, 255], ' ', '~'.repeat(255)],
    ['^[0-9a-hjkmnp-tv-z]{27}$', [27, 27], '0'.repeat(27), '0'.repeat(27)],
    [
      '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z$',
      [20, 30],
      '2026-11-10T08:00:00Z',
      '2026-11-10T08:00:00.123456789Z',
    ],
    ['^(?:ab|c)+x?$', [1, Infinity], 'c', undefined],
    ['^[^\\x00]*$', [0, Infinity], '', undefined],
    ['^a{2,}b{0}$', [2, Infinity], 'aa', undefined],
  ])('%s matches %j characters', (pattern, range, shortest, longest) => {
    expect(patternLength(pattern)).toEqual(range);
    const regex = new RegExp(pattern, 'u');
    expect(regex.test(shortest)).toBe(true);
    expect(shortest).toHaveLength(range[0]);
    if (range[0] > 0) expect(regex.test(shortest.slice(1))).toBe(false);
    if (longest !== undefined) {
      expect(longest).toHaveLength(range[1]);
      expect(regex.test(longest)).toBe(true);
      expect(regex.test(`${longest}${longest.at(-1)}`)).toBe(false);
    }
  });

  test.each([
    'a{1,3}', // not anchored
    '^a$|^b$', // anchors inside
    '^(?=a)a$', // lookahead
    '^(a)\\1$', // back-reference
    '^a+?$', // lazy
    '^\\bword$', // boundary
    '^\\p{L}+$', // property escape
    '^[a-z$', // unclosed class
  ])('%s is not read (nothing is inferred from it)', (pattern) => {
    expect(patternLength(pattern)).toBeUndefined();
  });
});

describe('impliedBounds', () => {
  const name = '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$';
  test.each<[Record<string, unknown>, string[]]>([
    [{ type: 'string', minLength: 1, maxLength: 63, pattern: name }, ['minLength', 'maxLength']],
    [{ type: 'string', minLength: 1, maxLength: 40, pattern: name }, ['minLength']],
    [{ type: 'string', minLength: 2, maxLength: 63, pattern: name }, ['maxLength']],
    [{ type: 'string', minLength: 27, maxLength: 27, pattern: '^[0-9a-z]{27}$' }, ['maxLength']],
    [{ type: 'string', minLength: 1, maxLength: 512, pattern: '^[A-Za-z0-9_-]+$' }, ['minLength']],
    [{ type: 'string', minLength: 1, maxLength: 10 }, []],
    [{ type: 'string', maxLength: 10, pattern: '^(?=x).*$' }, []],
  ])('%j: %j', (schema, implied) => {
    expect(impliedBounds(schema)).toEqual(implied);
  });
});
