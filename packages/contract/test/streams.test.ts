import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type components,
  eventStream,
  isStreamOperation,
  listOperations,
  loadDocument,
  type OpenApiDocument,
  resolveRef,
  STREAM_ENDED,
  type StreamEvent,
  type StreamOperationId,
  streamEventBranch,
  streamOperationIds,
  streamOperations,
} from '../src/index.js';

const doc = loadDocument();

// The stream operations found the long way, apart from the reader: every response of every operation
// whose content has `text/event-stream`, whatever its method or status.
function eventStreamResponses(document: OpenApiDocument): string[] {
  const found: string[] = [];
  for (const item of Object.values(document.paths))
    for (const operation of Object.values(item) as { operationId?: string; responses?: object }[])
      for (const response of Object.values(operation?.responses ?? {}) as { content?: object }[])
        if (response.content && 'text/event-stream' in response.content)
          found.push(String(operation.operationId));
  return found;
}

describe('streamOperationIds', () => {
  it('finds every operation that answers text/event-stream, and nothing else', () => {
    const found = eventStreamResponses(doc);
    expect(found.length).toBeGreaterThan(0);
    expect(streamOperationIds(doc).sort()).toEqual([...new Set(found)].sort());
  });
});

describe('eventStream on the bundle', () => {
  it.each(streamOperationIds(doc))('%s: every oneOf branch maps its names to a components schema', (id) => {
    const stream = eventStream(doc, id);
    if (!stream) throw new Error(`${id} is not a stream`);
    const item = resolveRef(doc, `#/components/schemas/${stream.itemSchema}`) as { oneOf: unknown[] };
    expect(stream.events).toHaveLength(item.oneOf.length);
    for (const [index, branch] of stream.events.entries()) {
      const raw = item.oneOf[index] as { properties: { event: { const?: string; enum?: string[] } } };
      expect(branch.names).toEqual(raw.properties.event.enum ?? [raw.properties.event.const]);
      expect(resolveRef(doc, branch.dataRef)).toBeTypeOf('object');
      expect(branch.dataRef).toBe(`#/components/schemas/${branch.dataSchema}`);
    }
    // Every name of the `event` enum is named by exactly one branch.
    const named = stream.events.flatMap((e) => e.names);
    expect(named.sort()).toEqual([...stream.eventNames].sort());
    expect(stream.final?.dataSchema).toBe('StreamEnded');
    expect(stream.extensible).toBe(true);
    expect(stream.idSchema.pattern).toBe('^[0-9]+$');
  });

  it.each([
    ['streamWorkspaceEvents', 'computer.deleted', 'ComputerEvent'],
    ['streamWorkspaceEvents', 'workspace.updated', 'WorkspaceEvent'],
    ['streamOperationOutput', 'output', 'OutputChunk'],
    ['streamOperationOutput', 'failed', 'Error'],
    ['streamOperationOutput', 'stream.ended', 'StreamEnded'],
  ])('%s: %s carries %s', (id, name, schema) => {
    const stream = eventStream(doc, id);
    expect(stream && streamEventBranch(stream, name)?.dataSchema).toBe(schema);
  });

  it.each([
    ['streamOperationOutput', ['exit', 'failed']],
    ['streamWorkspaceEvents', []],
  ])('%s: the events that close the stream are the branches marked x-svc-closes-stream: %j', (id, want) => {
    const stream = eventStream(doc, id);
    expect(stream?.events.filter((e) => e.closes).flatMap((e) => e.names)).toEqual(want);
  });

  it('the generated streamOperations value says the same as the reader', () => {
    for (const id of streamOperationIds(doc)) {
      const stream = eventStream(doc, id);
      const value = streamOperations[id as keyof typeof streamOperations];
      expect(value.path).toBe(listOperations(doc).find((op) => op.operationId === id)?.path);
      const roles = Object.fromEntries(
        (stream?.events ?? []).flatMap((e) =>
          e.names.map((n) => [n, n === STREAM_ENDED ? 'ended' : e.closes ? 'closes' : 'event']),
        ),
      );
      expect(value.events).toEqual(roles);
    }
  });

  it('names no branch for an event the spec does not know', () => {
    const stream = eventStream(doc, 'streamOperationOutput');
    expect(stream && streamEventBranch(stream, 'progress')).toBeUndefined();
  });

  it.each(['getMe', 'listComputers', 'getOperation'])('%s is not a stream', (id) => {
    expect(eventStream(doc, id)).toBeUndefined();
  });

  it('refuses an operationId the document does not have', () => {
    expect(() => eventStream(doc, 'streamNothing')).toThrow('no operation streamNothing');
  });
});

