import type { Browser } from 'playwright-core';

/** Where Debian's `chromium` package installs the browser (`apt-get install -y chromium`). */
export declare const CHROMIUM_PATH: string;
/** The flags every browser test runs with: headless, as root, and no background traffic. */
export declare const CHROMIUM_ARGS: readonly string[];
/** Launches the machine's Chromium for a test. */
export declare function launchChromium(): Promise<Browser>;
