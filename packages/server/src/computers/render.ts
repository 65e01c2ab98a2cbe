import type { Schema } from '@svc/contract';
import type { KeyRow } from '../identity/repositories/keys.js';
import type { MemberRow } from '../identity/repositories/members.js';
import type { ServiceAccountRow } from '../identity/repositories/service-accounts.js';
import type { WorkspaceRow } from '../identity/repositories/workspaces.js';
import type { FileStat } from './files/driver.js';
import type { ComputerRow, ComputerView } from './repositories/computers.js';
import type { OperationRow } from './repositories/operations.js';
import type { SnapshotRow } from './repositories/snapshots.js';

// Rows → the spec's resource shapes (design §3). Optional fields are left out, never null: the spec's
// types are not nullable. Timestamps are RFC 3339 in UTC.

const time = (value: Date | string): string => (typeof value === 'string' ? value : value.toISOString());

/** @example renderWorkspace(row) // { id, name, display_name, created_at, updated_at } */
export function renderWorkspace(row: WorkspaceRow): Schema<'Workspace'> {
  return {
    id: row.id,
    name: row.name,
    display_name: row.display_name || row.name,
    ...(row.lifetime_defaults ? { lifetime_defaults: row.lifetime_defaults } : {}),
    created_at: time(row.created_at),
    updated_at: time(row.updated_at),
  };
}

/** @example renderMember(row) */
export function renderMember(row: MemberRow): Schema<'Member'> {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    principal_id: row.principal_id,
    principal_kind: row.principal_kind,
    role: row.role,
    created_at: time(row.created_at),
    updated_at: time(row.updated_at),
  };
}

/** @example renderServiceAccount(row) */
export function renderServiceAccount(row: ServiceAccountRow): Schema<'ServiceAccount'> {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    display_name: row.display_name || row.name,
    role: row.role,
    created_at: time(row.created_at),
    updated_at: time(row.updated_at),
  };
}

/** The public half only; `kid`, `alg` and `use` are added so the JWK stands on its own. */
export function renderKey(row: KeyRow): Schema<'Key'> {
  const jwk = row.public_jwk;
  return {
    id: row.id,
    service_account_id: row.principal_id,
    algorithm: row.algorithm,
    public_key: {
      kty: jwk.kty as Schema<'Jwk'>['kty'],
      crv: jwk.crv as Schema<'Jwk'>['crv'],
      x: String(jwk.x),
      ...(jwk.y ? { y: jwk.y } : {}),
      kid: row.id,
      alg: row.algorithm,
      use: 'sig',
    },
    state: row.state,
    ...(row.expires_at ? { expires_at: time(row.expires_at) } : {}),
    ...(row.last_used_at ? { last_used_at: time(row.last_used_at) } : {}),
    created_at: time(row.created_at),
    updated_at: time(row.updated_at),
  };
}

/**
 * A computer's `lifetime`: present exactly when an idle timeout or an expiry is set (design §4.1).
 * Rows read before migration 015's fields existed (old events) have none.
 *
 * @example renderLifetime(row) // { idle_timeout_seconds: 1800, on_end: 'stop', last_active_at: '…' }
 */
function renderLifetime(row: ComputerRow | ComputerView): Schema<'ComputerLifetime'> | undefined {
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

/** @example renderComputer(row) */
export function renderComputer(row: ComputerRow | ComputerView): Schema<'Computer'> {
  const lifetime = renderLifetime(row);
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    state: row.state,
    size: row.size,
    image: row.image,
    ...(row.snapshot_id ? { snapshot_id: row.snapshot_id } : {}),
    labels: row.labels,
    ...(row.current_operation_id ? { current_operation_id: row.current_operation_id } : {}),
    ...(lifetime ? { lifetime } : {}),
    ...(row.started_at ? { started_at: time(row.started_at) } : {}),
    ...(row.stopped_at ? { stopped_at: time(row.stopped_at) } : {}),
    created_at: time(row.created_at),
    updated_at: time(row.updated_at),
  };
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

/**
 * An operation. A failed one carries `error` in the shape of an error response's body; its
 * `request_id` is the operation's id (the request that started it is not the one reading it). A
 * command's output (`result`) is shown only when `options.result` says the reader may run commands
 * (the `exec` permission, design §8): a viewer reads the operation without it.
 */
export function renderOperation(row: OperationRow, options: { result: boolean }): Schema<'Operation'> {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    type: row.type,
    state: row.state,
    target: { type: 'computer', id: row.target_id },
    created_by: row.created_by,
    ...(row.trigger ? { trigger: row.trigger } : {}),
    progress: row.progress,
    ...(row.error ? { error: renderOperationError(row.error, row.id) } : {}),
    ...(row.result && options.result ? { result: row.result } : {}),
    ...(row.started_at ? { started_at: time(row.started_at) } : {}),
    ...(row.completed_at ? { completed_at: time(row.completed_at) } : {}),
    created_at: time(row.created_at),
    updated_at: time(row.updated_at),
  };
}

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
