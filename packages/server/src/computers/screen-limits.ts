// The bounds of screens and input (design §18), stated once: the spec's descriptions say the same numbers,
// and the handlers refuse anything past them with the published errors.

/** The screen of a computer whose image has a display, when its create names none. */
export const DEFAULT_SCREEN = Object.freeze({ width: 1280, height: 800 });

/** The sizes a screen may have (the image's entry script refuses others too). */
export const SCREEN_BOUNDS = Object.freeze({
  minWidth: 640,
  maxWidth: 3840,
  minHeight: 480,
  maxHeight: 2160,
});

/** What one input request may carry. */
export const INPUT_BOUNDS = Object.freeze({
  actions: 50,
  textLength: 1000,
  waitMs: 2000,
  totalWaitMs: 10_000,
});

/** Requests a second one computer takes, per replica: screenshots, and input requests. */
export const RATES = Object.freeze({ screen: 10, input: 20 });

/** The environment variable the desktop image's entry script reads its screen size from. */
export const SCREEN_ENV = 'SVC_SCREEN';

/** A screen size as `SVC_SCREEN` writes it. @example screenEnv({ width: 1280, height: 800 }) // 'SVC_SCREEN=1280x800' */
export function screenEnv(screen: { width: number; height: number }): string {
  return `${SCREEN_ENV}=${screen.width}x${screen.height}`;
}
