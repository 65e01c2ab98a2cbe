import type { ErrorObject } from 'ajv';

/** One entry of `error.details.field_violations` (design §9). */
export interface FieldViolation {
  /** Where: `body.labels.env`, `body.items[2].name`, `query.limit`, `path.workspace`, `header.Idempotency-Key`. */
  field: string;
  description: string;
}

/**
 * A field path from a location and the keys below it: object keys joined with `.`, array indexes as `[i]`.
 *
 * @example
 * fieldPath('query', ['limit']); // 'query.limit'
 * fieldPath('', ['labels', 'env']); // 'labels.env': request-body fields have no prefix (FieldViolation in the spec)
 */
export function fieldPath(base: string, keys: readonly (string | number)[]): string {
  let out = base;
  for (const key of keys) {
    const segment = typeof key === 'number' ? key : printable(key, MAX_SEGMENT);
    out += typeof segment === 'number' ? `[${segment}]` : out === '' ? segment : `.${segment}`;
  }
  return printable(out, MAX_FIELD);
}

/**
 * Field names come from the caller (unknown fields, label keys), so an error must not echo them back
 * unbounded or with control characters: the spec's FieldViolation caps `field` at 256 printable characters.
 */
const MAX_SEGMENT = 64;
const MAX_FIELD = 256;
const MAX_DESCRIPTION = 1024;

function printable(text: string, max: number): string {
  let clean = '';
  for (const char of text) {
    const code = char.charCodeAt(0);
    clean += code < 0x20 || code === 0x7f ? '\ufffd' : char;
    if (clean.length > max) break;
  }
  return clean.length <= max ? clean : `${clean.slice(0, max - 1)}\u2026`;
}

/**
 * Turns Ajv errors into field violations. The data is walked along each error's JSON pointer so an
 * array index prints as `[i]` and an object key that looks like a number stays `.key`. The error about
 * the offending property itself names it: an unknown field (`additionalProperties: false`), a missing
 * one (`required`) and a bad map key (`propertyNames`) all point at `parent.field`.
 */
export function toViolations(
  errors: readonly ErrorObject[] | null | undefined,
  data: unknown,
  base: string,
): FieldViolation[] {
  const out: FieldViolation[] = [];
  const seen = new Set<string>();
  for (const error of errors ?? []) {
    const keys = keysOf(error.instancePath, data);
    let description = error.message ?? 'is invalid';
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'required') {
      keys.push(String(params.missingProperty));
      description = 'is required';
    } else if (error.keyword === 'additionalProperties') {
      keys.push(String(params.additionalProperty));
      description = 'is not a known field';
    } else if (error.keyword === 'propertyNames') {
      continue; // the error of the name schema itself (below) says why, and names the key
    } else if (error.propertyName !== undefined) {
      keys.push(error.propertyName);
      description = `key ${description}`;
    } else if (error.keyword === 'enum') {
      description = `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    }
    const field = fieldPath(base, keys) || 'body';
    const key = `${field}\u0000${description}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, description: printable(description, MAX_DESCRIPTION) });
  }
  return out;
}

function keysOf(pointer: string, data: unknown): (string | number)[] {
  if (pointer === '') return [];
  const keys: (string | number)[] = [];
  let current = data;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) {
      keys.push(Number(key));
      current = current[Number(key)];
    } else {
      keys.push(key);
      current = (current as Record<string, unknown> | undefined)?.[key];
    }
  }
  return keys;
}
