import { deref, loadDocument } from '@svc/contract';
import { FileError } from '../computers/files/driver.js';
import { BodyTooLargeError, type IncomingBytes } from '../http/byte-body.js';
import { ApiError, invalidArgument } from '../platform/errors.js';

/** What a files failure is answered with besides the error itself. */
interface FailureScope {
  /** The normalised path of the request. */
  path: string;
  /** The request's body of bytes, for an upload: past its limit, any failure is 413. */
  body?: IncomingBytes;
  /** The computer's files quota (`SVC_FILES_QUOTA_BYTES`), for `quota_exceeded`. */
  quotaBytes: number;
}

/**
 * The published error for a driver's `FileError` (and a body over its limit), as the spec's files
 * responses describe them: `not_found` → 404 with `details.path`; a path of the wrong kind
 * (`is_directory`, `not_directory`, `not_empty`, `read_only`, `special_file`, `invalid_path`) → 400
 * `invalid_argument` on `path`; `bad_archive` → 400 on `body` with `details.entry` and `details.rule`;
 * `too_large` → 413 with `details.limit_bytes`; `quota_exceeded` → 403 with `details.quota`
 * (`files_bytes_per_computer`) and `details.limit_bytes`; `unavailable` → 503. Anything else is
 * answered unchanged (an `ApiError`) or thrown on (a 500).
 *
 * @example
 * try { await files.stat(computer, path, signal); } catch (e) { throw fileFailure(e, { path, quotaBytes }); }
 */
export function fileFailure(thrown: unknown, scope: FailureScope): unknown {
  const { body, path } = scope;
  if (thrown instanceof BodyTooLargeError || body?.overLimit) return tooLarge(body?.limitBytes ?? 0);
  if (!(thrown instanceof FileError)) return thrown;
  const details = thrown.details;
  const at = typeof details.path === 'string' ? details.path : path;
  switch (thrown.reason) {
    case 'not_found':
      return new ApiError('not_found', thrown.message, { details: { path: at }, cause: thrown });
    case 'invalid_path':
    case 'is_directory':
    case 'not_directory':
    case 'not_empty':
    case 'read_only':
    case 'special_file': {
      const error = invalidArgument([{ field: 'path', description: thrown.message }], thrown.message);
      if (thrown.reason !== 'invalid_path') error.details.path = at;
      return error;
    }
    case 'bad_archive': {
      const entry = typeof details.entry === 'string' ? details.entry : undefined;
      const error = invalidArgument(
        [
          {
            field: 'body',
            description: entry === undefined ? thrown.message : `entry ${entry}: ${thrown.message}`,
          },
        ],
        'The archive was refused; nothing after the refused entry was written.',
      );
      if (entry !== undefined) error.details.entry = entry;
      const rule = typeof details.rule === 'string' ? publishedRule(details.rule) : undefined;
      if (rule !== undefined) error.details.rule = rule;
      return error;
    }
    case 'too_large':
      return tooLarge(body?.limitBytes ?? numberOr(details.limit, 0));
    case 'quota_exceeded': {
      const limit = numberOr(details.limit, scope.quotaBytes);
      return new ApiError(
        'quota_exceeded',
        `the computer's files would take more than ${limit} bytes under /home`,
        {
          details: { quota: 'files_bytes_per_computer', limit_bytes: limit },
          cause: thrown,
        },
      );
    }
    case 'unavailable':
      return new ApiError('unavailable', "the computer's files cannot be reached right now; retry shortly", {
        headers: { 'retry-after': '1' },
        cause: thrown,
      });
    default:
      return thrown;
  }
}

/** 413 `payload_too_large` with `details.limit_bytes`. */
function tooLarge(limit: number): ApiError {
  return new ApiError(
    'payload_too_large',
    `the body is larger than ${limit} bytes, the limit of one transfer`,
    {
      details: { limit_bytes: limit },
    },
  );
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** The archive rules the spec publishes in `ErrorDetails.rule`, read from it. */
const PUBLISHED_RULES: ReadonlySet<string> = (() => {
  const document = loadDocument();
  const details = deref(document, { $ref: '#/components/schemas/ErrorDetails' }) as {
    properties: Record<string, object>;
  };
  const rule = deref(document, details.properties.rule ?? {}) as { enum?: string[] };
  return new Set(rule.enum ?? []);
})();

/** The driver's finer rules, as the spec names them ("an unknown or sparse entry type"). */
const RULE_ALIASES: Readonly<Record<string, string>> = {
  sparse: 'entry_type',
  unsupported_type: 'entry_type',
};

/** A driver's rule as published, or undefined when the spec has no name for it (the message says it). */
function publishedRule(rule: string): string | undefined {
  const name = RULE_ALIASES[rule] ?? rule;
  return PUBLISHED_RULES.has(name) ? name : undefined;
}
