import type { InputAction, ScreenSize } from './actions.js';

/** Where the pointer is. */
export interface Cursor {
  x: number;
  y: number;
}

/** A screenshot: the PNG, the screen's own size (the picture may be smaller) and the pointer. */
export interface Screenshot {
  png: Uint8Array;
  screen: ScreenSize;
  cursor: Cursor;
}

/** What became of a request's actions. */
export interface InputOutcome {
  applied: number;
  cursor: Cursor;
  failed?: { index: number; message: string };
  /** True when nothing was really pressed (the simulated desktop). */
  simulated?: boolean;
}

/** The computer a desktop call is about, as the driver knows it, with its screen. */
export interface DesktopComputer {
  id: string;
  workspace_id: string;
  name: string;
  size: string;
  image: string;
  labels: Record<string, string>;
  screen: ScreenSize;
}

/**
 * The seam between the screen and input handlers and whatever runs computers: the Engine driver's
 * (commands run inside the computer, engine.ts) or the simulated one's (simulated.ts).
 *
 * @example
 * const shot = await desktop.screenshot(computer, { maxWidth: 640 }, signal);
 */
export interface Desktop {
  screenshot(
    computer: DesktopComputer,
    scale: { maxWidth?: number; maxHeight?: number },
    signal: AbortSignal,
  ): Promise<Screenshot>;
  input(
    computer: DesktopComputer,
    actions: readonly InputAction[],
    signal: AbortSignal,
  ): Promise<InputOutcome>;
}

/**
 * The size of a picture of `screen` that fits inside the maxima, proportions kept, never larger.
 *
 * @example
 * scaledSize({ width: 1280, height: 800 }, { maxWidth: 640 }); // { width: 640, height: 400 }
 */
export function scaledSize(screen: ScreenSize, scale: { maxWidth?: number; maxHeight?: number }): ScreenSize {
  const factor = Math.min(
    1,
    (scale.maxWidth ?? screen.width) / screen.width,
    (scale.maxHeight ?? screen.height) / screen.height,
  );
  return {
    width: Math.max(1, Math.round(screen.width * factor)),
    height: Math.max(1, Math.round(screen.height * factor)),
  };
}
