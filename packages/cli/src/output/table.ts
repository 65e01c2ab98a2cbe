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

/**
 * Aligned columns with an upper-case header row; columns are the union of the rows' keys in first-seen
 * order, `id` and `name` first.
 *
 * @example
 * table([{ id: 'a', state: 'running' }]); // 'ID  STATE\na   running\n'
 */
export function table(rows: readonly Record<string, unknown>[]): string {
  const keys: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!keys.includes(key)) keys.push(key);
  const columns = [
    ...keys.filter((k) => k === 'id' || k === 'name'),
    ...keys.filter((k) => k !== 'id' && k !== 'name'),
  ];
  const lines = [columns.map((c) => c.toUpperCase()), ...rows.map((row) => columns.map((c) => cell(row[c])))];
  const widths = columns.map((_, i) => Math.max(...lines.map((line) => (line[i] as string).length)));
  return `${lines
    .map((line) =>
      line
        .map((text, i) => (i === line.length - 1 ? text : text.padEnd(widths[i] as number)))
        .join('  ')
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
