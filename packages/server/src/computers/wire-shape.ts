// A resource's wire shape, written once as data (render.ts holds them): which values of its row each
// field of the spec's schema reads and how it shows them. The API's renderers walk it, and
// repositories/event-snapshot.ts makes from it the SQL that keeps those values in the event log, so
// an event can show a resource exactly as the API does without a second list of its fields.

/** How a value of the row is kept in an event's snapshot: as it is, or a time as RFC 3339 text. */
export type Encoding = 'plain' | 'time';

/** One value of the row a field reads, by its key in the row (and in the event's snapshot). */
export interface Column {
  key: string;
  encoding: Encoding;
}

/** One field of the wire shape: the row's values it reads, and its value (`undefined`: left out). */
export interface Field<Row, Options, Value> {
  readonly columns: readonly Column[];
  readonly render: (row: Row, options: Options) => Value | undefined;
}

/** Where the event log's snapshot of a resource reads its row (see repositories/event-snapshot.ts). */
export interface SnapshotSource {
  /** The resource's table: the snapshot function's row parameter `r`. */
  table: string;
  /** Further rows the function takes, by alias, with how `svc_event_snapshot` finds each from `r`. */
  rows?: Readonly<Record<string, { table: string; on: string }>>;
  /** Rows looked up by the function, as a FROM clause with its WHERE (`principals p WHERE p.id = r.id`). */
  from?: string;
  /** The SQL of a key that is no column `r.<key>` of the resource's table. */
  columns?: Readonly<Record<string, string>>;
}

/**
 * A resource's wire shape: its event noun, where its snapshot reads its row, and one field for every
 * key of the spec's schema (a key added to the spec does not compile until it is described here).
 */
export interface WireShape<Row, Wire, Options = undefined> {
  kind: string;
  source: SnapshotSource;
  fields: { readonly [K in keyof Wire]-?: Field<Row, Options, Wire[K]> };
}

/**
 * A time as RFC 3339 text in UTC with milliseconds; text (a snapshot's, a view's) passes as it is.
 *
 * @example rfc3339(new Date(0)) // '1970-01-01T00:00:00.000Z'
 */
export const rfc3339 = (value: Date | string): string =>
  typeof value === 'string' ? value : value.toISOString();

/**
 * The field builders for rows of type `Row`. Rows read for the API carry times as `Date` or as text;
 * an event's snapshot carries them as text; both render alike.
 *
 * @example
 * const f = fieldsOf<MemberRow>();
 * const fields = { id: f.plain('id'), created_at: f.time('created_at') };
 */
export function fieldsOf<Row, Options = undefined>() {
  type Key = keyof Row & string;
  const read = (row: Row, key: Key): unknown => row[key];
  return {
    /** The row's value as it is. */
    plain: <K extends Key>(key: K): Field<Row, Options, Row[K]> => ({
      columns: [{ key, encoding: 'plain' }],
      render: (row) => row[key],
    }),
    /** The row's value, left out when it is empty (`null`, absent, `''`). */
    optional: <K extends Key>(key: K): Field<Row, Options, NonNullable<Row[K]>> => ({
      columns: [{ key, encoding: 'plain' }],
      render: (row) => (row[key] ? (row[key] as NonNullable<Row[K]>) : undefined),
    }),
    /** A time, as RFC 3339 text in UTC with milliseconds. */
    time: (key: Key): Field<Row, Options, string> => ({
      columns: [{ key, encoding: 'time' }],
      render: (row) => rfc3339(read(row, key) as Date | string),
    }),
    /** A time that may be unset, left out when it is. */
    optionalTime: (key: Key): Field<Row, Options, string> => ({
      columns: [{ key, encoding: 'time' }],
      render: (row) => {
        const value = read(row, key) as Date | string | null | undefined;
        return value ? rfc3339(value) : undefined;
      },
    }),
    /** A value made of several of the row's, which `render` alone may read. */
    derived: <K extends Key, Value>(
      columns: Readonly<Record<K, Encoding>>,
      render: (row: Pick<Row, K>, options: Options) => Value | undefined,
    ): Field<Row, Options, Value> => ({
      columns: Object.entries<Encoding>(columns).map(([key, encoding]) => ({ key, encoding })),
      render,
    }),
    /** A value the API shows and the event log never keeps (an operation's `result`). */
    apiOnly: <Value>(
      render: (row: Row, options: Options) => Value | undefined,
    ): Field<Row, Options, Value> => ({
      columns: [],
      render,
    }),
  };
}

/**
 * `row` in the shape's wire form: its fields in the order they are described, each left out when it
 * renders `undefined`.
 *
 * @example
 * const member = renderShape(MEMBER, row, undefined); // { id, workspace_id, principal_id, … }
 */
export function renderShape<Row, Wire, Options>(
  shape: WireShape<Row, Wire, Options>,
  row: Row,
  options: Options,
): Wire {
  const wire: Record<string, unknown> = {};
  for (const name in shape.fields) {
    const value = shape.fields[name].render(row, options);
    if (value !== undefined) wire[name] = value;
  }
  return wire as Wire;
}

/**
 * The values of the row a shape reads, each once, in the order its fields read them: what the event
 * log's snapshot of the resource must hold.
 *
 * @example
 * shapeColumns(MEMBER) // [{ key: 'id', encoding: 'plain' }, …, { key: 'updated_at', encoding: 'time' }]
 */
export function shapeColumns(shape: WireShape<never, unknown, never>): Column[] {
  const columns = new Map<string, Column>();
  for (const field of Object.values<Field<never, never, unknown>>(shape.fields as never)) {
    for (const column of field.columns) {
      const seen = columns.get(column.key);
      if (seen && seen.encoding !== column.encoding)
        throw new Error(
          `${shape.kind}: ${column.key} is read both as ${seen.encoding} and as ${column.encoding}`,
        );
      columns.set(column.key, column);
    }
  }
  return [...columns.values()];
}
