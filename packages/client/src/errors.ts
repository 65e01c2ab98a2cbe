import type { Computer, ErrorCode, Operation, StreamEndedReason } from './contract.js';

/** Fields every error of this package carries (docs/style.md: status, code, requestId, cause). */
interface ErrorFields<Code extends string> {
  status: number;
  code: Code;
  requestId?: string | undefined;
  cause?: unknown;
}

/**
 * The server answered with a non-2xx status. `code`, `message`, `details` and `requestId` come from the
 * error envelope `{error: {code, message, details, request_id}}`; a body that is not that envelope (a
 * proxy's HTML page, an empty 502) gets `code: "unknown"` and the raw text in `details.body`.
 *
 * @example
 * import { ApiError } from '@svc/client';
 * try { await somethingThatCalls(); } catch (err) {
 *   if (err instanceof ApiError && err.code === 'not_found') console.log('gone', err.requestId);
 * }
 * declare function somethingThatCalls(): Promise<void>;
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  declare readonly status: number;
  declare readonly code: ErrorCode;
  declare readonly details: unknown;
  /** The response body as received: the error envelope `{error: {…}}`, a text, or undefined when empty. */
  declare readonly body: unknown;
  declare readonly requestId: string | undefined;
  /** Milliseconds the server asked us to wait (`Retry-After`), when it said so. */
  declare readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    fields: ErrorFields<ErrorCode> & { details?: unknown; body?: unknown; retryAfterMs?: number | undefined },
  ) {
    super(message, { cause: fields.cause });
    this.status = fields.status;
    this.code = fields.code;
    this.details = fields.details ?? null;
    this.body = fields.body;
    this.requestId = fields.requestId;
    this.retryAfterMs = fields.retryAfterMs;
  }
}

/**
 * No HTTP response was received (DNS, refused connection, reset, TLS) after all allowed retries. It is a
 * separate family from {@link ApiError} because no server decision exists: the call may or may not have
 * taken effect, so repeat a mutation only with the same `Idempotency-Key`. `status` is always 0.
 *
 * @example
 * import { NetworkError } from '@svc/client';
 * const isOffline = (err: unknown) => err instanceof NetworkError && err.code === 'network_error';
 */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  readonly status = 0;
  readonly code = 'network_error' as const;
  readonly requestId: string | undefined = undefined;
  /** How many attempts were made before giving up. */
  readonly attempts: number;

  constructor(message: string, fields: { cause: unknown; attempts: number }) {
    super(message, { cause: fields.cause });
    this.attempts = fields.attempts;
  }
}

/**
 * What a fetch that threw rejects the call with: the signal's reason when it was aborted (the caller's
 * decision, not a network failure), else a {@link NetworkError} after `attempts` attempts.
 *
 * @example
 * import { sendFailure } from './errors.js';
 * const error = sendFailure(new Request('https://api.example/v1/me'), new TypeError('fetch failed'), 1);
 */
export function sendFailure(request: Request, cause: unknown, attempts: number): unknown {
  return request.signal.aborted
    ? (request.signal.reason ?? cause)
    : new NetworkError(
        `${request.method} ${request.url} failed after ${attempts} attempt(s): ${(cause as Error)?.message ?? cause}`,
        { cause, attempts },
      );
}

/**
 * `waitForOperations` or `waitForComputerState` ran out of time. `operations` holds the last state seen of every
 * operation (`computer`, the computer's), so
 * the caller can report progress or keep waiting.
 *
 * @example
 * import { TimeoutError } from '@svc/client';
 * const pending = (err: unknown) => (err instanceof TimeoutError ? err.operations.map((op) => op.id) : []);
 */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
  readonly status = 0;
  readonly code = 'timeout' as const;
  readonly requestId: string | undefined = undefined;
  readonly operations: readonly Operation[];
  /** {@link waitForComputerState}: the computer as it stood when the wait gave up. */
  readonly computer: Computer | undefined;

  constructor(
    message: string,
    fields: { operations: readonly Operation[]; computer?: Computer | undefined; cause?: unknown },
  ) {
    super(message, { cause: fields.cause });
    this.operations = fields.operations;
    this.computer = fields.computer;
  }
}

/**
 * A key file (design §7) is missing, unreadable or not of the expected shape. Nothing was sent.
 *
 * @example
 * import { KeyFileError, parseKeyFile } from '@svc/client';
 * try { parseKeyFile({}); } catch (err) { if (err instanceof KeyFileError) console.log(err.code); }
 */
export class KeyFileError extends Error {
  override readonly name = 'KeyFileError';
  readonly status = 0;
  readonly code: 'invalid_key_file' | 'key_file_unreadable' | 'key_file_not_configured';
  readonly requestId: string | undefined = undefined;

  constructor(message: string, fields: { code: KeyFileError['code']; cause?: unknown }) {
    super(message, { cause: fields.cause });
    this.code = fields.code;
  }
}

/**
 * The server ended an event stream for good: its last event, `stream.ended`, said not to reconnect
 * (`reconnect: false`: access revoked, a cursor older than the log keeps), or said to reconnect more
 * times in a row than the stream's `maxReconnects` allows. `code` is the spec's `StreamEnded.reason`
 * (an open enum: expect reasons added later); `lastEventId` is the id of the last event received, to
 * resume from with a new credential or to re-read state from.
 *
 * @example
 * import { StreamEndedError } from '@svc/client/streams';
 * const revoked = (err: unknown) => err instanceof StreamEndedError && err.code === 'access_revoked';
 */
export class StreamEndedError extends Error {
  override readonly name = 'StreamEndedError';
  readonly status = 0;
  /** Why the server ended the stream (`StreamEnded.reason`). */
  readonly code: StreamEndedReason;
  readonly requestId: string | undefined;
  /** What the server said about reconnecting (`StreamEnded.reconnect`). */
  readonly reconnect: boolean;
  /** The id of the last event received, if any: `lastEventId` for a later resume. */
  readonly lastEventId: string | undefined;

  constructor(
    message: string,
    fields: {
      code: StreamEndedReason;
      reconnect: boolean;
      lastEventId: string | undefined;
      requestId?: string | undefined;
      cause?: unknown;
    },
  ) {
    super(message, { cause: fields.cause });
    this.code = fields.code;
    this.reconnect = fields.reconnect;
    this.lastEventId = fields.lastEventId;
    this.requestId = fields.requestId;
  }
}
