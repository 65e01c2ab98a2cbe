import type { ComputerDriver } from '../computers/driver.js';
import { RATES } from '../computers/screen-limits.js';
import type { Desktop } from './desktop.js';
import { EngineDesktop } from './engine.js';
import { PerSecond } from './rate.js';
import { SimulatedDesktop } from './simulated.js';

/** What one app's screens share: its desktop, and the per-computer rates of screenshots and input. */
export interface Desktops {
  desktop: Desktop;
  screens: PerSecond;
  inputs: PerSecond;
}

/**
 * The desktop of the app's driver: the simulated one's, or commands in the computer for a real one.
 *
 * @example
 * const desktops = createDesktops(driver);
 * desktops.inputs.take(computer.id); // 429 past RATES.input a second
 */
export function createDesktops(driver: ComputerDriver): Desktops {
  return {
    desktop: driver.name === 'simulated' ? new SimulatedDesktop() : new EngineDesktop(driver),
    screens: new PerSecond('computer-screen', RATES.screen),
    inputs: new PerSecond('computer-input', RATES.input),
  };
}
