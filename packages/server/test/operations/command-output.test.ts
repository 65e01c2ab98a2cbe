import { afterAll, beforeAll, expect, test } from 'vitest';
import { housekeeping } from '../../src/compose/housekeeping.js';
import type { ComputerDriver } from '../../src/computers/driver.js';
import { createComputerRecord, requestComputerCommand } from '../../src/computers/records.js';
import { renderOperation } from '../../src/computers/render.js';
import {
  appendOperationOutput,
  OPERATION_OUTPUT_CHANNEL,
  type OutputEventRecord,
  operationOutputAfter,
} from '../../src/computers/repositories/operation-output.js';
import type { OperationRow } from '../../src/computers/repositories/operations.js';
import { SimulatedDriver } from '../../src/computers/simulated-driver.js';
import { OperationWorker } from '../../src/computers/worker.js';
import type { Database } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import { describeEngines } from '../support/databases.js';
import { createWorkspace } from '../support/fixtures.js';
import { schemaErrors } from '../support/spec-schemas.js';

// A command's output log (migration 014, design §14): what the worker appends while a `computer.exec`
// operation runs, and the final event it writes with the operation's end.

const SCHEMA_OF = { output: 'OutputChunk', exit: 'CommandExit', failed: 'Error' } as const;

/** The bytes of one stream's chunks, joined; each chunk starts where the previous one ended. */
function joined(events: OutputEventRecord[], stream: 'stdout' | 'stderr'): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  for (const event of events) {
    if (event.event !== 'output' || event.data.stream !== stream) continue;
    expect(event.data.offset).toBe(offset);
    const bytes = Buffer.from(event.data.data, event.data.encoding === 'base64' ? 'base64' : 'utf8');
    offset += bytes.length;
    parts.push(bytes);
  }
  return Buffer.concat(parts);
}

const decoded = (encoding: string, text: string) =>
  Buffer.from(text, encoding === 'base64' ? 'base64' : 'utf8');

