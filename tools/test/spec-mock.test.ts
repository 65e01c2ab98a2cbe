// `pnpm mock`: Prism behind a front that serves the spec's event streams (Prism answers them 500). Both
// modes run against the real bundle: the example's events, or one generated event per branch.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsAfter, formatEvent, freePort, startMock, streamOperations } from '../spec-mock.mjs';

const bundlePath = fileURLToPath(new URL('../../spec/dist/openapi.json', import.meta.url));
const bundle = JSON.parse(readFileSync(bundlePath, 'utf8'));
const streams = streamOperations(bundle);
const OUTPUT = '/operations/01m6e5gr5mpj3ht9gw2s64n9f80/output';
const EVENTS = '/workspaces/01m6bxdm0dxxxstsc03qpv3hzmd/events';
const TERMINAL_OUTPUT =
  '/workspaces/01m6bxdm0dxxxstsc03qpv3hzmd/computers/01m6cnenctgek8472bc9m7jfnzd/terminals/01m6r4h2q8t0v3x5z7b9d1f3g5j/output';
const SCREEN_FRAMES =
  '/workspaces/01m6bxdm0dxxxstsc03qpv3hzmd/computers/01m6cnenctgek8472bc9m7jfnzd/screen/frames';
const BEARER = { authorization: 'Bearer anything' };

/** A whole stream: its events and its comments, parsed with eventsource-parser. */
async function read(url: string, headers: Record<string, string> = BEARER) {
  const response = await fetch(url, { headers });
  const events: EventSourceMessage[] = [];
  const comments: string[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e), onComment: (c) => comments.push(c.trim()) });
  parser.feed(await response.text());
  return { response, events, comments };
}

describe('the stream operations the front finds in the bundle', () => {
  it('are every GET whose 200 answers text/event-stream, with their examples and branches', () => {
    const known = [OUTPUT, EVENTS, TERMINAL_OUTPUT, SCREEN_FRAMES];
    expect(streams.map((s) => known.some((path) => s.path.test(path)))).toEqual(streams.map(() => true));
    expect(streams.length).toBe(4);
    for (const stream of streams) {
      expect(Object.keys(stream.examples).length).toBeGreaterThan(0);
      expect(stream.branches.at(-1)?.name).toBe('stream.ended');
    }
  });

  it('writes an event in the wire format and keeps only the events after a cursor', () => {
    expect(formatEvent({ event: 'exit', id: '4', data: '{}' })).toBe('id: 4\nevent: exit\ndata: {}\n\n');
    const events = [{ id: '9' }, { id: '10' }, { id: '11' }];
    expect(eventsAfter(events, '9')).toEqual([{ id: '10' }, { id: '11' }]);
    expect(eventsAfter(events, undefined)).toEqual(events);
  });
});

describe('pnpm mock (static: the examples)', { timeout: 120_000 }, () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  beforeAll(async () => {
    mock = await startMock({
      bundle: bundlePath,
      port: await freePort(),
      flags: ['--errors', '--cors'],
      stdio: 'pipe',
    });
  }, 120_000);
  afterAll(async () => {
    await mock?.stop();
  });

  it("streams the example's events, after a keepalive comment, and ends with `: end`", async () => {
    const { response, events, comments } = await read(`${mock.url}${OUTPUT}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    // Prism's headers for the operation's 200 are kept.
    expect(response.headers.get('request-id')).toMatch(/^[0-9a-z]{27}$/);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const example =
      bundle.paths['/operations/{operation}/output'].get.responses['200'].content['text/event-stream']
        .examples.build.value;
    expect(events.map(({ id, event, data }) => ({ id, event, data }))).toEqual(example);
    expect(comments).toEqual(['keepalive', 'end']);
  });

  it.each([
    ['Last-Event-ID', { ...BEARER, 'last-event-id': '2' }, ''],
    ['after', BEARER, '?after=2'],
    ['Last-Event-ID over after', { ...BEARER, 'last-event-id': '2' }, '?after=3'],
  ])('resumes after %s with exactly the events after it', async (_name, headers, query) => {
    const { events } = await read(`${mock.url}${OUTPUT}${query}`, headers);
    expect(events.map((e) => e.id)).toEqual(['3', '4']);
  });

  it('answers 401 without a Bearer, as Prism does', async () => {
    const response = await fetch(`${mock.url}${EVENTS}`);
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toMatch(/json/);
  });

  it('passes on what Prism says of an invalid request (a bad `after`)', async () => {
    const response = await fetch(`${mock.url}${OUTPUT}?after=x`, { headers: BEARER });
    expect(response.status).toBe(400);
  });

  it('proxies every other request to Prism unchanged', async () => {
    const [front, prism] = await Promise.all(
      [mock.url, mock.prismUrl].map((base) => fetch(`${base}/me`, { headers: BEARER })),
    );
    expect(front.status).toBe(prism.status);
    expect(await front.json()).toEqual(await prism.json());
    expect(front.headers.get('ratelimit')).toBe(prism.headers.get('ratelimit'));
    const post = await fetch(`${mock.url}/workspaces`, { method: 'POST', headers: BEARER, body: '{}' });
    expect(post.status).toBe(
      (await fetch(`${mock.prismUrl}/workspaces`, { method: 'POST', headers: BEARER, body: '{}' })).status,
    );
  });
});

describe('pnpm mock --dynamic (from the schemas)', { timeout: 120_000 }, () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ components: bundle.components }, 'bundle');
  beforeAll(async () => {
    mock = await startMock({
      bundle: bundlePath,
      port: await freePort(),
      flags: ['--errors', '-d'],
      stdio: 'pipe',
    });
  }, 120_000);
  afterAll(async () => {
    await mock?.stop();
  });

  it.each([
    ['streamOperationOutput', OUTPUT],
    ['streamWorkspaceEvents', EVENTS],
  ])(
    '%s: one event per branch, stream.ended last, data valid against its contentSchema',
    async (id, path) => {
      const stream = streams.find((s) => s.operationId === id);
      const { events } = await read(`${mock.url}${path}`);
      expect(events.map((e) => e.event)).toEqual(stream?.branches.map((b) => b.name));
      expect(events.map((e) => e.id)).toEqual(events.map((_e, i) => String(i + 1)));
      const item =
        bundle.components.schemas[
          id === 'streamOperationOutput' ? 'OperationOutputStreamItem' : 'WorkspaceEventStreamItem'
        ];
      for (const event of events) {
        const branch = item.oneOf.find(
          (b: { properties: { event: { const?: string; enum?: string[] } } }) =>
            b.properties.event.const === event.event || b.properties.event.enum?.includes(event.event ?? ''),
        );
        const validate = ajv.getSchema(`bundle${branch.properties.data.contentSchema.$ref}`);
        expect(
          validate?.(JSON.parse(event.data)),
          `${event.event}: ${JSON.stringify(validate?.errors)}`,
        ).toBe(true);
      }
    },
  );
});
