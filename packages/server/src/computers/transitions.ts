import { loadDocument, operationTransitions } from '@svc/contract';
import { ApiError } from '../platform/errors.js';
import { type DriverAction, OPERATION_DRIVER_METHOD } from './driver.js';
import { type ComputerState, TRANSIENT_COMPUTER_STATES } from './states.js';

/** The state machine as the spec writes it (`x-svc-transitions` at the root of the document), read once. */
const SPEC_TRANSITIONS = operationTransitions(loadDocument());

/** A lifecycle action's rule: it must hold its computer in a state while it runs and end in one. */
function lifecycleRule(action: DriverAction): {
  from: readonly ComputerState[];
  during: ComputerState;
  to: ComputerState;
} {
  const rule = SPEC_TRANSITIONS[`computer.${action}`];
  if (!rule?.during || !rule.to) throw new Error(`the spec gives computer.${action} no during and to`);
  return {
    from: rule.from as ComputerState[],
    during: rule.during as ComputerState,
    to: rule.to as ComputerState,
  };
}

/**
 * What each action may start from, the state it holds while it runs, and where it ends (design §4),
 * from the spec. A recover ends where the computer's engine says (the driver's outcome); `to` is the
 * default.
 */
export const COMPUTER_ACTIONS: Readonly<
  Record<DriverAction, { from: readonly ComputerState[]; during: ComputerState; to: ComputerState }>
> = Object.fromEntries(
  Object.entries(OPERATION_DRIVER_METHOD)
    .filter(([, method]) => method === 'run')
    .map(([type]) => {
      const action = type.slice('computer.'.length) as DriverAction;
      return [action, lifecycleRule(action)];
    }),
) as Record<DriverAction, { from: readonly ComputerState[]; during: ComputerState; to: ComputerState }>;

/**
 * 409 `invalid_state` (`details: {current_state, allowed_from}`) or 409 `operation_in_progress`
 * (`details: {operation_id}`), design §4.
 *
 * @example
 * if (error instanceof ComputerStateError) console.log(error.details);
 */
export class ComputerStateError extends ApiError {
  override name = 'ComputerStateError';
}

/** What the checks below read of a computer: its name, its state and the operation holding it. */
interface ComputerStatus {
  name: string;
  state: ComputerState;
  current_operation_id: string | null;
}

/**
 * The rule of `action` when the computer may take it now (design §4): else 409
 * `operation_in_progress` while an operation holds the computer, or 409 `invalid_state` when the
 * action does not start from its state.
 *
 * @example
 * const rule = assertActionAllowed(computer, 'stop'); // rule.during === 'stopping'
 */
export function assertActionAllowed(
  computer: Pick<ComputerStatus, 'state' | 'current_operation_id'>,
  action: Exclude<DriverAction, 'create'>,
): (typeof COMPUTER_ACTIONS)[DriverAction] {
  const rule = COMPUTER_ACTIONS[action];
  assertNoOperation(computer);
  if (!rule.from.includes(computer.state)) {
    throw new ComputerStateError('invalid_state', `cannot ${action} a computer that is ${computer.state}`, {
      details: { current_state: computer.state, allowed_from: [...rule.from] },
    });
  }
  return rule;
}

/** 409 `operation_in_progress` (`details: {operation_id}`) while an operation holds the computer. */
function assertNoOperation(computer: Pick<ComputerStatus, 'state' | 'current_operation_id'>): void {
  if (TRANSIENT_COMPUTER_STATES.has(computer.state) && computer.current_operation_id)
    throw new ComputerStateError(
      'operation_in_progress',
      `the computer is ${computer.state}; wait for its operation to finish`,
      { details: { operation_id: computer.current_operation_id } },
    );
}

/** The states a snapshot may be taken from (design §4.2; the spec's `computer.snapshot`). */
const SNAPSHOT_FROM = (SPEC_TRANSITIONS['computer.snapshot']?.from ?? []) as readonly ComputerState[];

/**
 * 409 `operation_in_progress` while an operation holds the computer, else 409 `invalid_state` unless
 * it is `running` or `stopped`: the rule for taking a snapshot of it (design §4.2).
 *
 * @example
 * assertSnapshotAllowed(computer); // throws ComputerStateError when the computer is failed
 */
export function assertSnapshotAllowed(
  computer: Pick<ComputerStatus, 'state' | 'current_operation_id'>,
): void {
  assertNoOperation(computer);
  if (!SNAPSHOT_FROM.includes(computer.state))
    throw new ComputerStateError('invalid_state', `cannot snapshot a computer that is ${computer.state}`, {
      details: { current_state: computer.state, allowed_from: [...SNAPSHOT_FROM] },
    });
}

/**
 * 409 `operation_in_progress` while an operation holds the computer, else 409 `invalid_state` unless
 * it is `running`: the rule for running a command in it (design §13), and for its files.
 *
 * @example
 * assertRunning(computer, 'exec'); // throws ComputerStateError when the computer is stopped
 */
export function assertRunning(computer: ComputerStatus, action: 'exec' | 'run' | 'files'): void {
  assertNoOperation(computer);
  if (computer.state !== 'running')
    throw new ComputerStateError(
      'invalid_state',
      action === 'files'
        ? `computer ${computer.name} is ${computer.state}; its files can be reached while it is running`
        : `computer ${computer.name} is ${computer.state}; ${action} is allowed from running`,
      { details: { current_state: computer.state, allowed_from: ['running'] } },
    );
}
