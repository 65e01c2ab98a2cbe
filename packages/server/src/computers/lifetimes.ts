import type { Schema } from '@svc/contract';
import { invalidArgument } from '../platform/errors.js';
import type { LifetimeChange } from './repositories/computers.js';

// A computer's lifetime as requests set it (design §4.1). The idle timeout's bounds (60 s..30 days) are
// the spec's `minimum`/`maximum`, checked by request validation; what the schema cannot say is
// checked here: an expiry in the future and at most 30 days after the request.

/** The latest expiry a request may set: 30 days after it (the spec's idle maximum, 2,592,000 s). */
export const MAX_LIFETIME_SECONDS = 30 * 24 * 60 * 60;

/**
 * What a request's `lifetime` changes, checked against `now` (ms since the epoch): each field it
 * names, `null` clearing it; 400 `invalid_argument` naming `<field>.expires_at` when the expiry is
 * not in the future or more than 30 days ahead.
 *
 * @example
 * lifetimeChange({ expires_at: null }, Date.now()); // { expires_at: null }
 */
export function lifetimeChange(
  request: Schema<'ComputerLifetimeRequest'>,
  now: number,
  field = 'lifetime',
): LifetimeChange {
  const change: LifetimeChange = {};
  if (request.idle_timeout_seconds !== undefined) change.idle_timeout_seconds = request.idle_timeout_seconds;
  if (request.on_end !== undefined) change.on_end = request.on_end as 'stop' | 'delete';
  if (request.expires_at === null) change.expires_at = null;
  else if (request.expires_at !== undefined) {
    const at = Date.parse(request.expires_at);
    const problem =
      !Number.isFinite(at) || at <= now
        ? 'must be in the future'
        : at > now + MAX_LIFETIME_SECONDS * 1000
          ? `must be at most ${MAX_LIFETIME_SECONDS / 86_400} days after the request`
          : undefined;
    if (problem) throw invalidArgument([{ field: `${field}.expires_at`, description: problem }]);
    change.expires_at = new Date(at);
  }
  return change;
}

/**
 * A new computer's lifetime: what its create's `lifetime` names, the rest from the workspace's
 * `lifetime_defaults` (a maximum lifetime becomes `expires_at`, counted from `now`), `stop` unless
 * either says otherwise.
 *
 * @example
 * createLifetime(undefined, { idle_timeout_seconds: 3600 }, Date.now()); // { idle_timeout_seconds: 3600, expires_at: null, on_end: 'stop' }
 */
export function createLifetime(
  request: Schema<'ComputerLifetimeRequest'> | undefined,
  defaults: Schema<'LifetimeDefaults'> | null | undefined,
  now: number,
): { idle_timeout_seconds: number | null; expires_at: Date | null; on_end: 'stop' | 'delete' } {
  const asked = request ? lifetimeChange(request, now) : {};
  const maxLifetime = defaults?.max_lifetime_seconds ?? null;
  return {
    idle_timeout_seconds:
      asked.idle_timeout_seconds !== undefined
        ? asked.idle_timeout_seconds
        : (defaults?.idle_timeout_seconds ?? null),
    expires_at:
      asked.expires_at !== undefined
        ? asked.expires_at
        : maxLifetime === null
          ? null
          : new Date(now + maxLifetime * 1000),
    on_end: asked.on_end ?? (defaults?.on_end as 'stop' | 'delete' | undefined) ?? 'stop',
  };
}

/**
 * A workspace's lifetime defaults as stored: the fields set, `null` ones left out; `null` when none
 * is left (`{}` or `null` clears them).
 *
 * @example
 * storedDefaults({ idle_timeout_seconds: null, on_end: 'delete' }); // { on_end: 'delete' }
 */
export function storedDefaults(
  request: Schema<'LifetimeDefaults'> | null,
): Schema<'LifetimeDefaults'> | null {
  if (!request) return null;
  const kept = Object.fromEntries(Object.entries(request).filter(([, value]) => value !== null));
  return Object.keys(kept).length > 0 ? (kept as Schema<'LifetimeDefaults'>) : null;
}
