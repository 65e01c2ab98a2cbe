// The event streams (operations whose 200 is text/event-stream), found in the bundle: each is opened,
// read with eventsource-parser and every event checked (support/streams.ts), then resumed after an event
// with `Last-Event-ID` and with `after`, which must give exactly the events after it. Against a server the
// streams are reached directly, not through `prism proxy` (it reads a whole body before it answers, and
// a workspace's stream never ends): every event is still checked here, against the bundle.
import { streamOperationIds } from '@svc/contract';
import type { EventSourceMessage } from 'eventsource-parser';
import { expect, it } from 'vitest';
import { fx } from '../support/fixtures.js';
import { contractClient, streamChecked } from '../support/harness.js';
import { document } from '../support/spec-index.js';
import { eventViolations, type ReadStream, readStream, streamOf, unknownEvents } from '../support/streams.js';
import { baseUrl, onMock } from '../support/target.js';

/**
 * How to open each stream with what earlier tests made, and where it starts: a workspace's stream from
 * the start of its log (`after=0`: it holds the suite's own changes), a command's output from its first
 * event. A stream operation added to the spec fails here until it is given its parameters.
 */
const OPEN: Record<string, { path: () => Record<string, string>; query: Record<string, string> }> = {
  streamWorkspaceEvents: { path: () => ({ workspace: fx.workspace }), query: { after: '0' } },
  streamOperationOutput: { path: () => ({ operation: fx.execOperation }), query: {} },
  streamComputerTerminalOutput: {
    path: () => ({ workspace: fx.workspace, computer: fx.computer, terminal: fx.terminal }),
    query: {},
  },
  // The screen live: a desktop computer the screens suite made (fx.desk), scaled down.
  streamComputerScreenFrames: {
    path: () => ({ workspace: fx.workspace, computer: fx.desk }),
    query: { max_width: '320' },
  },
};

const pathOf = (operationId: string) => {
  for (const [path, item] of Object.entries(document.paths))
    if ((item.get as { operationId?: string } | undefined)?.operationId === operationId) return path;
  throw new Error(`no GET ${operationId}`);
};

/** Opens a stream through the contract client (its answer checked by the harness) and reads it. */
async function open(
  operationId: string,
  { query = {}, lastEventId }: { query?: Record<string, string>; lastEventId?: string } = {},
): Promise<ReadStream & { status: number; contentType: string }> {
  const setup = OPEN[operationId];
  if (setup === undefined) throw new Error(`${operationId}: say how to open it in suites/streams.ts`);
  // biome-ignore lint/suspicious/noExplicitAny: the path is the bundle's, so the typed client cannot name it statically
  const { response } = await (contractClient().GET as any)(pathOf(operationId), {
    params: {
      path: setup.path(),
      query,
      header: lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId },
    },
    parseAs: 'stream',
  });
  const read = response.ok ? await readStream(response.body, { idleMs: onMock ? 5000 : 2000 }) : emptyRead();
  return { ...read, status: response.status, contentType: response.headers.get('Content-Type') ?? '' };
}

const emptyRead = (): ReadStream => ({ events: [], comments: [], closed: true });
const summary = (events: readonly EventSourceMessage[]) =>
  events.map(({ id, event, data }) => ({ id, event, data }));

export function streamsSuite(): void {
  const ids = streamOperationIds(document);

  it('finds the stream operations in the bundle', () => {
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.filter((id) => OPEN[id] === undefined)).toEqual([]);
  });

  for (const operationId of ids) {
    const first: { read?: ReadStream } = {};

    it(`${operationId}: every event has a known name (others skipped), an id by the schema, ids increasing, data valid JSON of its branch's schema`, async () => {
      const stream = streamOf(operationId);
      const read = await open(operationId, { query: OPEN[operationId]?.query });
      expect(read.status).toBe(200);
      expect(read.contentType).toMatch(/^text\/event-stream/);
      expect(read.events.length, 'the stream sent no event').toBeGreaterThan(0);
      const after = OPEN[operationId]?.query.after;
      expect(eventViolations(stream, read.events, { after })).toEqual([]);
      const known = read.events.length - unknownEvents(stream, read.events).length;
      expect(known, 'no event the spec names').toBeGreaterThan(0);
      first.read = read;
      streamChecked(operationId);
    });

    it.each([['Last-Event-ID'], ['after']])(
      `${operationId}: resumed with %s after its first event, it sends exactly the events after it`,
      async (how) => {
        const stream = streamOf(operationId);
        const before = first.read?.events ?? [];
        const cursor = before[0]?.id;
        if (cursor === undefined) throw new Error('the first read of the stream had no event');
        const resumed = await open(operationId, {
          query: how === 'after' ? { after: cursor } : (OPEN[operationId]?.query ?? {}),
          lastEventId: how === 'Last-Event-ID' ? cursor : undefined,
        });
        expect(resumed.status).toBe(200);
        expect(eventViolations(stream, resumed.events, { after: cursor })).toEqual([]);
        const expected = summary(before.slice(1));
        // A workspace's log may have grown since: the events after the cursor, then perhaps newer ones.
        expect(summary(resumed.events).slice(0, expected.length)).toEqual(expected);
        if (first.read?.closed) expect(summary(resumed.events)).toEqual(expected);
      },
    );

    it(`${operationId}: without a token, 401 in the error envelope before any event`, async () => {
      const path = pathOf(operationId).replace(
        /\{(\w+)\}/g,
        (_m, name: string) => OPEN[operationId]?.path()[name] ?? '',
      );
      const response = await fetch(`${baseUrl()}${path}`);
      expect(response.status).toBe(401);
      const body = (await response.json()) as { error?: { code?: string } };
      expect(body.error?.code).toBe('unauthenticated');
    });
  }
}
