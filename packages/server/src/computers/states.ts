import type { components } from '@svc/contract';

/** Computer states of design §4, from the spec. */
export type ComputerState = components['schemas']['ComputerState'];
/** Operation states of design §4 (`canceled` reserved), from the spec. */
export type OperationState = components['schemas']['OperationState'];

// Every state of the spec, classified (design §4). Keyed by the spec's enums, so a state added to the
// spec does not compile until someone says here whether it is final (operations) or transient (computers).
const OPERATION_STATE_IS_FINAL: Readonly<Record<OperationState, boolean>> = {
  pending: false,
  running: false,
  succeeded: true,
  failed: true,
  canceled: true,
};
const COMPUTER_STATE_IS_TRANSIENT: Readonly<Record<ComputerState, boolean>> = {
  creating: true,
  starting: true,
  running: false,
  stopping: true,
  stopped: false,
  restarting: true,
  failed: false,
  deleting: true,
  deleted: false,
  recovering: true,
  unknown: false,
  moving: true,
};
const statesWhere = <State extends string>(table: Readonly<Record<State, boolean>>): ReadonlySet<State> =>
  new Set((Object.keys(table) as State[]).filter((state) => table[state]));

/** `succeeded`, `failed`, `canceled`: the operation states that never change again. */
export const TERMINAL_OPERATION_STATES: ReadonlySet<OperationState> = statesWhere(OPERATION_STATE_IS_FINAL);
/** The computer states that hold while an operation runs (`current_operation_id` names it). */
export const TRANSIENT_COMPUTER_STATES: ReadonlySet<ComputerState> = statesWhere(COMPUTER_STATE_IS_TRANSIENT);
/** Every computer state of the spec (`ComputerState`), in the spec's order. */
export const COMPUTER_STATES: ReadonlySet<ComputerState> = new Set(
  Object.keys(COMPUTER_STATE_IS_TRANSIENT) as ComputerState[],
);
