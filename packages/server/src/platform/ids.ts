import { randomFillSync } from 'node:crypto';

/** Lowercase Crockford base32: no i, l, o or u, so an id never reads as a word or a look-alike digit. */
const ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** The id pattern of design §1: 27 characters of {@link ID_ALPHABET}. */
export const ID_PATTERN = /^[0-9a-hjkmnp-tv-z]{27}$/;

/** A DNS label (design §1): lowercase letters, digits and hyphens, no hyphen first or last, 1–63 long. */
const NAME_PATTERN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

const TIME_CHARS = 10;
const RANDOM_CHARS = 17;
/** 32^10 ms ≈ year 10889: the time part never overflows in practice, but we refuse rather than wrap. */
const MAX_TIME = 32 ** TIME_CHARS - 1;

/** Thrown when the 85 random bits overflow within one millisecond (2^85 ids in 1 ms: a bug, not load). */
export class IdOverflowError extends Error {
  override name = 'IdOverflowError';
}

/** Where an id factory gets its time and randomness; injectable so tests are deterministic. */
export interface IdSource {
  now(): number;
  /** Fills `digits` with values 0–31 from a CSPRNG. */
  random(digits: Uint8Array): void;
}

const cryptoSource: IdSource = {
  now: () => Date.now(),
  random(digits) {
    randomFillSync(digits);
    for (let i = 0; i < digits.length; i++) digits[i] = (digits[i] as number) & 31;
  },
};

/**
 * A ULID-style id minter: 10 chars of Unix-ms time then 17 random chars (85 bits). Within one
 * millisecond, or when the clock steps back, it increments the previous random part instead of
 * drawing a new one, so ids from one factory always sort in minting order.
 *
 * @example
 * const mint = createIdFactory();
 * const a = mint();
 * const b = mint();
 * console.log(a < b); // true
 */
export function createIdFactory(source: IdSource = cryptoSource): () => string {
  let lastTime = -1;
  const digits = new Uint8Array(RANDOM_CHARS);
  return () => {
    let time = source.now();
    if (!Number.isInteger(time) || time < 0 || time > MAX_TIME)
      throw new RangeError(`id time out of range: ${time}`);
    if (time <= lastTime) {
      time = lastTime;
      increment(digits);
    } else {
      source.random(digits);
      lastTime = time;
    }
    let head = '';
    for (let i = 0, t = time; i < TIME_CHARS; i++, t = Math.floor(t / 32)) head = ID_ALPHABET[t % 32] + head;
    let tail = '';
    for (const digit of digits) tail += ID_ALPHABET[digit];
    return head + tail;
  };
}

function increment(digits: Uint8Array): void {
  for (let i = digits.length - 1; i >= 0; i--) {
    if ((digits[i] as number) < 31) {
      digits[i] = (digits[i] as number) + 1;
      return;
    }
    digits[i] = 0;
  }
  throw new IdOverflowError('random part of the id overflowed within one millisecond');
}

/**
 * Mints a new id (design §1) from the process-wide factory.
 *
 * @example
 * const id = newId(); // e.g. '01jc4s0m8k3v7w2x9y5z6a1b2c3' — 27 chars, sorts by creation time
 */
export const newId: () => string = createIdFactory();

/**
 * Whether `value` has the form of an id.
 *
 * @example
 * isId(newId()); // true
 * isId('web-1'); // false
 */
export function isId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/**
 * Whether `value` is an acceptable name: a DNS label that does not have the form of an id, so a path
 * segment that takes "an id or a name" is never ambiguous (design §1).
 *
 * @example
 * isName('web-1'); // true
 * isName('Web'); // false: uppercase
 * isName(newId()); // false: looks like an id
 */
export function isName(value: string): boolean {
  return NAME_PATTERN.test(value) && !ID_PATTERN.test(value);
}

/**
 * The Unix-ms time an id was minted at, or `undefined` when `value` is not an id.
 *
 * @example
 * idTime(newId()); // ≈ Date.now()
 */
export function idTime(value: string): number | undefined {
  if (!isId(value)) return undefined;
  let time = 0;
  for (let i = 0; i < TIME_CHARS; i++) time = time * 32 + ID_ALPHABET.indexOf(value[i] as string);
  return time;
}
