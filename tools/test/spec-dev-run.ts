// `pnpm spec:dev` as the spec-dev tests run it: a child process on a temporary copy of spec/ with free
// ports, its output kept for the tests to wait on.
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../spec-mock.mjs';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const SPEC_DEV = join(repo, 'tools', 'spec-dev.mjs');

/** A running loop on its own copy of spec/. */
export interface SpecDevRun {
  specDir: string;
  child: ChildProcess;
  previewUrl: string;
  mockUrl: string;
  /** Everything the loop has printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the first match of `pattern` in the output after `from` (an earlier `output().length`). */
  waitForOutput(pattern: RegExp, from: number, timeoutMs?: number): Promise<string>;
  /** Stops the loop (SIGTERM by pid, SIGKILL after 15 s) and removes the copy. */
  stop(): Promise<void>;
}

/**
 * Copies spec/ (without its outputs) to a temporary folder, starts `node tools/spec-dev.mjs` on it with
 * free ports, and resolves once it has printed its preview line. The copy runs the spec's own lint
 * script, which needs the spec's node_modules and the repository's tools/, linked beside it.
 */
export async function startSpecDevRun(): Promise<SpecDevRun> {
  const work = mkdtempSync(join(tmpdir(), 'spec-dev-'));
  const specDir = join(work, 'spec');
  cpSync(join(repo, 'spec'), specDir, {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|dist|\.turbo)$/.test(source),
  });
  symlinkSync(join(repo, 'spec', 'node_modules'), join(specDir, 'node_modules'), 'dir');
  symlinkSync(join(repo, 'tools'), join(work, 'tools'), 'dir');

  const [port, mockPort] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [SPEC_DEV, '--spec', specDir, '--port', String(port), '--mock-port', String(mockPort)],
    { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });

  const waitForOutput = (pattern: RegExp, from: number, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output.slice(from));
        if (match) {
          clearInterval(timer);
          clearTimeout(deadline);
          resolve(match[0]);
        } else if (child.exitCode !== null) {
          clearInterval(timer);
          clearTimeout(deadline);
          reject(new Error(`spec:dev exited (${child.exitCode}) before printing ${pattern}:\n${output}`));
        }
      };
      const timer = setInterval(check, 20);
      const deadline = setTimeout(() => {
        clearInterval(timer);
        reject(new Error(`spec:dev never printed ${pattern}:\n${output.slice(from)}`));
      }, timeoutMs);
      check();
    });

  const stop = async () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(child.pid, 'SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(kill);
    }
    rmSync(work, { recursive: true, force: true });
  };

  try {
    await waitForOutput(/\[spec:dev\] preview http/, 0, 180_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    specDir,
    child,
    previewUrl: `http://127.0.0.1:${port}/`,
    mockUrl: `http://127.0.0.1:${mockPort}`,
    output: () => output,
    waitForOutput,
    stop,
  };
}