// The shapes the bundle does not have, in a small document.
const sse = (items: unknown) => ({
  '200': { description: 'ok', content: { 'text/event-stream': { schema: { type: 'array', items } } } },
});
const tiny: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: {
    '/a': {
      get: { operationId: 'streamA', responses: sse({ $ref: '#/components/schemas/Item' }) },
      // Not a GET: never a stream operation, whatever it answers.
      post: { operationId: 'postA', responses: sse({ $ref: '#/components/schemas/Item' }) },
    },
    '/b': { get: { operationId: 'streamB', responses: sse({ $ref: '#/components/schemas/NoData' }) } },
    '/c': { get: { operationId: 'streamC', responses: sse({ type: 'object' }) } },
  },
  components: {
    schemas: {
      Ping: { type: 'object' },
      Item: {
        properties: { event: { type: 'string', enum: ['ping'] }, id: { type: 'string' } },
        oneOf: [
          {
            properties: {
              event: { const: 'ping' },
              data: { contentSchema: { $ref: '#/components/schemas/Ping' } },
            },
          },
        ],
      },
      NoData: { oneOf: [{ properties: { event: { const: 'ping' }, data: { type: 'string' } } }] },
    },
  },
};

describe('eventStream on shapes the bundle lacks', () => {
  it('reads a stream without stream.ended, final undefined and not extensible', () => {
    const stream = eventStream(tiny, 'streamA');
    expect(stream).toMatchObject({
      itemSchema: 'Item',
      events: [{ names: ['ping'], dataSchema: 'Ping' }],
      extensible: false,
    });
    expect(stream?.final).toBeUndefined();
  });

  it('counts only GETs as stream operations', () => {
    const post = listOperations(tiny).find((o) => o.operationId === 'postA');
    expect(post && isStreamOperation(tiny, post)).toBe(false);
    expect(eventStream(tiny, 'postA')).toBeUndefined();
  });

  it.each([
    ['streamB', 'oneOf[0] names no event or no data.contentSchema.$ref'],
    ['streamC', 'the schema is not an array of a components schema'],
  ])('refuses %s: %s', (id, message) => {
    expect(() => eventStream(tiny, id)).toThrow(message);
  });
});

describe('the generated StreamEvent types', () => {
  // The generated interface, read as text: its keys and members must be what the run-time reader finds.
  const schemaTs = readFileSync(new URL('../src/generated/schema.ts', import.meta.url), 'utf8');
  const block = schemaTs.slice(schemaTs.indexOf('export interface streamEvents {'));

  it('has one entry per stream operation', () => {
    const keys = [...(block.split('\n}')[0] ?? '').matchAll(/^ {4}"(\w+)":/gm)].map((m) => m[1]);
    expect(keys.sort()).toEqual(streamOperationIds(doc).sort());
    expect(keys.length).toBeGreaterThan(0);
  });

  it.each(streamOperationIds(doc))('%s: one member per branch, with its names and data schema', (id) => {
    const entry = block.split(`    "${id}": `)[1]?.split(/;\n {4}"|;\n}/)[0] ?? '';
    const members = entry.split('\n        | ');
    const stream = eventStream(doc, id);
    expect(members).toHaveLength(stream?.events.length ?? -1);
    for (const [index, branch] of (stream?.events ?? []).entries()) {
      expect(members[index]).toContain(`event: ${branch.names.map((n) => JSON.stringify(n)).join(' | ')};`);
      expect(members[index]).toContain(`data: components["schemas"]["${branch.dataSchema}"]`);
    }
  });

  // The member of a stream's union that names event N, as narrowing on `event` finds it.
  type Named<U, N extends string> = U extends { event: infer E } ? (N extends E ? U : never) : never;

  it('narrows an event by its name to the data its branch names', () => {
    type Computer = Named<StreamEvent<'streamWorkspaceEvents'>, 'computer.created'>;
    expectTypeOf<Computer['data']>().toEqualTypeOf<components['schemas']['ComputerEvent']>();
    expectTypeOf<Computer['event']>().toEqualTypeOf<
      'computer.created' | 'computer.updated' | 'computer.deleted'
    >();
    expectTypeOf<Computer['id']>().toEqualTypeOf<string>();
    type Exit = Named<StreamEvent<'streamOperationOutput'>, 'exit'>;
    expectTypeOf<Exit['data']>().toEqualTypeOf<components['schemas']['CommandExit']>();
    expectTypeOf<'getMe'>().not.toMatchTypeOf<StreamOperationId>();
    expectTypeOf<'streamWorkspaceEvents'>().toMatchTypeOf<StreamOperationId>();
  });
});
