/** A path in a computer, as `svc computers cp` writes it: `<workspace>/<computer>:<path>`. */
export interface RemotePath {
  workspace: string;
  computer: string;
  /** Absolute, as the API takes it. */
  path: string;
}

/** `<workspace>/<computer>:/absolute/path`: names as the API's (no `/` or `:`), the path absolute. */
const REMOTE = /^([^/:\s]+)\/([^/:\s]+):(\/.*)$/;

/**
 * The remote path an argument names, or undefined for a local one (`./a:b`, `notes.txt`, `-`).
 *
 * @example
 * parseRemote('dev/box:/home/svc/a.txt'); // { workspace: 'dev', computer: 'box', path: '/home/svc/a.txt' }
 * parseRemote('./report.csv'); // undefined
 */
export function parseRemote(argument: string): RemotePath | undefined {
  const match = REMOTE.exec(argument);
  if (!match) return undefined;
  const [, workspace, computer, path] = match as unknown as [string, string, string, string];
  return { workspace, computer, path };
}

/**
 * The remote path a local file goes to: `path` itself, or the file's name inside it when it ends
 * with `/` (`cp a.txt dev/box:/home/svc/` writes `/home/svc/a.txt`).
 *
 * @example
 * intoRemote('/home/svc/', 'a.txt'); // '/home/svc/a.txt'
 */
export function intoRemote(path: string, name: string): string {
  return path.endsWith('/') ? `${path}${name}` : path;
}
