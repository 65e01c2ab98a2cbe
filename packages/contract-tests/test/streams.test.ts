// The stream checks of the contract suite (support/streams.ts) catch each way an event can break the
// spec: each case breaks one good event of the spec's own example, which passes as it is.
import type { EventSourceMessage } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { document } from './support/spec-index.js';
import { eventViolations, parseStream, readStream, streamOf, unknownEvents } from './support/streams.js';

const stream = streamOf('streamOperationOutput');
const example = (
  document.paths['/operations/{operation}/output']!.get as {
    responses: Record<
      string,
      { content: Record<string, { examples: Record<string, { value: EventSourceMessage[] }> }> }
    >;
  }
).responses['200']!.content['text/event-stream']!.examples.build!.value;

describe('eventViolations', () => {
  it("passes the spec's example, and skips an unknown event name (the enum is extensible)", () => {
    expect(eventViolations(stream, example)).toEqual([]);
    const unknown = { id: '9', event: 'progress', data: '{}' };
    expect(eventViolations(stream, [...example, unknown])).toEqual([]);
    expect(unknownEvents(stream, [...example, unknown])).toEqual([unknown]);
  });

  it.each<[string, (events: EventSourceMessage[]) => void, RegExp]>([
    ['an id off the pattern', (e) => (e[1]!.id = 'two'), /id does not match/],
    ['no id', (e) => delete e[1]!.id, /id does not match/],
    ['ids not increasing', (e) => (e[2]!.id = '2'), /id is not after 2/],
    ['no event name', (e) => delete e[1]!.event, /no event name/],
    ['data that is not JSON', (e) => (e[1]!.data = '{stream: stdout}'), /data is not JSON/],
    [
      'data its schema refuses',
      (e) => (e[1]!.data = '{"stream":"stdin"}'),
      /data\/stream must be equal to one of the allowed values|data must have required property/,
    ],
    ['the data of another event', (e) => (e[3]!.data = e[0]!.data), /CommandExit/],
  ])('catches %s', (_name, breakIt, message) => {
    const events = structuredClone(example);
    breakIt(events);
    expect(eventViolations(stream, events).join('\n')).toMatch(message);
  });

  it('catches an event at or before the cursor it resumed from', () => {
    expect(eventViolations(stream, example, { after: '1' }).join('\n')).toMatch(
      /event 0 .* id is not after 1/,
    );
  });
});

describe('reading a stream', () => {
  it('parses events and comments, and stops after an idle pause on a stream that stays open', async () => {
    const text = ': keepalive\n\nid: 1\nevent: output\ndata: {}\n\n';
    expect(parseStream(`${text}: end\n\n`)).toMatchObject({ comments: ['keepalive', 'end'], closed: true });
    const open = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new TextEncoder().encode(text)),
    });
    const read = await readStream(open, { idleMs: 100 });
    expect(read).toMatchObject({ closed: false, comments: ['keepalive'] });
    expect(read.events.map((e) => e.id)).toEqual(['1']);
  });
});
