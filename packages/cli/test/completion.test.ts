import { execFileSync } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { completions } from '../src/commands/completion.js';
import { buildProgram } from '../src/program.js';
import { svc } from './support/io.js';

const BIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const io = { stdout: { write: () => true }, stderr: { write: () => true }, env: {}, isTTY: false };

describe('completions of the command tree', () => {
  test.each<[string[], string[]]>([
    [['comp'], ['completion', 'computers']],
    [
      ['computers', 'st'],
      ['start', 'stop'],
    ],
    [
      ['ops', ''],
      ['get', 'help', 'list', 'output', 'wait'],
    ],
    [['computers', 'list', 'dev', '--sta'], ['--state']],
    [['computers', 'list', '--state', 'run'], ['running']],
    [
      ['--profile', 'work', 'sizes', ''],
      ['help', 'list'],
    ],
    [['cat'], []], // old names still run but are not offered
    [
      ['-o', ''],
      ['table', 'json', 'yaml'],
    ],
  ])('svc %j', (words, want) => {
    expect(completions(buildProgram(io), words)).toEqual(want);
  });

  test.each(['bash', 'zsh', 'fish'])(
    'svc completion %s prints a script that asks svc __complete',
    async (shell) => {
      const outcome = await svc(['completion', shell]);
      expect(outcome.code).toBe(0);
      expect(outcome.stdout).toContain('svc __complete --');
    },
  );

  test('an unknown shell is a usage error', async () => {
    const outcome = await svc(['completion', 'tcsh']);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('code: unknown_shell');
  });
});

describe('bash: source the script, then complete as <TAB> would', () => {
  // `svc` on PATH is the built CLI, as `pnpm cli:install` leaves it.
  const bin = mkdtempSync(join(tmpdir(), 'svc-bin-'));
  symlinkSync(BIN, join(bin, 'svc'));
  const complete = (words: string[]) =>
    execFileSync(
      'bash',
      [
        '--norc',
        '-c',
        `source <(svc completion bash)
complete -p svc
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1))
_svc_complete
printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, encoding: 'utf8' },
    ).split('\n');

  test('svc comp<TAB> offers completion and computers', () => {
    const [registered, ...offered] = complete(['svc', 'comp']);
    expect(registered).toBe('complete -o default -F _svc_complete svc');
    expect(offered.filter(Boolean)).toEqual(['completion', 'computers']);
  });

  test('svc computers list --state <TAB> offers the states of the spec', () => {
    const [, ...offered] = complete(['svc', 'computers', 'list', '--state', '']);
    expect(offered).toContain('running');
    expect(offered).toContain('stopped');
  });
});
