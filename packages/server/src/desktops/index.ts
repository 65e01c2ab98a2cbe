export {
  DEFAULT_SCREEN,
  INPUT_BOUNDS,
  RATES,
  SCREEN_BOUNDS,
  SCREEN_ENV,
  screenEnv,
} from '../computers/screen-limits.js';
export { checkActions, type InputAction, type ScreenSize, xdotoolArgs } from './actions.js';
export { type Cursor, type Desktop, type InputOutcome, type Screenshot, scaledSize } from './desktop.js';
export { createDesktops, type Desktops } from './desktops.js';
export { EngineDesktop } from './engine.js';
export { simulatedScreenPng } from './png.js';
export { PerSecond } from './rate.js';
export { screenOf, setScreenAtCreate } from './repositories/screens.js';
export { SimulatedDesktop } from './simulated.js';
