// `@svc/client/terminals` against a fake of the terminal endpoints written from their spec
// (@svc/tools/fake-terminals: a simulated line discipline over a tiny shell), over real sockets: open,
// type, read the echo and the answer as bytes, resize, the screen, close; a dropped output stream
// resumed with `Last-Event-ID` without a gap or a repeat; bytes that are not UTF-8 kept exact.
import { type FakeTerminals, type FakeTerminalsOptions, startFakeTerminals } from '@svc/tools/fake-terminals';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, createClient } from '../src/index.js';
import {
  closeTerminal,
  getTerminal,
  openTerminal,
  readTerminal,
  readTerminalScreen,
  resizeTerminal,
  type TerminalEvent,
  type TerminalRef,
  writeTerminal,
} from '../src/terminals.js';
import { recordingSleep } from './helpers.js';

let fake: FakeTerminals | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function open(options: FakeTerminalsOptions = {}) {
  fake = await startFakeTerminals(options);
  const client = createClient({ baseUrl: fake.baseUrl, token: 't' });
  const terminal = await openTerminal(client, 'dev', 'box', { cols: 80, rows: 5 });
  const ref: TerminalRef = { workspace: 'dev', computer: 'box', terminal: terminal.id };
  return { client, terminal, ref };
}

const join = (events: TerminalEvent[]) =>
  Buffer.concat(events.flatMap((e) => (e.event === 'output' ? [e.bytes] : []))).toString('latin1');