describeEngines('a command’s output log', (engine) => {
  let db: Database;
  let workspaceId: string;
  let userId: string;
  const workers: OperationWorker[] = [];
  beforeAll(async () => {
    db = await engine.open();
    ({ workspaceId, userId } = await createWorkspace(db));
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
  });

  /** A running computer and a pending `computer.exec` operation for `argv`. */
  async function command(
    argv: string[],
    options: { stdin?: Uint8Array; maxOutputBytes?: number; stopped?: boolean } = {},
  ) {
    const { computer, operation: create } = await db.transaction((tx) =>
      createComputerRecord(
        tx,
        {
          workspace_id: workspaceId,
          name: `c${newId().slice(-10)}`,
          size: 'small',
          image: 'debian-13',
          labels: {},
        },
        userId,
      ),
    );
    await db.query(`UPDATE operations SET state = 'succeeded' WHERE id = $1`, [create.id]);
    await db.query(`UPDATE computers SET state = 'running', current_operation_id = NULL WHERE id = $1`, [
      computer.id,
    ]);
    const operation = await db.transaction((tx) =>
      requestComputerCommand(
        tx,
        computer.id,
        {
          argv,
          ...(options.stdin ? { stdin_base64: Buffer.from(options.stdin).toString('base64') } : {}),
          timeout_ms: 10_000,
          max_output_bytes: options.maxOutputBytes ?? 65_536,
        },
        userId,
      ),
    );
    if (options.stopped)
      await db.query(`UPDATE computers SET state = 'stopped' WHERE id = $1`, [computer.id]);
    return operation;
  }

  async function run(operation: OperationRow, driver: ComputerDriver = new SimulatedDriver({ stepMs: 1 })) {
    const worker = new OperationWorker({ db, driver, leaseMs: 5000, pollMs: 50 });
    workers.push(worker);
    await worker.runOnce();
    const ended = (await db.query<OperationRow>('SELECT * FROM operations WHERE id = $1', [operation.id]))
      .rows[0];
    const events = await operationOutputAfter(db, operation.id, 0, 1000);
    expect(events.map((event) => event.sequence)).toEqual(events.map((_, i) => i + 1));
    for (const event of events)
      expect(schemaErrors(SCHEMA_OF[event.event], event.data), event.event).toEqual([]);
    // Exactly one final event, the last.
    expect(events.filter((event) => event.event !== 'output').map((event) => event.sequence)).toEqual([
      events.length,
    ]);
    return { ended: ended as OperationRow, events };
  }

  test.each<[string, string[], { stdin?: Uint8Array; maxOutputBytes?: number }, 'utf-8' | 'base64']>([
    [
      'text, its characters cut between the driver’s writes',
      ['cat'],
      { stdin: Buffer.from('añ€😀 '.repeat(7)) },
      'utf-8',
    ],
    [
      'binary (NUL, bytes never in UTF-8)',
      ['cat'],
      { stdin: new Uint8Array([0, 1, 0xff, 0xfe, 0x80, 10, 0xc3]) },
      'base64',
    ],
    [
      'truncated at max_output_bytes',
      ['cat'],
      { stdin: Buffer.from('0123456789'.repeat(10)), maxOutputBytes: 25 },
      'utf-8',
    ],
    ['stderr, and a non-zero exit', ['no-such-program'], {}, 'utf-8'],
  ])(
    '%s: the chunks of each stream joined are the result’s bytes, then exit',
    async (_name, argv, options, encoding) => {
      const operation = await command(argv, options);
      const { ended, events } = await run(operation);
      expect(ended.state).toBe('succeeded');
      const execution = ended.result?.execution;
      if (!execution) throw new Error('no result');
      expect(execution.encoding).toBe(encoding);
      expect(joined(events, 'stdout')).toEqual(decoded(execution.encoding, execution.stdout));
      expect(joined(events, 'stderr')).toEqual(decoded(execution.encoding, execution.stderr));
      const chunks = events.filter((event) => event.event === 'output');
      expect(chunks.length).toBeGreaterThan(0);
      // Text stays text: no chunk cuts a character, though the driver's writes do.
      if (encoding === 'utf-8')
        for (const chunk of chunks) expect(chunk.data).toMatchObject({ encoding: 'utf-8' });
      const { exit_code, stdout_truncated, stderr_truncated, timed_out, duration_ms } = execution;
      expect(events.at(-1)).toEqual({
        sequence: events.length,
        event: 'exit',
        data: { exit_code, stdout_truncated, stderr_truncated, timed_out, duration_ms },
      });
    },
  );

  test('a command that never ran: the log is its `failed` event, the operation’s error as the API shows it', async () => {
    const operation = await command(['echo', 'hi'], { stopped: true });
    const { ended, events } = await run(operation);
    expect(ended.state).toBe('failed');
    expect(events).toEqual([
      { sequence: 1, event: 'failed', data: { error: renderOperation(ended, { result: false }).error } },
    ]);
    expect(events[0]?.data).toMatchObject({ error: { code: 'invalid_state', request_id: operation.id } });
  });

  test('output reaches the log while the command runs, well within 500 ms, and is announced on its channel', async () => {
    const operation = await command(['build']);
    const heard: string[] = [];
    const unlisten = await db.listen(OPERATION_OUTPUT_CHANNEL, (payload) => heard.push(payload));
    let seenAfterMs = Number.POSITIVE_INFINITY;
    const driver: ComputerDriver = {
      name: 'writes-then-waits',
      run: async () => {},
      exec: async (_computer, request) => {
        const written = performance.now();
        request.onOutput?.('stdout', Buffer.from('compiling\n'));
        while (performance.now() - written < 2000) {
          const events = await operationOutputAfter(db, operation.id, 0, 10);
          if (events.length > 0) {
            seenAfterMs = performance.now() - written;
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        request.onOutput?.('stderr', Buffer.from('done\n'));
        return {
          exitCode: 0,
          stdout: Buffer.from('compiling\n'),
          stderr: Buffer.from('done\n'),
          stdoutTruncated: false,
          stderrTruncated: false,
          timedOut: false,
        };
      },
    };
    try {
      const { events } = await run(operation, driver);
      expect(seenAfterMs).toBeLessThan(500);
      expect(events.map((event) => event.event)).toEqual(['output', 'output', 'exit']);
      await db.notificationBarrier();
      expect(heard).toContain(operation.id);
    } finally {
      await unlisten();
    }
  });

  test('an append is fenced by the claim: another token writes nothing', async () => {
    const operation = await command(['echo', 'fenced']);
    await db.query(`UPDATE operations SET state = 'running', claimed_by = 'worker-a/1' WHERE id = $1`, [
      operation.id,
    ]);
    const chunk = {
      event: 'output',
      data: { stream: 'stdout', offset: 0, encoding: 'utf-8', data: 'x' },
    } as const;
    expect(await appendOperationOutput(db, operation.id, 'worker-b/2', [chunk])).toBe(false);
    expect(await operationOutputAfter(db, operation.id, 0, 10)).toEqual([]);
    expect(await appendOperationOutput(db, operation.id, 'worker-a/1', [chunk, chunk])).toBe(true);
    expect((await operationOutputAfter(db, operation.id, 0, 10)).map((event) => event.sequence)).toEqual([
      1, 2,
    ]);
  });

  test('retention: housekeeping deletes the output of commands that ended more than 24 hours ago', async () => {
    const old = await command(['echo', 'old']);
    const recent = await command(['echo', 'recent']);
    await run(old);
    await run(recent);
    await db.query(`UPDATE operations SET completed_at = now() - make_interval(hours => 25) WHERE id = $1`, [
      old.id,
    ]);
    const report = await housekeeping(db, { eventHours: 168, outputHours: 24 });
    expect(report.output).toBeGreaterThanOrEqual(2);
    expect(await operationOutputAfter(db, old.id, 0, 10)).toEqual([]);
    // How many chunks depends on when the flushes fell; the log is whole either way.
    const kept = (await operationOutputAfter(db, recent.id, 0, 10)).map((event) => event.event);
    expect(kept.at(-1)).toBe('exit');
    expect(kept).toContain('output');
  });
});
