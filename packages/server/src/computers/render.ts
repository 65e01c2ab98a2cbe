import type { Schema } from '@svc/contract';
import type { KeyRow } from '../identity/repositories/keys.js';
import type { MemberRow } from '../identity/repositories/members.js';
import type { ServiceAccountRow } from '../identity/repositories/service-accounts.js';
import type { WorkspaceRow } from '../identity/repositories/workspaces.js';
import type { FileStat } from './files/driver.js';
import type { ComputerRow, ComputerView } from './repositories/computers.js';
import type { OperationRow } from './repositories/operations.js';
import type { SnapshotRow } from './repositories/snapshots.js';
import { fieldsOf, renderShape, rfc3339, type WireShape } from './wire-shape.js';

// Rows → the spec's resource shapes (design §3). Optional fields are left out, never null: the spec's
// types are not nullable. Timestamps are RFC 3339 in UTC.
//
// A resource the event log records is described once, as a WireShape: the API renders it by walking
// the description, and the event log's snapshot of it (the SQL of `svc_event_snapshot`, made by
// repositories/event-snapshot.ts and installed at start-up) keeps exactly the values of the row the
// description reads. A new field is one line here: no migration, no second list.

const time = rfc3339;

const workspace = fieldsOf<WorkspaceRow>();
/** A workspace's wire shape. */
export const WORKSPACE_SHAPE: WireShape<WorkspaceRow, Schema<'Workspace'>> = {
  kind: 'workspace',
  source: { table: 'workspaces' },
  fields: {
    id: workspace.plain('id'),
    name: workspace.plain('name'),
    display_name: workspace.derived(
      { display_name: 'plain', name: 'plain' },
      (row) => row.display_name || row.name,
    ),
    lifetime_defaults: workspace.optional('lifetime_defaults'),
    created_at: workspace.time('created_at'),
    updated_at: workspace.time('updated_at'),
  },
};

/** @example renderWorkspace(row) // { id, name, display_name, created_at, updated_at } */
export function renderWorkspace(row: WorkspaceRow): Schema<'Workspace'> {
  return renderShape(WORKSPACE_SHAPE, row, undefined);
}

const member = fieldsOf<MemberRow>();
/** A member's wire shape; its principal's kind is on its principal. */
export const MEMBER_SHAPE: WireShape<MemberRow, Schema<'Member'>> = {
  kind: 'member',
  source: {
    table: 'members',
    from: 'principals p WHERE p.id = r.principal_id',
    columns: { principal_kind: 'p.kind' },
  },
  fields: {
    id: member.plain('id'),
    workspace_id: member.plain('workspace_id'),
    principal_id: member.plain('principal_id'),
    principal_kind: member.plain('principal_kind'),
    role: member.plain('role'),
    created_at: member.time('created_at'),
    updated_at: member.time('updated_at'),
  },
};

/** @example renderMember(row) */
export function renderMember(row: MemberRow): Schema<'Member'> {
  return renderShape(MEMBER_SHAPE, row, undefined);
}

const account = fieldsOf<ServiceAccountRow>();
/**
 * A service account's wire shape: its display name is on its principal, its role is its membership
 * in the owning workspace (a row of its own, which a trigger hands in when the account's goes).
 */
export const SERVICE_ACCOUNT_SHAPE: WireShape<ServiceAccountRow, Schema<'ServiceAccount'>> = {
  kind: 'service_account',
  source: {
    table: 'service_accounts',
    rows: { m: { table: 'members', on: 'm.workspace_id = r.workspace_id AND m.principal_id = r.id' } },
    from: 'principals p WHERE p.id = r.id',
    columns: { display_name: 'p.display_name', role: 'm.role' },
  },
  fields: {
    id: account.plain('id'),
    workspace_id: account.plain('workspace_id'),
    name: account.plain('name'),
    display_name: account.derived(
      { display_name: 'plain', name: 'plain' },
      (row) => row.display_name || row.name,
    ),
    role: account.plain('role'),
    created_at: account.time('created_at'),
    updated_at: account.time('updated_at'),
  },
};

/** @example renderServiceAccount(row) */
export function renderServiceAccount(row: ServiceAccountRow): Schema<'ServiceAccount'> {
  return renderShape(SERVICE_ACCOUNT_SHAPE, row, undefined);
}

