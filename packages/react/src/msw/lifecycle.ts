// What an operation does to its target, design §4: the spec's state machine (`x-svc-transitions`, keyed by
// `OperationType`), read as the server reads it, so the mock and the server cannot disagree.
import type { KnownValues } from '@svc/client';
import { type components, operationTransitions } from '@svc/contract/browser';
import { BUNDLED_DOCUMENT } from './document.js';

type OperationType = KnownValues<components['schemas']['OperationType']>;
type ComputerState = KnownValues<components['schemas']['ComputerState']>;

/** Where an operation may start from, the state it holds its target in, and where it leaves it. */
export interface Transition {
  /** The states the target must be in; an empty list for a create (the target is new). */
  from: readonly ComputerState[];
  /** The target's state while the operation runs; none for a command, which leaves the state alone. */
  during?: ComputerState;
  /** The target's state when the operation succeeds (the mock has no engine: a recover ends `stopped`). */
  to?: ComputerState;
}

/**
 * Every operation type of the spec and what it does to its computer.
 *
 * @example
 * import { TRANSITIONS } from '@svc/react/msw';
 * TRANSITIONS['computer.stop'].to; // 'stopped'
 */
export const TRANSITIONS = operationTransitions(BUNDLED_DOCUMENT) as Readonly<
  Record<OperationType, Transition>
>;

/** The transition of an operation type; an unknown type (design §12) changes nothing. */
export function transitionOf(type: string): Transition {
  return (TRANSITIONS as Record<string, Transition>)[type] ?? { from: [] };
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * Makes ids as the server does (design §1): 27 characters of Crockford base32, 10 of milliseconds then
 * 17 from a seeded generator, so a mock's ids are the same on every run with the same clock.
 *
 * @example
 * import { idMaker } from '@svc/react/msw';
 * const newId = idMaker(1);
 * newId(Date.parse('2026-11-03T10:00:00Z')).length; // 27
 */
export function idMaker(seed: number): (now: number) => string {
  let state = seed >>> 0;
  const next = () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) % 32;
  };
  let last = '';
  return (now) => {
    let time = '';
    for (let ms = Math.max(0, Math.floor(now)), i = 0; i < 10; i += 1, ms = Math.floor(ms / 32))
      time = ALPHABET[ms % 32] + time;
    let id = '';
    do {
      id = time;
      for (let i = 0; i < 17; i += 1) id += ALPHABET[next()];
    } while (id <= last); // monotonic within a millisecond, as the server's are
    last = id;
    return id;
  };
}
