// The state machine of the computers (design §4), read from the one place the spec writes it: the
// `x-svc-transitions` at the root of the document, keyed by `OperationType`. The server's worker and the mock of @svc/react both
// take it from here, so there is nothing to keep in step.
import type { OpenApiDocument } from './document.js';
import { enumValues } from './reader.js';
import type { JsonObject } from './refs.js';

/** The extension at the document's root that holds the state machine. */
export const TRANSITIONS_EXTENSION = 'x-svc-transitions';

/** What one operation type does to its computer. */
export interface Transition {
  /** The states the computer must be in; empty for a create (the computer is new). */
  readonly from: readonly string[];
  /** The computer's state while the operation runs; none when the type leaves the state alone. */
  readonly during?: string;
  /** The computer's state when the operation succeeds (a recover's default: its engine decides). */
  readonly to?: string;
}

/**
 * Every operation type's {@link Transition}, keyed by type. Throws when the extension is missing, names
 * a type that is not an `OperationType`, leaves one out, or names a state that is not a
 * `ComputerState`, so a spec that breaks the state machine fails where it is read.
 *
 * @example
 * import { loadDocument, operationTransitions } from '@svc/contract';
 * operationTransitions(loadDocument())['computer.stop']; // { from: ['running'], during: 'stopping', to: 'stopped' }
 */
export function operationTransitions(document: OpenApiDocument): Readonly<Record<string, Transition>> {
  const declared = (document as unknown as JsonObject)[TRANSITIONS_EXTENSION] as
    | Record<string, JsonObject>
    | undefined;
  if (!declared || typeof declared !== 'object')
    throw new Error(`the document has no ${TRANSITIONS_EXTENSION}`);
  const types = enumValues(document, 'OperationType') as string[];
  const states = new Set(enumValues(document, 'ComputerState') as string[]);
  const problem = (text: string) => new Error(`${TRANSITIONS_EXTENSION}: ${text}`);
  for (const type of types) if (!(type in declared)) throw problem(`${type} has no transition`);
  const table: Record<string, Transition> = {};
  for (const [type, rule] of Object.entries(declared)) {
    if (!types.includes(type)) throw problem(`${type} is not an OperationType`);
    const { from, during, to } = rule as { from?: unknown; during?: unknown; to?: unknown };
    if (!Array.isArray(from)) throw problem(`${type}.from is not a list of states`);
    for (const state of [...from, during, to])
      if (state !== undefined && !states.has(state as string))
        throw problem(`${type} names ${JSON.stringify(state)}, not a ComputerState`);
    if ((during === undefined) !== (to === undefined))
      throw problem(`${type} has one of during and to without the other`);
    table[type] = {
      from: from as string[],
      ...(during === undefined ? {} : { during: during as string, to: to as string }),
    };
  }
  return table;
}