const key = fieldsOf<KeyRow>();
/** A key's wire shape: the public half only; `kid`, `alg` and `use` are added so the JWK stands on its own. */
export const KEY_SHAPE: WireShape<KeyRow, Schema<'Key'>> = {
  kind: 'key',
  source: { table: 'keys' },
  fields: {
    id: key.plain('id'),
    service_account_id: key.derived({ principal_id: 'plain' }, (row) => row.principal_id),
    algorithm: key.plain('algorithm'),
    public_key: key.derived({ public_jwk: 'plain', id: 'plain', algorithm: 'plain' }, (row) => {
      const jwk = row.public_jwk;
      return {
        kty: jwk.kty as Schema<'Jwk'>['kty'],
        crv: jwk.crv as Schema<'Jwk'>['crv'],
        x: String(jwk.x),
        ...(jwk.y ? { y: jwk.y } : {}),
        kid: row.id,
        alg: row.algorithm,
        use: 'sig',
      };
    }),
    state: key.plain('state'),
    expires_at: key.optionalTime('expires_at'),
    last_used_at: key.optionalTime('last_used_at'),
    created_at: key.time('created_at'),
    updated_at: key.time('updated_at'),
  },
};

/** The public half only; `kid`, `alg` and `use` are added so the JWK stands on its own. */
export function renderKey(row: KeyRow): Schema<'Key'> {
  return renderShape(KEY_SHAPE, row, undefined);
}

type LifetimeColumns = 'idle_timeout_seconds' | 'expires_at' | 'on_end' | 'last_active_at';

/**
 * A computer's `lifetime`: present exactly when an idle timeout or an expiry is set (design §4.1).
 * Rows read before migration 015's fields existed (old events) have none.
 *
 * @example renderLifetime(row) // { idle_timeout_seconds: 1800, on_end: 'stop', last_active_at: '…' }
 */
function renderLifetime(
  row: Pick<ComputerRow | ComputerView, LifetimeColumns>,
): Schema<'ComputerLifetime'> | undefined {
  const idle = row.idle_timeout_seconds ?? null;
  const expires = row.expires_at ?? null;
  if ((idle === null && expires === null) || !row.last_active_at) return undefined;
  return {
    ...(idle === null ? {} : { idle_timeout_seconds: idle }),
    ...(expires === null ? {} : { expires_at: time(expires) }),
    on_end: row.on_end ?? 'stop',
    last_active_at: time(row.last_active_at),
  };
}

/** @example renderSnapshot(row) // { id, workspace_id, name, state: 'ready', computer_id, image, size_bytes, … } */
export function renderSnapshot(row: SnapshotRow): Schema<'Snapshot'> {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    ...(row.description === null ? {} : { description: row.description }),
    state: row.state,
    computer_id: row.computer_id,
    image: row.image,
    ...(row.size_bytes === null ? {} : { size_bytes: Number(row.size_bytes) }),
    operation_id: row.operation_id,
    created_by: row.created_by,
    created_at: time(row.created_at),
    updated_at: time(row.updated_at),
  };
}

const computer = fieldsOf<ComputerRow | ComputerView>();
/** A computer's wire shape. */
export const COMPUTER_SHAPE: WireShape<ComputerRow | ComputerView, Schema<'Computer'>> = {
  kind: 'computer',
  source: { table: 'computers' },
  fields: {
    id: computer.plain('id'),
    workspace_id: computer.plain('workspace_id'),
    name: computer.plain('name'),
    state: computer.plain('state'),
    size: computer.plain('size'),
    image: computer.plain('image'),
    snapshot_id: computer.optional('snapshot_id'),
    labels: computer.plain('labels'),
    current_operation_id: computer.optional('current_operation_id'),
    lifetime: computer.derived(
      { idle_timeout_seconds: 'plain', expires_at: 'time', on_end: 'plain', last_active_at: 'time' },
      renderLifetime,
    ),
    started_at: computer.optionalTime('started_at'),
    stopped_at: computer.optionalTime('stopped_at'),
    created_at: computer.time('created_at'),
    updated_at: computer.time('updated_at'),
  },
};

/** @example renderComputer(row) */
export function renderComputer(row: ComputerRow | ComputerView): Schema<'Computer'> {
  return renderShape(COMPUTER_SHAPE, row, undefined);
}

