// The compatibility policy of event streams, kind by kind: each row changes one thing in a small
// bundled contract with a stream operation (`text/event-stream`: an array of an item schema whose
// `oneOf` branches tie event names to the schema of their data, `data.contentSchema`) and says how
// tools/spec-compat.mjs must classify it and which operations it must be reported under.
import { describe, expect, it } from 'vitest';
import { type Change, compareContracts, POLICY } from '../spec-compat.mjs';

// biome-ignore lint/suspicious/noExplicitAny: the fixture is a plain JSON document edited freely
type Doc = any;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const branch = (event: { const: string } | { enum: string[] }, data: string) => ({
  required: ['event', 'data'],
  properties: { event, data: { contentSchema: ref(data) } },
});
const stream = (item: string) => ({
  description: 'The events.',
  content: { 'text/event-stream': { schema: { type: 'array', items: ref(item) } } },
});

/** A bundled contract with one stream operation and one JSON operation whose field holds JSON text. */
function contract(): Doc {
  return {
    openapi: '3.1.0',
    info: { title: 'Streams', version: '1.0.0' },
    paths: {
      '/things/{thing}/events': {
        get: { operationId: 'streamThingEvents', responses: { '200': stream('ThingEventItem') } },
      },
      '/things/{thing}/snapshot': {
        get: {
          operationId: 'getThingSnapshot',
          responses: {
            '200': {
              description: 'The last event, as JSON text.',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      snapshot: {
                        type: 'string',
                        contentMediaType: 'application/json',
                        contentSchema: ref('ThingEvent'),
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
    components: {
      schemas: {
        ThingEventItem: {
          type: 'object',
          required: ['event', 'id', 'data'],
          properties: {
            event: {
              type: 'string',
              'x-extensible-enum': true,
              enum: ['thing.created', 'thing.deleted', 'stream.ended'],
            },
            id: { type: 'string', pattern: '^[0-9]+$' },
            data: { type: 'string', contentMediaType: 'application/json' },
          },
          oneOf: [
            branch({ enum: ['thing.created', 'thing.deleted'] }, 'ThingEvent'),
            branch({ const: 'stream.ended' }, 'StreamEnded'),
          ],
        },
        ThingEvent: {
          type: 'object',
          required: ['id', 'thing'],
          properties: {
            id: { type: 'string' },
            thing: { type: 'object', properties: { name: { type: 'string', maxLength: 63 } } },
          },
        },
        OtherEvent: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        StreamEnded: { type: 'object', required: ['reason'], properties: { reason: { type: 'string' } } },
      },
    },
  };
}

const EVENTS = 'GET /things/{thing}/events';
const SNAPSHOT = 'GET /things/{thing}/snapshot';
const schemas = (doc: Doc) => doc.components.schemas;
const item = (doc: Doc) => schemas(doc).ThingEventItem;

interface Row {
  change: (doc: Doc) => void;
  kind: string;
  class: 'breaking' | 'additive' | 'deprecation';
  operations: string[];
}

const rows: Record<string, Row> = {
  'a new event name, in the enum and a branch of its own': {
    change: (d) => {
      item(d).properties.event.enum.push('thing.renamed');
      item(d).oneOf.push(branch({ const: 'thing.renamed' }, 'OtherEvent'));
    },
    kind: 'stream-event-added',
    class: 'additive',
    operations: [EVENTS],
  },
  'a new event name in an existing branch': {
    change: (d) => {
      item(d).properties.event.enum.push('thing.updated');
      item(d).oneOf[0].properties.event.enum.push('thing.updated');
    },
    kind: 'stream-event-added',
    class: 'additive',
    operations: [EVENTS],
  },
  'a new stream operation': {
    change: (d) => {
      d.paths['/things/{thing}/output'] = {
        get: { operationId: 'streamThingOutput', responses: { '200': stream('ThingEventItem') } },
      };
    },
    kind: 'operation-added',
    class: 'additive',
    operations: ['GET /things/{thing}/output'],
  },
  "a new optional field in an event's data": {
    change: (d) => {
      schemas(d).ThingEvent.properties.actor = { type: 'string' };
    },
    kind: 'event-field-added-optional',
    class: 'additive',
    operations: [EVENTS],
  },
  'a removed event name': {
    change: (d) => {
      item(d).properties.event.enum = ['thing.created', 'stream.ended'];
      item(d).oneOf[0].properties.event.enum = ['thing.created'];
    },
    kind: 'stream-event-removed',
    class: 'breaking',
    operations: [EVENTS],
  },
  'a branch that names another data schema': {
    change: (d) => {
      item(d).oneOf[0].properties.data.contentSchema = ref('OtherEvent');
    },
    kind: 'stream-event-data-changed',
    class: 'breaking',
    operations: [EVENTS],
  },
  "a removed field of an event's data": {
    change: (d) => {
      delete schemas(d).ThingEvent.properties.thing;
      schemas(d).ThingEvent.required = ['id'];
    },
    kind: 'event-field-removed',
    class: 'breaking',
    operations: [EVENTS],
  },
  "a retyped field of an event's data": {
    change: (d) => {
      schemas(d).ThingEvent.properties.id = { type: 'integer' };
    },
    kind: 'event-type-changed',
    class: 'breaking',
    operations: [EVENTS],
  },
  "a new required field of an event's data (events already in the log lack it)": {
    change: (d) => {
      schemas(d).ThingEvent.properties.actor = { type: 'string' };
      schemas(d).ThingEvent.required.push('actor');
    },
    kind: 'event-field-added-required',
    class: 'breaking',
    operations: [EVENTS],
  },
  "a tighter bound deep in an event's data": {
    change: (d) => {
      schemas(d).ThingEvent.properties.thing.properties.name.maxLength = 32;
    },
    kind: 'event-constraint-tightened',
    class: 'breaking',
    operations: [EVENTS],
  },
  "a changed pattern of the events' id": {
    change: (d) => {
      item(d).properties.id.pattern = '^[0-9a-z]+$';
    },
    kind: 'response-constraint-changed',
    class: 'breaking',
    operations: [EVENTS],
  },
};

/** The JSON operation's `snapshot` is JSON text too: its contentSchema is compared as a response. */
const contentRows: Record<string, Row> = {
  'a field removed from the schema of JSON text (contentSchema) in a JSON response': {
    change: (d) => {
      delete schemas(d).ThingEvent.properties.thing;
      schemas(d).ThingEvent.required = ['id'];
    },
    kind: 'response-field-removed',
    class: 'breaking',
    operations: [SNAPSHOT],
  },
  'a field added to it': {
    change: (d) => {
      schemas(d).ThingEvent.properties.actor = { type: 'string' };
    },
    kind: 'response-field-added',
    class: 'additive',
    operations: [SNAPSHOT],
  },
};

describe('the compatibility policy of event streams', () => {
  it.each(Object.entries(rows))('%s', (_name, row) => {
    const base = contract();
    const current = contract();
    row.change(current);
    const changes: Change[] = compareContracts(base, current);
    const ofKind = changes.filter((c) => c.kind === row.kind);
    expect(ofKind.length, JSON.stringify(changes, null, 2)).toBeGreaterThan(0);
    expect(ofKind.every((c) => c.class === row.class)).toBe(true);
    expect([...new Set(ofKind.map((c) => c.operation))].sort()).toEqual([...row.operations].sort());
    // Breaking exactly when the row says so, counting only what the stream operation reports.
    const onStreams = changes.filter((c) => c.operation !== SNAPSHOT);
    expect(
      onStreams.some((c) => c.class === 'breaking'),
      JSON.stringify(onStreams, null, 2),
    ).toBe(row.class === 'breaking');
    for (const c of changes) expect(c.class).toBe(POLICY[c.kind]);
  });

  it.each(Object.entries(contentRows))('descends into contentSchema: %s', (_name, row) => {
    const current = contract();
    row.change(current);
    const ofKind = compareContracts(contract(), current).filter((c) => c.kind === row.kind);
    expect(ofKind.map((c) => c.operation)).toEqual(row.operations);
    expect(ofKind.map((c) => c.class)).toEqual([row.class]);
    expect(ofKind[0]?.message).toMatch(/^`?(new field `)?snapshot<json>\./);
  });

  it('reports a change to data several event names share once, naming them, where it is written', () => {
    const current = contract();
    delete schemas(current).ThingEvent.properties.thing;
    const removed = compareContracts(contract(), current).filter(
      (c) => c.kind === 'event-field-removed' && c.operation === EVENTS,
    );
    expect(removed).toEqual([
      expect.objectContaining({
        where: 'response 200 (text/event-stream) event thing.created|thing.deleted',
        pointer: '/components/schemas/ThingEvent/properties',
      }),
    ]);
  });

  it('finds nothing when the stream is unchanged, and reports a new event once, at its branch', () => {
    expect(compareContracts(contract(), contract())).toEqual([]);
    const current = contract();
    item(current).properties.event.enum.push('thing.renamed');
    item(current).oneOf.push(branch({ const: 'thing.renamed' }, 'OtherEvent'));
    expect(compareContracts(contract(), current)).toEqual([
      expect.objectContaining({
        kind: 'stream-event-added',
        pointer: '/components/schemas/ThingEventItem/oneOf/2',
      }),
    ]);
  });
});
