import { fields, pick, type TableOptions, table } from './table.js';

/**
 * The readable form of an API answer (the default; `-o json|yaml` prints the data instead):
 * a list envelope as a table (and how to get the next page), one resource as `field  value` lines,
 * a 202 as the resource and a table of its operations. 204 prints nothing.
 *
 * @example
 * render({ computers: [{ id: 'a', name: 'box' }], next_cursor: null, has_more: false });
 * // { stdout: 'ID  NAME\na   box\n' }
 */
export function render(data: unknown, options: TableOptions = {}): { stdout: string; stderr?: string } {
  if (data === undefined || data === null || typeof data !== 'object')
    return { stdout: data === undefined || data === null ? '' : `${String(data)}\n` };
  const body = data as Record<string, unknown>;
  // A page of operations is a list too; elsewhere `operations` rides along with a resource (a 202).
  const lists = Object.entries(body).filter(([, value]) => Array.isArray(value));
  const arrays = lists.length === 1 ? lists : lists.filter(([key]) => key !== 'operations');
  if ('has_more' in body && arrays.length === 1) {
    const [noun, items] = arrays[0] as [string, Record<string, unknown>[]];
    const more =
      body.has_more === true ? `more ${noun}: add --cursor ${String(body.next_cursor)}\n` : undefined;
    return {
      stdout: items.length === 0 ? `no ${noun}\n` : table(items, options),
      ...(more ? { stderr: more } : {}),
    };
  }
  let out = '';
  for (const [key, value] of Object.entries(body)) {
    if (key === 'operations' && Array.isArray(value)) {
      out += `${out ? '\n' : ''}operations:\n${table(value as Record<string, unknown>[], { width: options.width })}`;
    } else if (value && typeof value === 'object' && !Array.isArray(value)) {
      const record = value as Record<string, unknown>;
      // `--columns` on one resource picks its fields, in that order.
      const shown = options.columns?.length
        ? Object.fromEntries(options.columns.map((c) => [c, pick(record, c)]))
        : record;
      const { text, lists } = fields(shown);
      out += (out ? '\n' : '') + text;
      for (const [name, rows] of lists) out += `\n${name}:\n${table(rows, { width: options.width })}`;
    } else {
      out += `${key}  ${String(value)}\n`;
    }
  }
  return { stdout: out };
}
