/** How long a hung-up program has to end before it is killed and the terminal closed without its exit code. */
export const HANGUP_GRACE_MS = 5_000;
