// What ships, run as a user runs it: the CLI packed and installed with `npm install -g` into a scratch
// prefix (test/support/installed.ts), its `svc` binary run against the built `svc-server --sandbox`
// (simulated computers). Every output format over a few answers, and at least one command of every
// command `svc` lists (the spec's groups and its own), so a bundling fault that the in-process tests
// cannot see (they run the sources) fails here: `-o yaml` once failed only in the bundle.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { childEnv } from '@svc/tools/child-process';
import { type ServerProcess, serverBuilt, spawnServer } from '@svc/tools/server-process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { COMPLETE_COMMAND } from '../../src/commands/completion.js';
import { FORMATS, type Format } from '../../src/output/print.js';
import { GROUP_ALIASES } from '../../src/spec/commands.js';
import {
  type InstalledCli,
  installPacked,
  type Outcome,
  PACKAGE,
  runInstalled,
} from '../support/installed.js';

/** A run still going (a stream, `svc listen`, `svc login`), stopped with SIGINT to its pid as Ctrl-C does. */
interface Running {
  stdout(): string;
  stderr(): string;
  interrupt(): void;
  exited: Promise<number | null>;
}

const missing = !existsSync(join(PACKAGE, 'dist', 'main.js')) || !serverBuilt();
// turbo builds the CLI and the server first: under CI a missing build is a failure, not a skip.
if (missing && process.env.CI)
  throw new Error('the installed svc cannot be tested under CI: build the CLI and the server first');

