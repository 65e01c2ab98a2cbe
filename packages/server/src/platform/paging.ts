import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';
import type { Queryable } from './db/database.js';
import { invalidArgument } from './errors.js';
import { canonicalJson } from './idempotency.js';
import { isId } from './ids.js';
import { serverSecret } from './repositories/server-secrets.js';

/** design §6: default page size, and the most one page holds (larger `limit`s are clamped). */
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;

const SIGNATURE_CHARS = 22; // 16 bytes of HMAC-SHA256, base64url
const SECRET_NAME = 'cursor_hmac';

/**
 * Signs and checks page cursors (design §6). A cursor is `base64url({"k": last id})` followed by a
 * truncated HMAC-SHA256 over the payload and the request it belongs to: the operation, the caller's
 * scope (e.g. the workspace) and every filter. So a cursor used with other filters, on another list,
 * or tampered with is `400 invalid_argument`. `limit` is not bound: a client may change the page size.
 * The key lives in the database (`server_secrets`), so every replica accepts every replica's cursors.
 *
 * @example
 * const cursors = new Cursors(await loadCursorSecret(db));
 * const next = cursors.sign('01jc…', { op: 'listComputers', workspace: id, state: 'running' });
 * cursors.verify(next, { op: 'listComputers', workspace: id, state: 'running' }); // '01jc…'
 */
export class Cursors {
  /** Imported once: an HMAC keyed by raw bytes imports them on every call (4–5× slower per cursor). */
  private readonly key: KeyObject;

  constructor(secret: Uint8Array) {
    this.key = createSecretKey(secret);
  }

  /** The cursor that continues after `lastId` for the request described by `binding`. */
  sign(lastId: string, binding: Record<string, unknown>): string {
    const payload = Buffer.from(JSON.stringify({ k: lastId })).toString('base64url');
    return payload + this.mac(payload, binding);
  }

  /**
   * The last id a cursor carries; `invalid_argument` when it is not one this list signed. `isKey`
   * checks what the cursor carries (an id by default; a list keyed otherwise, e.g. files by name, says
   * what its keys look like).
   */
  verify(cursor: string, binding: Record<string, unknown>, isKey: (key: string) => boolean = isId): string {
    const refuse = () =>
      invalidArgument(
        [{ field: 'query.cursor', description: 'is not a cursor of this list with these filters' }],
        'the cursor is invalid, or was made for other filters',
      );
    if (cursor.length <= SIGNATURE_CHARS) throw refuse();
    const payload = cursor.slice(0, -SIGNATURE_CHARS);
    const given = Buffer.from(cursor.slice(-SIGNATURE_CHARS));
    const expected = Buffer.from(this.mac(payload, binding));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refuse();
    let lastId: unknown;
    try {
      lastId = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { k?: unknown }).k;
    } catch {
      throw refuse();
    }
    if (typeof lastId !== 'string' || !isKey(lastId)) throw refuse();
    return lastId;
  }

  private mac(payload: string, binding: Record<string, unknown>): string {
    return createHmac('sha256', this.key)
      .update(`${canonicalJson(binding)}\n${payload}`)
      .digest()
      .subarray(0, 16)
      .toString('base64url');
  }
}

/**
 * The cursor key, shared by every replica (see {@link serverSecret}).
 *
 * @example
 * const secret = await loadCursorSecret(db);
 */
export function loadCursorSecret(db: Queryable): Promise<Uint8Array> {
  return serverSecret(db, SECRET_NAME);
}

/** A page request: how many, and after which id (already verified). */
export interface PageRequest {
  limit: number;
  after: string | null;
  binding: Record<string, unknown>;
}

/**
 * Reads `limit` and `cursor` of a list request: the limit clamped to 200 (validation already refused
 * values below 1), the cursor verified against `binding`.
 *
 * @example
 * const page = pageRequest(cursors, ctx.query, { op: 'listWorkspaces', principal: id });
 */
export function pageRequest(
  cursors: Cursors,
  query: { limit?: number; cursor?: string },
  binding: Record<string, unknown>,
  isKey?: (key: string) => boolean,
): PageRequest {
  const limit = Math.min(query.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const after = query.cursor === undefined ? null : cursors.verify(query.cursor, binding, isKey);
  return { limit, after, binding };
}

/**
 * Whether two page requests ask for the same page: the same limit, after the same id, for the same
 * binding (compared key by key, as the cursor's signature covers it).
 *
 * @example
 * samePageRequest(pageRequest(cursors, query, binding), pageRequest(cursors, query, { ...binding })); // true
 */
export function samePageRequest(a: PageRequest, b: PageRequest): boolean {
  if (a.limit !== b.limit || a.after !== b.after) return false;
  const keys = Object.keys(a.binding);
  return (
    keys.length === Object.keys(b.binding).length &&
    keys.every((key) => Object.hasOwn(b.binding, key) && Object.is(a.binding[key], b.binding[key]))
  );
}

/**
 * Cuts the `limit + 1` rows a keyset query fetched into a page: `has_more` when the extra row came
 * back, and then a signed `next_cursor` after the last row shown; `null` exactly when there is no more.
 *
 * @example
 * const { items, next_cursor, has_more } = toPage(cursors, page, rows);
 */
export function toPage<Row extends { id: string }>(
  cursors: Cursors,
  page: PageRequest,
  rows: Row[],
): { items: Row[]; next_cursor: string | null; has_more: boolean } {
  const has_more = rows.length > page.limit;
  const items = has_more ? rows.slice(0, page.limit) : rows;
  const last = items.at(-1);
  return {
    items,
    has_more,
    next_cursor: has_more && last ? cursors.sign(last.id, page.binding) : null,
  };
}
