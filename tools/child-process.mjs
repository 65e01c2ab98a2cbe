// What every test that starts a child process (the server, Prism) needs: an environment built from an
// allow-list, so a variable of the parent (DATABASE_URL above all) cannot leak into a sandbox child,
// and one way to stop a child by its pid.

/** Parent variables a child inherits: enough to find binaries and keep locale and time zone. */
export const INHERITED_VARIABLES = ['PATH', 'HOME', 'NODE_OPTIONS', 'TZ', 'LANG'];

/**
 * The environment of a child: the parent's {@link INHERITED_VARIABLES} that are set, then `env`. Nothing
 * else of the parent's passes (no DATABASE_URL, no SVC_*); `undefined` in `env` leaves a variable out.
 *
 * @example
 * spawn(process.execPath, [main], { env: childEnv({ PORT: '0', DATABASE_URL: database.url }) });
 */
export function childEnv(env = {}) {
  const result = {};
  for (const name of INHERITED_VARIABLES) {
    const value = process.env[name];
    if (value !== undefined) result[name] = value;
  }
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete result[name];
    else result[name] = value;
  }
  return result;
}

/**
 * Sends SIGTERM to the child's pid (a server drains) and waits for it to exit; SIGKILL after
 * `killAfterMs`. Does nothing when the child has already exited.
 *
 * @example
 * await stopChild(child, { signal: 'SIGKILL' }); // a crash, for the cluster tests
 */
export async function stopChild(child, { signal = 'SIGTERM', killAfterMs = 12_000 } = {}) {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid, signal);
  const timer = setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined)
      process.kill(child.pid, 'SIGKILL');
  }, killAfterMs);
  await exited;
  clearTimeout(timer);
}
