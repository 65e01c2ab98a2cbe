// Headless Chromium for the browser tests: Debian's package at /usr/bin/chromium, driven by
// playwright-core. Never a downloaded browser build; the flags keep it off the (closed) network.
import { chromium } from 'playwright-core';

/** Where Debian's `chromium` package installs the browser (`apt-get install -y chromium`). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The flags every browser test runs with: headless, as root, and no background traffic. */
export const CHROMIUM_ARGS = Object.freeze([
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
]);

/**
 * Launches the machine's Chromium for a test.
 *
 * @example
 * const browser = await launchChromium();
 * const page = await browser.newPage();
 * await browser.close();
 */
export function launchChromium() {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS] });
}
