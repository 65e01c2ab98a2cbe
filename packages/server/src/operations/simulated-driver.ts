import { setTimeout as sleep } from 'node:timers/promises';
import type { ComputerDriver, DriverAction, DriverComputer, DriverContext, ExecResult } from './driver.js';
import { DriverError } from './driver.js';

/** The label that makes the simulated driver fail an action: `sim-fail=start` (or `always`). */
export const SIM_FAIL_LABEL = 'sim-fail';

export interface SimulatedDriverOptions {
  /** Time of one step; every action takes `steps` of them (`SVC_SIM_STEP_MS`). */
  stepMs: number;
  steps?: number;
  /** A test hook deciding failures, in addition to the `sim-fail` label. */
  shouldFail?(action: DriverAction, computer: DriverComputer): boolean;
}

/**
 * A SIMULATED driver: no machine exists anywhere. Each action sleeps `steps × stepMs`, reporting
 * progress after each step, and fails halfway when the computer carries the label `sim-fail` whose
 * value is the action (`create`, `start`, `stop`, `restart`, `delete`) or `always`, or when
 * `shouldFail` says so. It is the default driver, and says so in its name.
 *
 * @example
 * const driver = new SimulatedDriver({ stepMs: config.simStepMs });
 */
export class SimulatedDriver implements ComputerDriver {
  readonly name = 'simulated';
  private readonly stepMs: number;
  private readonly steps: number;
  private readonly shouldFail: SimulatedDriverOptions['shouldFail'];

  constructor(options: SimulatedDriverOptions) {
    this.stepMs = options.stepMs;
    this.steps = Math.max(1, options.steps ?? 4);
    this.shouldFail = options.shouldFail;
  }

  async run(action: DriverAction, computer: DriverComputer, context: DriverContext): Promise<void> {
    const label = computer.labels[SIM_FAIL_LABEL];
    const fail = label === action || label === 'always' || (this.shouldFail?.(action, computer) ?? false);
    for (let step = 1; step <= this.steps; step++) {
      await sleep(this.stepMs, undefined, { signal: context.signal });
      if (fail && step * 2 >= this.steps) {
        throw new DriverError(
          'internal',
          `simulated failure: ${action} failed (the simulated driver was told to fail it)`,
          {
            driver: this.name,
            action,
          },
        );
      }
      await context.progress(Math.round((step / this.steps) * 100));
    }
  }

  // PLACEHOLDER for the branch that adds `exec` (it replaces this): the simulated driver runs nothing.
  exec(): Promise<ExecResult> {
    throw new DriverError('invalid_state', 'the simulated driver runs no commands');
  }
}
