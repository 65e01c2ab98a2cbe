// Terminals (design §17): a program on a computer's PTY. Every JSON operation answers in the spec's
// shape; the input is bytes in (sent to the server directly on a server run, as every byte operation
// is); the output stream is read and checked with the other streams (suites/streams.ts), from the
// terminal this suite leaves closed with exit code 3, so its events end and resume exactly. What needs
// state (the echo on the screen, the exit code) is held on a server only: the mock answers examples.
import { unwrap } from '@svc/client';
import { expect, it } from 'vitest';
import { fx, key } from '../support/fixtures.js';
import { contractClient, recordingFetch } from '../support/harness.js';
import { baseUrl, onMock } from '../support/target.js';

const TERMINALS = '/workspaces/{workspace}/computers/{computer}/terminals';
const TERMINAL = `${TERMINALS}/{terminal}` as const;

// biome-ignore lint/suspicious/noExplicitAny: the input is sent raw; the typed client types JSON calls
type Untyped = any;

export function terminalsSuite(): void {
  const client = () => contractClient();
  const at = () => ({ workspace: fx.workspace, computer: fx.computer });
  const here = () => ({ ...at(), terminal: fx.terminal });
  const type = (text: string) =>
    (contractClient({ fetch: recordingFetch(baseUrl()) } as Untyped).POST as Untyped)(`${TERMINAL}/input`, {
      params: { path: here(), header: {} },
      body: new TextEncoder().encode(text),
      bodySerializer: (raw: unknown) => raw,
      headers: { 'Content-Type': 'application/octet-stream' },
    }) as Promise<{ response: Response }>;
  const read = async () => (await unwrap(client().GET(TERMINAL, { params: { path: here() } }))).terminal;

  it('createComputerTerminal opens one (201) at the size it asks for', async () => {
    const { terminal } = await unwrap(
      client().POST(TERMINALS, {
        params: { path: at(), header: { 'Idempotency-Key': key() } },
        body: { cols: 80, rows: 24 },
      }),
    );
    fx.terminal = terminal.id;
    if (!onMock) expect(terminal).toMatchObject({ state: 'open', cols: 80, rows: 24 });
  });

  it('listComputerTerminals and getComputerTerminal answer it', async () => {
    const { terminals } = await unwrap(client().GET(TERMINALS, { params: { path: at(), query: {} } }));
    const got = await read();
    if (onMock) return;
    expect(terminals.map((t) => t.id)).toContain(fx.terminal);
    expect(got.id).toBe(fx.terminal);
  });

  it('updateComputerTerminal resizes it', async () => {
    const { terminal } = await unwrap(
      client().PATCH(TERMINAL, { params: { path: here() }, body: { cols: 100, rows: 30 } }),
    );
    if (!onMock) expect(terminal).toMatchObject({ cols: 100, rows: 30 });
  });

  it('sendComputerTerminalInput takes bytes (204), and getComputerTerminalScreen shows the echo', async () => {
    const { response } = await type('echo contract-terminal\r');
    expect(response.status).toBe(204);
    let lines: string[] = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      ({ lines } = (await unwrap(client().GET(`${TERMINAL}/screen`, { params: { path: here() } }))).screen);
      if (onMock || lines.filter((line) => line.includes('contract-terminal')).length >= 2) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (onMock) return;
    // The command line as typed, then what it printed.
    expect(lines.filter((line) => line.includes('contract-terminal')).length).toBeGreaterThanOrEqual(2);
  });

  it('the program ends with its exit code (exit 3): the terminal is closed', async () => {
    const { response } = await type('exit 3\r');
    expect(response.status).toBe(204);
    if (onMock) return;
    let terminal = await read();
    for (const deadline = Date.now() + 10_000; terminal.state !== 'closed' && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      terminal = await read();
    }
    expect(terminal).toMatchObject({ state: 'closed', exit_code: 3 });
  });

  it('deleteComputerTerminal hangs up another (204)', async () => {
    const { terminal } = await unwrap(
      client().POST(TERMINALS, {
        params: { path: at(), header: { 'Idempotency-Key': key() } },
        body: { cols: 40, rows: 10 },
      }),
    );
    const { response } = await client().DELETE(TERMINAL, {
      params: { path: { ...at(), terminal: terminal.id } },
    });
    expect(response.status).toBe(204);
  });
}
