const MAX_CELL = 60;

/**
 * A cell's text: scalars as they are, a flat map as `k=v,k=v` (labels), anything else as compact
 * JSON; cut at 60 characters.
 *
 * @example
 * cell({ team: 'a', env: 'dev' }); // 'team=a,env=dev'
 */
export function cell(value: unknown): string {
  let text: string;
  if (value === null || value === undefined) text = '';
  else if (
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v !== 'object')
  ) {
    text = Object.entries(value)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
  } else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text;
}

/** How a table is laid out: `--columns`, else chosen to fit `width` (80 unless the terminal says). */
export interface TableOptions {
  /** Fields to show, in order; dotted paths reach into objects (`target.id`). */
  columns?: readonly string[] | undefined;
  width?: number | undefined;
}

const GAP = 2;

/** A field of a row by dotted path (`target.id`); a field literally named with a dot wins. */
export function pick(row: Record<string, unknown>, path: string): unknown {
  if (path in row) return row[path];
  let value: unknown = row;
  for (const part of path.split('.')) value = (value as Record<string, unknown> | undefined)?.[part];
  return value;
}

/**
 * The default columns of rows, by the shape of the schema's field names: the identity (`name`, else
 * `id`) first, then descriptive fields in schema order, then references (`…_id`), then timestamps
 * (`…_at`); each kept only if the table still fits `width`, so a wide field is skipped and a narrower
 * one after it can still show. Nested objects and arrays are left to `-o json|yaml`.
 *
 * @example
 * defaultColumns([{ id: '01…', name: 'box', state: 'running', workspace_id: '01…', created_at: '…' }], 80);
 * // ['name', 'state', 'id', 'created_at']
 */
export function defaultColumns(rows: readonly Record<string, unknown>[], width = 80): string[] {
  const keys: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!keys.includes(key)) keys.push(key);
  const flat = (key: string) =>
    rows.every((row) => {
      const v = row[key];
      return (
        v === null ||
        typeof v !== 'object' ||
        (!Array.isArray(v) && Object.values(v).every((x) => typeof x !== 'object'))
      );
    });
  const identity = keys.includes('name') ? 'name' : keys.includes('id') ? 'id' : undefined;
  const rank = (key: string) => (key.endsWith('_at') ? 3 : key === 'id' || key.endsWith('_id') ? 2 : 1);
  const rest = keys
    .filter((key) => key !== identity && key !== 'workspace_id' && flat(key))
    .sort((a, b) => rank(a) - rank(b));
  const widthOf = (key: string) => Math.max(key.length, ...rows.map((row) => cell(row[key]).length));
  const chosen = identity ? [identity] : [];
  let used = identity ? widthOf(identity) : -GAP;
  for (const key of rest) {
    const w = widthOf(key);
    if (used + GAP + w <= width) {
      chosen.push(key);
      used += GAP + w;
    }
  }
  return chosen;
}

/**
 * Aligned columns with an upper-case header row: `--columns` when given, else
 * {@link defaultColumns} fitted to the width (80 by default).
 *
 * @example
 * table([{ id: 'a', state: 'running' }]); // 'ID  STATE\na   running\n'
 */
export function table(rows: readonly Record<string, unknown>[], options: TableOptions = {}): string {
  const columns = options.columns?.length ? [...options.columns] : defaultColumns(rows, options.width ?? 80);
  const lines = [
    columns.map((c) => c.toUpperCase()),
    ...rows.map((row) => columns.map((c) => cell(pick(row, c)))),
  ];
  const widths = columns.map((_, i) => Math.max(...lines.map((line) => (line[i] as string).length)));
  return `${lines
    .map((line) =>
      line
        .map((text, i) => (i === line.length - 1 ? text : text.padEnd(widths[i] as number)))
        .join(' '.repeat(GAP))
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/**
 * `field  value` lines for one record; nested objects flattened with dots (`principal.id`), arrays
 * of records returned apart so the caller can print them as tables.
 *
 * @example
 * fields({ id: 'a', target: { type: 'computer' } }); // { text: 'id           a\ntarget.type  computer\n', lists: [] }
 */
export function fields(record: Record<string, unknown>): {
  text: string;
  lists: [string, Record<string, unknown>[]][];
} {
  const rows: [string, string][] = [];
  const lists: [string, Record<string, unknown>[]][] = [];
  const walk = (value: Record<string, unknown>, prefix: string) => {
    for (const [key, v] of Object.entries(value)) {
      const name = prefix + key;
      if (
        Array.isArray(v) &&
        v.length > 0 &&
        v.every((x) => typeof x === 'object' && x !== null && !Array.isArray(x))
      )
        lists.push([name, v as Record<string, unknown>[]]);
      else if (
        v &&
        typeof v === 'object' &&
        !Array.isArray(v) &&
        Object.values(v).some((x) => typeof x === 'object' && x !== null)
      )
        walk(v as Record<string, unknown>, `${name}.`);
      else if (
        v &&
        typeof v === 'object' &&
        !Array.isArray(v) &&
        key !== 'labels' &&
        Object.keys(v).length > 0
      )
        walk(v as Record<string, unknown>, `${name}.`);
      else rows.push([name, cell(v)]);
    }
  };
  walk(record, '');
  const width = Math.max(0, ...rows.map(([name]) => name.length));
  return {
    text:
      rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`.trimEnd()).join('\n') +
      (rows.length ? '\n' : ''),
    lists,
  };
}
