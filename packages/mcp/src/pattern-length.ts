/**
 * The lengths of the strings an anchored regular expression (`^…$`) can match, `[min, max]` (`max` is
 * `Infinity` when unbounded), or `undefined` when the pattern uses anything this reading does not
 * know (lookarounds, back-references, an unanchored end…): then nothing is inferred from it.
 *
 * Understood: literals and escapes (`\d`, `\x20`, `\.`), character classes, groups (`(…)`, `(?:…)`),
 * alternation, and the quantifiers `?`, `*`, `+`, `{n}`, `{m,}`, `{m,n}`. Each character atom counts
 * one: a code point when the pattern is read with Unicode semantics, else a UTF-16 unit (so a maximum
 * holds in code points either way; see {@link impliedBounds} for what follows for a minimum).
 *
 * @example
 * patternLength('^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'); // [1, 63]
 * patternLength('^[A-Za-z0-9_-]+$'); // [1, Infinity]
 */
export function patternLength(pattern: string): [number, number] | undefined {
  if (!pattern.startsWith('^') || !pattern.endsWith('$') || pattern.endsWith('\\$')) return undefined;
  const reader = { text: pattern.slice(1, -1), at: 0 };
  try {
    const range = alternation(reader);
    return reader.at === reader.text.length ? range : undefined;
  } catch {
    return undefined;
  }
}

type Reader = { text: string; at: number };
type Range = [number, number];

const unknown = (): never => {
  throw new Error('not understood');
};

function alternation(r: Reader): Range {
  let range = sequence(r);
  while (r.text[r.at] === '|') {
    r.at++;
    const other = sequence(r);
    range = [Math.min(range[0], other[0]), Math.max(range[1], other[1])];
  }
  return range;
}

function sequence(r: Reader): Range {
  const range: Range = [0, 0];
  while (r.at < r.text.length && r.text[r.at] !== '|' && r.text[r.at] !== ')') {
    const [min, max] = quantified(r, atom(r));
    range[0] += min;
    range[1] += max;
  }
  return range;
}

/** One character (escape, class or literal) or a group: its length range before a quantifier. */
function atom(r: Reader): Range {
  const c = r.text[r.at];
  if (c === '(') {
    r.at++;
    if (r.text[r.at] === '?') {
      if (r.text.slice(r.at, r.at + 2) !== '?:') unknown(); // lookarounds and named groups
      r.at += 2;
    }
    const inner = alternation(r);
    if (r.text[r.at] !== ')') unknown();
    r.at++;
    return inner;
  }
  if (c === '[') {
    const end = classEnd(r.text, r.at);
    r.at = end + 1;
    return [1, 1];
  }
  if (c === '\\') {
    const next = r.text[r.at + 1];
    if (next === undefined || /[1-9bBkpPu]/.test(next)) unknown(); // back-references, boundaries, properties
    r.at += next === 'x' ? 4 : 2;
    return [1, 1];
  }
  if (c === '^' || c === '$' || c === '*' || c === '+' || c === '?' || c === '{') unknown();
  r.at++;
  return [1, 1];
}

function classEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === ']') return i;
  }
  return unknown();
}

function quantified(r: Reader, [min, max]: Range): Range {
  const c = r.text[r.at];
  let low = 1;
  let high = 1;
  if (c === '?' || c === '*' || c === '+') {
    r.at++;
    [low, high] = c === '?' ? [0, 1] : c === '*' ? [0, Infinity] : [1, Infinity];
  } else if (c === '{') {
    const match = /^\{(\d+)(,(\d*))?\}/.exec(r.text.slice(r.at));
    if (!match) unknown();
    const [whole, from, comma, to] = match as RegExpExecArray;
    r.at += whole.length;
    low = Number(from);
    high = comma === undefined ? low : to === '' ? Infinity : Number(to);
  } else return [min, max];
  if (r.text[r.at] === '?' || r.text[r.at] === '+') unknown(); // lazy or possessive
  return [min * low, max === 0 || high === 0 ? 0 : max * high];
}

/**
 * The `minLength`/`maxLength` of a string schema that its `pattern` already enforces, so a listing
 * may leave them out without accepting anything more: `maxLength` when the pattern cannot match
 * longer strings, and `minLength: 1` when it cannot match the empty one (a larger minimum is kept:
 * without Unicode semantics an atom may match half of a character).
 *
 * @example
 * impliedBounds({ type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$' });
 * // ['minLength', 'maxLength']
 */
export function impliedBounds(schema: Record<string, unknown>): ('minLength' | 'maxLength')[] {
  if (typeof schema.pattern !== 'string') return [];
  const range = patternLength(schema.pattern);
  if (!range) return [];
  const implied: ('minLength' | 'maxLength')[] = [];
  if (schema.minLength === 1 && range[0] >= 1) implied.push('minLength');
  if (typeof schema.maxLength === 'number' && range[1] <= schema.maxLength) implied.push('maxLength');
  return implied;
}
