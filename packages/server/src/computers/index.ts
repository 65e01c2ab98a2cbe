export type {
  ComputerDriver,
  DriverAction,
  DriverComputer,
  DriverContext,
  ExecRequest,
  ExecResult,
} from './driver.js';
export { DriverError } from './driver.js';
export { OperationEvents, waitForOperation } from './events.js';
export { createComputerRecord, requestComputerAction } from './records.js';
export type { SimulatedDriverOptions } from './simulated-driver.js';
export { SIM_FAIL_LABEL, SIMULATED_COMMANDS, SimulatedDriver } from './simulated-driver.js';
export type { ComputerState, OperationState } from './states.js';
export { TERMINAL_OPERATION_STATES, TRANSIENT_COMPUTER_STATES } from './states.js';
export { COMPUTER_ACTIONS, ComputerStateError } from './transitions.js';
export type { WorkerOptions } from './worker.js';
export { OperationWorker } from './worker.js';
