import type { RepeatableStep } from '../../platform/db/index.js';
import { EVENT_SHAPES } from '../render.js';
import { type SnapshotSource, shapeColumns, type WireShape } from '../wire-shape.js';

// The event log keeps each resource as the values of its row its wire shape reads (render.ts), taken
// by the database in the transaction of the change (migration 013's triggers). The SQL that takes them
// is made here from those shapes, and installed by the server after the migrations whenever it
// changed, so it cannot disagree with what the API renders and no migration re-creates it.

/** Anything `shapeColumns` and the SQL below read of a shape, whatever its row and wire types. */
type AnyShape = Pick<WireShape<never, unknown, never>, 'kind' | 'source' | 'fields'>;

const NAME = /^[a-z_][a-z0-9_]*$/;

/** The arguments the kind's function takes: the resource's row `r`, then its further rows. */
function rowParameters(source: SnapshotSource): [alias: string, table: string][] {
  return [
    ['r', source.table],
    ...Object.entries(source.rows ?? {}).map(([alias, row]): [string, string] => [alias, row.table]),
  ];
}

/** `svc_event_data_<kind>(r <table>, …)`: the resource's row as the event log keeps it. */
function dataFunction(shape: AnyShape): string {
  const { source } = shape;
  const pairs = shapeColumns(shape).map(({ key, encoding }) => {
    if (!NAME.test(key)) throw new Error(`${shape.kind}: ${key} is no column name`);
    const sql = source.columns?.[key] ?? `r.${key}`;
    return `'${key}', ${encoding === 'time' ? `svc_rfc3339(${sql})` : sql}`;
  });
  // jsonb_build_object takes at most 100 arguments: objects of 50 pairs, joined.
  const objects: string[] = [];
  for (let i = 0; i < pairs.length; i += 50)
    objects.push(`jsonb_build_object(\n    ${pairs.slice(i, i + 50).join(',\n    ')})`);
  const parameters = rowParameters(source).map(([alias, table]) => `${alias} ${table}`);
  return `CREATE OR REPLACE FUNCTION svc_event_data_${shape.kind}(${parameters.join(', ')}) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT ${objects.join(' || ')}${source.from ? `\n    FROM ${source.from}` : ''}
$$;`;
}

/** The `WHEN` of `svc_event_snapshot` for the kind: its function, given the rows as they stand. */
function snapshotCase(shape: AnyShape): string {
  const { source } = shape;
  const aliases = rowParameters(source).map(([alias]) => alias);
  const joins = Object.entries(source.rows ?? {}).map(
    ([alias, row]) => `\n              JOIN ${row.table} ${alias} ON ${row.on}`,
  );
  return `  WHEN '${shape.kind}' THEN
    RETURN (SELECT svc_event_data_${shape.kind}(${aliases.join(', ')}) FROM ${source.table} r${joins.join('')}
             WHERE r.id = resource_id);`;
}

/**
 * The SQL of the event log's snapshots, made from `shapes`: one `svc_event_data_<kind>` function per
 * kind, and `svc_event_snapshot(kind, resource_id)`, the resource as it stands (`NULL` when it is gone).
 *
 * @example
 * const sql = eventSnapshotSql(); // 'CREATE OR REPLACE FUNCTION svc_event_data_workspace(r workspaces) …'
 */
export function eventSnapshotSql(shapes: readonly AnyShape[] = EVENT_SHAPES as readonly AnyShape[]): string {
  return `-- Made by src/computers/repositories/event-snapshot.ts from the wire shapes of src/computers/render.ts.
${shapes.map(dataFunction).join('\n\n')}

CREATE OR REPLACE FUNCTION svc_event_snapshot(kind text, resource_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
  CASE kind
${shapes.map(snapshotCase).join('\n')}
  ELSE
    RAISE EXCEPTION 'no event snapshot for %', kind;
  END CASE;
END
$$;
`;
}

/**
 * The event log's snapshot functions as a step the migrator installs after the numbered migrations
 * when they changed. Every way the server opens its database hands it in.
 *
 * @example
 * const db = await openDatabase({ ...config, repeatable: [eventSnapshotStep()] });
 */
export function eventSnapshotStep(): RepeatableStep {
  return { name: 'event_snapshot', sql: eventSnapshotSql() };
}