describe.skipIf(missing)('svc installed from its packed tarball, against svc-server --sandbox', () => {
  let cli: InstalledCli;
  let server: ServerProcess;
  let dir: string;
  let env: Record<string, string>;
  /** The first word of every command run: what the family check counts. */
  const ran = new Set<string>();

  const record = (argv: readonly string[]) => {
    const word = argv.find((arg) => !arg.startsWith('-'));
    if (word) ran.add(word);
  };
  /** Runs the installed `svc` to its end. */
  function svc(argv: string[]): Promise<Outcome> {
    record(argv);
    return runInstalled(cli.bin, env, argv);
  }
  /** Runs it and expects exit 0; its stdout. */
  async function ok(argv: string[]): Promise<string> {
    const outcome = await svc(argv);
    expect(outcome.code, `svc ${argv.join(' ')}\n${outcome.stderr}`).toBe(0);
    return outcome.stdout;
  }
  const json = async (argv: string[]) => JSON.parse(await ok([...argv, '-o', 'json']));
  /** Starts it and leaves it running. */
  function start(argv: string[]): Running {
    record(argv);
    const child = spawn(cli.bin, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return {
      stdout: () => stdout,
      stderr: () => stderr,
      interrupt: () => {
        if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGINT');
      },
      exited,
    };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-installed-'));
    [cli, server] = await Promise.all([installPacked(), spawnServer({ env: { SVC_SIM_STEP_MS: '20' } })]);
    // Only what a user's shell would give it: no variable of this process reaches svc.
    env = childEnv({
      HOME: dir,
      SVC_KEY_FILE: server.keyFilePath,
      SVC_CONFIG_DIR: join(dir, 'config'),
    });
    // A computer for the answers below to show.
    await json([
      'computers',
      'create',
      'default',
      '--name',
      'box',
      '--size',
      'small',
      '--image',
      'ubuntu-2404',
      '--idempotency-key',
      'installed-box',
      '--wait',
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([cli?.remove(), server?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** How each format must show an answer, given the answer as `-o json` printed it. Typed by FORMATS: a new format without a check does not compile. */
  const formats: Record<Format, (stdout: string, answer: unknown, shown: string[]) => void> = {
    json: (stdout, answer) => expect(JSON.parse(stdout)).toEqual(answer),
    yaml: (stdout, answer) => expect(parseYaml(stdout)).toEqual(answer),
    table: (stdout, _answer, shown) => {
      for (const value of shown) expect(stdout).toContain(value);
    },
  };
  const reads: [string, { argv: string[]; shown: (answer: never) => string[] }][] = [
    [
      'a list (the issue’s command)',
      {
        argv: ['computers', 'list', 'default', '--columns', 'name,state,size'],
        shown: (answer: { computers: { name: string; state: string }[] }) =>
          answer.computers.flatMap((c) => [c.name, c.state]),
      },
    ],
    [
      'a catalogue',
      {
        argv: ['sizes', 'list'],
        shown: (answer: { sizes: { name: string }[] }) => answer.sizes.map((s) => s.name),
      },
    ],
    [
      'one resource',
      {
        argv: ['workspaces', 'get', 'default'],
        shown: (answer: { workspace: { id: string } }) => [answer.workspace.id],
      },
    ],
    [
      'an answer svc prints itself (whoami)',
      {
        argv: ['whoami'],
        shown: (answer: { identity: { principal: { id: string } } }) => [answer.identity.principal.id],
      },
    ],
  ];

  test.each(reads)('every output format prints %s', async (_name, { argv, shown }) => {
    const printed = await Promise.all(FORMATS.map((format) => ok([...argv, '-o', format])));
    const answer = JSON.parse(printed[FORMATS.indexOf('json')] as string);
    FORMATS.forEach((format, at) => {
      formats[format](printed[at] as string, answer, shown(answer as never));
    });
  });

  test('--columns picks the table’s columns, --query filters before any format', async () => {
    const { sizes } = (await json(['sizes', 'list'])) as { sizes: { name: string; vcpus: number }[] };
    const table = (await ok(['sizes', 'list', '--columns', 'name,vcpus'])).trimEnd().split('\n');
    expect(table[0]?.split(/\s+/)).toEqual(['NAME', 'VCPUS']);
    expect(table.slice(1).map((line) => line.split(/\s+/))).toEqual(
      sizes.map((s) => [s.name, String(s.vcpus)]),
    );
    expect(JSON.parse(await ok(['sizes', 'list', '--json']))).toEqual({
      sizes,
      next_cursor: null,
      has_more: false,
    });
    const names = sizes.map((s) => s.name);
    expect(await ok(['sizes', 'list', '--query', 'sizes[].name'])).toBe(`${names.join('\n')}\n`);
    expect(JSON.parse(await ok(['sizes', 'list', '--query', 'sizes[].name', '-o', 'json']))).toEqual(names);
    expect(parseYaml(await ok(['sizes', 'list', '--query', 'sizes[].name', '-o', 'yaml']))).toEqual(names);
    const bad = await svc(['sizes', 'list', '--query', 'sizes[']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--query');
  });

  test('the spec’s command groups: a command of each', async () => {
    expect(await json(['health', 'get'])).toMatchObject({ status: 'ok' });
    const keyFile = JSON.parse(readFileSync(server.keyFilePath, 'utf8')) as { principal_id: string };
    expect(parseYaml(await ok(['identity', 'get-me', '-o', 'yaml']))).toMatchObject({
      identity: { principal: { id: keyFile.principal_id } },
    });
    const assertion = (await ok(['auth', 'assertion'])).trim();
    expect(
      await json([
        'auth',
        'exchange-token',
        '--grant-type',
        'urn:ietf:params:oauth:grant-type:jwt-bearer',
        '--credential',
        assertion,
      ]),
    ).toMatchObject({ token: { token_type: 'Bearer' } });

    const { workspace } = await json([
      'workspaces',
      'create',
      '--name',
      'shipped',
      '--idempotency-key',
      'installed-workspace',
    ]);
    expect(workspace.name).toBe('shipped');
    expect((await json(['members', 'list', 'shipped'])).members.length).toBeGreaterThan(0);
    await json([
      'service-accounts',
      'create',
      'shipped',
      '--name',
      'robot',
      '--role',
      'editor',
      '--idempotency-key',
      'installed-sa',
    ]);
    // A key file is written 0600 (`x-svc.cli: key-file`), and lists.
    const keyPath = join(dir, 'robot.json');
    await ok([
      'keys',
      'create',
      'shipped',
      'robot',
      '--idempotency-key',
      'installed-key',
      '--key-file',
      keyPath,
    ]);
    expect(statSync(keyPath).mode & 0o777).toBe(0o600);
    const key = JSON.parse(readFileSync(keyPath, 'utf8')) as { key_id: string };
    expect(
      (await json(['keys', 'list', 'shipped', 'robot'])).keys.map((k: { id: string }) => k.id),
    ).toContain(key.key_id);
    expect((await json(['images', 'list'])).images.length).toBeGreaterThan(0);

    // A command's output and exit code as svc's own, answered and streamed.
    expect(await ok(['computers', 'exec', 'default', 'box', '--', 'echo', 'hello'])).toBe('hello\n');
    expect(await ok(['computers', 'run', 'default', 'box', '--follow', '--', 'echo', 'streamed'])).toBe(
      'streamed\n',
    );
    const { snapshot } = await json([
      'snapshots',
      'create',
      'default',
      '--name',
      'shipped',
      '--computer',
      'box',
      '--idempotency-key',
      'installed-snapshot',
      '--wait',
    ]);
    expect(snapshot).toMatchObject({ name: 'shipped', state: 'ready' });
    expect(await json(['webhooks', 'list-endpoints', 'default'])).toMatchObject({ webhook_endpoints: [] });
    const { operations } = (await json(['ops', 'list', 'default'])) as { operations: { id: string }[] };
    const first = operations[0] as { id: string };
    expect(await json(['operations', 'get', first.id])).toMatchObject({ operation: { id: first.id } });

    // A stream, followed until Ctrl-C (130).
    const events = start(['workspaces', 'events', 'default', '--after', '0', '-o', 'json']);
    await expect.poll(() => events.stdout(), { timeout: 10_000 }).toMatch(/\n/);
    expect(JSON.parse(events.stdout().split('\n')[0] as string)).toMatchObject({ id: '1' });
    events.interrupt();
    expect(await events.exited).toBe(130);
    expect(events.stderr()).toContain('--last-event-id');
  });

  test('svc’s own commands: each one', async () => {
    expect((await ok(['token'])).trim().split('.')).toHaveLength(3);
    expect(await json(['auth', 'status'])).toMatchObject({ base_url: server.baseUrl });
    await ok(['config', 'set-profile', 'other', '--base-url', server.baseUrl]);
    expect(await ok(['config', 'list'])).toMatch(/^\s+other\s/m);
    await ok(['config', 'delete-profile', 'other']);
    expect(await ok(['completion', 'bash'])).toContain(COMPLETE_COMMAND);
    expect(await ok(['help', 'computers'])).toContain('Usage: svc computers');
    expect((await svc(['logout'])).code).toBe(0);

    // Sign-in: the page the printed address opens, then a refusal sent back to svc's loopback (exit 3).
    const login = start(['login', '--no-browser', '--timeout', '20', '--base-url', server.baseUrl]);
    await expect.poll(() => login.stderr(), { timeout: 10_000 }).toMatch(/\/signin\/authorize\?\S+\n/);
    const page = new URL(/(http:\S+\/signin\/authorize\?\S+)/.exec(login.stderr())?.[1] as string);
    expect((await fetch(page)).status).toBe(200);
    const back = new URL(page.searchParams.get('redirect_uri') as string);
    back.search = new URLSearchParams({
      error: 'access_denied',
      state: page.searchParams.get('state') as string,
    }).toString();
    await fetch(back);
    expect(await login.exited).toBe(3);

    // The MCP server over stdio, as an agent starts it.
    record(['mcp']);
    const transport = new StdioClientTransport({ command: cli.bin, args: ['mcp'], env, stderr: 'pipe' });
    const client = new Client({ name: 'svc-installed-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('get_me');
      const me = await client.callTool({ name: 'get_me', arguments: {} });
      expect(me.isError).toBeFalsy();
    } finally {
      await client.close();
    }

    // Events forwarded, signed, to a receiver on this machine.
    const received: { headers: Record<string, unknown>; type: string }[] = [];
    const receiver: Server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ headers: request.headers, type: JSON.parse(body).type });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const listening = start([
        'listen',
        'default',
        '--forward-to',
        url,
        '--after',
        '0',
        '--events',
        'computer.created',
      ]);
      await expect.poll(() => received.length, { timeout: 10_000 }).toBeGreaterThan(0);
      expect(received[0]).toMatchObject({
        type: 'computer.created',
        headers: { 'webhook-signature': /^v1,/ },
      });
      listening.interrupt();
      expect(await listening.exited).toBe(130);
      expect(listening.stdout()).toMatch(/ computer\.created \S+ #\d+ -> 204 /);
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  test('svc computers shell, piped: stdin typed into the remote shell, its output printed, its exit code svc’s', async () => {
    record(['computers', 'shell']);
    const child = spawn(cli.bin, ['computers', 'shell', 'default', 'box'], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.stdin.end('echo piped-hi\nstty size\nexit 3\n');
    expect(await exited, stderr).toBe(3);
    // The simulated shell echoes what is typed and answers it, on an 80x24 terminal (no local one).
    expect(stdout).toContain('piped-hi\r\n');
    expect(stdout).toContain('24 80\r\n');
    const { terminals } = (await json(['computers', 'list-terminals', 'default', 'box'])) as {
      terminals: { state: string; exit_code?: number; end_reason?: string }[];
    };
    expect(terminals[0]).toMatchObject({ state: 'closed', exit_code: 3, end_reason: 'exited' });
  });

  test('every command svc lists was run above', async () => {
    const listed = (await ok([COMPLETE_COMMAND, '--', '']))
      .split('\n')
      .filter((word) => word && !word.startsWith('-'));
    ran.delete(COMPLETE_COMMAND);
    const aliases = new Map(Object.entries(GROUP_ALIASES).map(([group, alias]) => [alias, group]));
    const run = new Set([...ran].map((word) => aliases.get(word) ?? word));
    expect([...new Set(listed.map((word) => aliases.get(word) ?? word))].sort()).toEqual([...run].sort());
  });
});