describe('terminals', () => {
  it('opens, types, reads the echo and the answer, resizes, reads the screen, ends with the exit code', async () => {
    const { client, terminal, ref } = await open();
    expect(terminal).toMatchObject({ state: 'open', cols: 80, rows: 5 });
    const reading = (async () => {
      const events: TerminalEvent[] = [];
      for await (const e of readTerminal(client, ref)) events.push(e);
      return events;
    })();
    await writeTerminal(client, ref, 'echo hi\r');
    await writeTerminal(client, ref, new TextEncoder().encode('exit 3\r'));
    const events = await reading;
    expect(join(events)).toBe('$ echo hi\r\nhi\r\n$ exit 3\r\n');
    expect(events.at(-1)).toMatchObject({ event: 'exit', exit: { exit_code: 3, reason: 'exited' } });
    expect((await getTerminal(client, ref)).exit_code).toBe(3);
    // Input goes as the bytes typed, with their media type.
    const input = fake?.requests.find((r) => r.path.endsWith('/input'));
    expect(input?.headers['content-type']).toBe('application/octet-stream');
    expect(input?.body.toString()).toBe('echo hi\r');
  });

  it('resizes, reads the screen as text and closes', async () => {
    const { client, ref } = await open();
    await writeTerminal(client, ref, 'echo hi\r');
    expect(await resizeTerminal(client, ref, { cols: 100, rows: 4 })).toMatchObject({ cols: 100, rows: 4 });
    const screen = await readTerminalScreen(client, ref);
    expect(screen).toMatchObject({
      cols: 100,
      rows: 4,
      lines: ['$ echo hi', 'hi', '$', ''],
      cursor: { x: 2, y: 2 },
    });
    await closeTerminal(client, ref);
    await closeTerminal(client, ref); // closing again is no error
    const events: TerminalEvent[] = [];
    for await (const e of readTerminal(client, ref)) events.push(e);
    expect(events.at(-1)).toMatchObject({ event: 'exit', exit: { reason: 'closed', exit_code: 129 } });
    const refused = await writeTerminal(client, ref, 'x').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('invalid_state');
  });

  it('keeps bytes that are not UTF-8 exact, split across events', async () => {
    const { client, ref } = await open();
    const bytes = Uint8Array.of(0xff, 0x00, 0xfe, 0xe2, 0x82); // invalid UTF-8, a NUL, half a '€'
    fake?.emit(ref.terminal, bytes);
    fake?.emit(ref.terminal, Uint8Array.of(0xac, 0x0a)); // the rest of the '€'
    fake?.end(ref.terminal, 0);
    const out: Uint8Array[] = [];
    for await (const e of readTerminal(client, ref)) if (e.event === 'output') out.push(e.bytes);
    expect([...Buffer.concat(out)]).toEqual([...Buffer.from('$ '), 0xff, 0x00, 0xfe, 0xe2, 0x82, 0xac, 0x0a]);
  });

  it('resumes a dropped stream with Last-Event-ID: no gap, no repeat', async () => {
    const { client, ref } = await open({
      plan: ({ connection }) => (connection === 0 ? { dropAfter: 2 } : undefined),
    });
    for (const word of ['one', 'two', 'three']) await writeTerminal(client, ref, `echo ${word}\r`);
    await writeTerminal(client, ref, 'exit 0\r');
    const { sleep } = recordingSleep();
    const events: TerminalEvent[] = [];
    for await (const e of readTerminal(client, ref, { sleep, random: () => 0 })) events.push(e);
    expect(join(events)).toBe(
      '$ echo one\r\none\r\n$ echo two\r\ntwo\r\n$ echo three\r\nthree\r\n$ exit 0\r\n',
    );
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
    const reconnect = fake?.requests.filter((r) => r.path.endsWith('/output'))[1];
    expect(reconnect?.headers['last-event-id']).toBe('2');
  });

  it('a reader fallen behind what is kept reads on from the oldest kept and says what it lost', async () => {
    const { client, ref } = await open({
      plan: ({ connection }) => (connection === 0 ? { expireAfter: 2 } : undefined),
    });
    for (const word of ['one', 'two', 'three']) await writeTerminal(client, ref, `echo ${word}\r`);
    await writeTerminal(client, ref, 'exit 0\r');
    const events: TerminalEvent[] = [];
    for await (const e of readTerminal(client, ref)) events.push(e);
    // Events 1 and 2 read, event 3 lost, the rest read on from the oldest kept: said, not silent.
    const at = events.findIndex((e) => e.event === 'output' && e.skipped !== undefined);
    expect(at).toBe(2);
    const after = events[at] as Extract<TerminalEvent, { event: 'output' }>;
    const lostFrom = join(events.slice(0, at)).length;
    expect(after.skipped).toBeGreaterThan(0);
    expect(after.offset).toBe(lostFrom + (after.skipped ?? 0));
    expect(events.filter((e) => e.event === 'output' && e.skipped !== undefined)).toHaveLength(1);
    const whole = '$ echo one\r\none\r\n$ echo two\r\ntwo\r\n$ echo three\r\nthree\r\n$ exit 0\r\n';
    expect(join(events)).toBe(whole.slice(0, lostFrom) + whole.slice(after.offset));
    expect(events.at(-1)).toMatchObject({ event: 'exit', exit: { exit_code: 0 } });
    const second = fake?.requests.filter((r) => r.path.endsWith('/output'))[1];
    expect(second?.headers['last-event-id']).toBeUndefined();
  });

  it('reattaches after an event read before: only what came after it', async () => {
    const { client, ref } = await open();
    await writeTerminal(client, ref, 'echo a\r');
    const first: TerminalEvent[] = [];
    for await (const e of readTerminal(client, ref)) {
      first.push(e);
      if (join(first).endsWith('a\r\n$ ')) break;
    }
    await writeTerminal(client, ref, 'exit 5\r');
    const rest: TerminalEvent[] = [];
    for await (const e of readTerminal(client, ref, { lastEventId: first.at(-1)?.id })) rest.push(e);
    expect(join(rest)).toBe('exit 5\r\n');
    expect(rest.at(-1)).toMatchObject({ event: 'exit', exit: { exit_code: 5 } });
  });

  it('an unknown terminal is ApiError not_found', async () => {
    const { client } = await open();
    const error = await getTerminal(client, { workspace: 'dev', computer: 'box', terminal: 'nope' }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('not_found');
  });
});