// The `details` keys the spec's ErrorDetails allows (it is closed); a driver's own keys stay in the logs.
// A record of every key, so a key added to or removed from the spec does not compile until listed here.
const DETAIL_KEYS = Object.keys({
  field_violations: true,
  current_state: true,
  allowed_from: true,
  operation_id: true,
  quota: true,
  limit: true,
  policy: true,
  retry_after_seconds: true,
  limit_bytes: true,
  path: true,
  entry: true,
  rule: true,
  reason: true,
  resource: true,
} satisfies Record<keyof Schema<'ErrorDetails'>, true>);

/**
 * A failed operation's `error`, in the shape of an error response's body: its `request_id` is the
 * operation's id (the request that started it is not the one reading it), its `details` only the
 * keys the spec's `ErrorDetails` allows. Also the `failed` event of a command's output log.
 *
 * @example
 * renderOperationError(row.error, row.id); // { code: 'internal', message, details: {}, request_id }
 */
export function renderOperationError(
  error: NonNullable<OperationRow['error']>,
  operationId: string,
): Schema<'ErrorBody'> {
  const details: Record<string, unknown> = {};
  for (const key of DETAIL_KEYS) if (error.details?.[key] !== undefined) details[key] = error.details[key];
  return {
    code: error.code as Schema<'ErrorCode'>,
    message: error.message,
    details: details as Schema<'ErrorDetails'>,
    request_id: operationId,
  };
}

const operation = fieldsOf<OperationRow, { result: boolean }>();
/**
 * An operation's wire shape. A failed one carries `error` in the shape of an error response's body;
 * its `request_id` is the operation's id (the request that started it is not the one reading it). A
 * command's output (`result`) is shown only when `options.result` says the reader may run commands
 * (the `exec` permission, design §8): a viewer reads the operation without it, and the event log
 * never keeps it (nor `command`, its stdin).
 */
export const OPERATION_SHAPE: WireShape<OperationRow, Schema<'Operation'>, { result: boolean }> = {
  kind: 'operation',
  source: { table: 'operations' },
  fields: {
    id: operation.plain('id'),
    workspace_id: operation.plain('workspace_id'),
    type: operation.plain('type'),
    state: operation.plain('state'),
    target: operation.derived({ target_id: 'plain' }, (row) => ({
      type: 'computer' as const,
      id: row.target_id,
    })),
    created_by: operation.plain('created_by'),
    trigger: operation.optional('trigger'),
    progress: operation.plain('progress'),
    error: operation.derived({ error: 'plain', id: 'plain' }, (row) =>
      row.error ? renderOperationError(row.error, row.id) : undefined,
    ),
    result: operation.apiOnly((row, options) => (row.result && options.result ? row.result : undefined)),
    started_at: operation.optionalTime('started_at'),
    completed_at: operation.optionalTime('completed_at'),
    created_at: operation.time('created_at'),
    updated_at: operation.time('updated_at'),
  },
};

/**
 * An operation, with its command's output (`result`) only when `options.result` says the reader may
 * run commands (see {@link OPERATION_SHAPE}).
 *
 * @example renderOperation(row, { result: false })
 */
export function renderOperation(row: OperationRow, options: { result: boolean }): Schema<'Operation'> {
  return renderShape(OPERATION_SHAPE, row, options);
}

/** The shapes of the resources the workspace event log records, by their event noun. */
export const EVENT_SHAPES = [
  WORKSPACE_SHAPE,
  COMPUTER_SHAPE,
  OPERATION_SHAPE,
  MEMBER_SHAPE,
  SERVICE_ACCOUNT_SHAPE,
  KEY_SHAPE,
] as const;

/**
 * A path in a computer as the spec's `FileInfo`: `mode` as four octal digits, `modified_at` RFC 3339
 * in UTC to the second (the file system's mtime; nothing finer is promised), `link_target` only for
 * a symlink.
 *
 * @example
 * renderFileInfo(stat) // { path: '/home/svc/a.txt', name: 'a.txt', type: 'file', size: 2, mode: '0644', modified_at: '2026-11-10T12:00:05Z' }
 */
export function renderFileInfo(stat: FileStat): Schema<'FileInfo'> {
  return {
    path: stat.path,
    name: stat.name,
    type: stat.type,
    size: stat.size,
    mode: (stat.mode & 0o7777).toString(8).padStart(4, '0'),
    modified_at: toSecond(stat.modifiedAt),
    ...(stat.type === 'symlink' && stat.linkTarget ? { link_target: stat.linkTarget } : {}),
  };
}

/** RFC 3339 in UTC, to the second (`2026-11-10T12:00:05Z`). */
function toSecond(value: Date): string {
  return new Date(Math.floor(value.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
