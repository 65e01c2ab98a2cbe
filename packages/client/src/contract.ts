// The only file that reaches into @svc/contract: every type the client names is derived here from the
// generated `paths`/`components`, so nothing re-types a schema by hand.
import type { components, paths } from '@svc/contract';
import type { MaybeOptionalInit, ParseAsResponse } from 'openapi-fetch';
import type {
  ErrorResponse,
  HttpMethod,
  MediaType,
  PathsWithMethod,
  RequiredKeysOf,
  ResponseObjectMap,
  SuccessResponse,
} from 'openapi-typescript-helpers';

/**
 * The v1 API's paths, as generated from the bundled spec.
 *
 * @example
 * import type { ApiPaths } from '@svc/client';
 * type Paths = keyof ApiPaths; // '/health' | '/me' | …
 */
export type ApiPaths = paths;

/**
 * An error code of the spec's `ErrorCode` schema, widened so that codes added later (design §12) still
 * type-check: compare against the known literals, but expect others.
 *
 * @example
 * import type { ErrorCode } from '@svc/client';
 * const retryLater = (code: ErrorCode) => code === 'rate_limited' || code === 'unavailable';
 */
export type ErrorCode = components['schemas']['ErrorCode'] | (string & {});

/**
 * An operation state of the spec's `OperationState` schema, widened like {@link ErrorCode}: states
 * added later (design §12) still type-check.
 *
 * @example
 * import type { OperationState } from '@svc/client';
 * const done = (state: OperationState) => state === 'succeeded' || state === 'failed';
 */
export type OperationState = components['schemas']['OperationState'];
/**
 * Why a server ended an event stream (the spec's `StreamEnded.reason`), widened like {@link ErrorCode}:
 * reasons added later still type-check, and are handled as their `reconnect` says.
 *
 * @example
 * import type { StreamEndedReason } from '@svc/client/streams';
 * const renew = (reason: StreamEndedReason) => reason === 'token_expired';
 */
export type StreamEndedReason = components['schemas']['StreamEnded']['reason'] | (string & {});

/** A computer's state, as the spec's `ComputerState` names it. */
export type ComputerState = components['schemas']['ComputerState'];

/**
 * The known values of an open enum: its members that are not just any string.
 *
 * @example
 * import type { KnownValues, OperationState } from '@svc/client';
 * type Known = KnownValues<OperationState>; // 'pending' | 'running' | …
 */
export type KnownValues<T> = T extends unknown ? (string extends T ? never : T) : never;

/**
 * What a call resolves to: openapi-fetch's `FetchResponse`, without its `Readable<>` wrapper. The
 * generated types carry no readOnly/writeOnly markers for `Readable<>` to strip, and it turns the
 * `string & {}` member of an open enum (`x-extensible-enum`) into an object of string methods
 * (openapi-typescript#2765), so `data.state` would no longer be a string.
 */
export type ApiResponse<Op, Init, Media extends MediaType> =
  ResponseObjectMap<Op> extends infer Map extends Record<string | number, unknown>
    ?
        | { data: ParseAsResponse<SuccessResponse<Map, Media>, Init>; error?: never; response: Response }
        | { data?: never; error: ErrorResponse<Map, Media>; response: Response }
    : never;

/** openapi-fetch's: the init argument is optional exactly when nothing in it is required. */
type InitParam<Init> =
  RequiredKeysOf<Init> extends never
    ? [(Init & { [key: string]: unknown })?]
    : [Init & { [key: string]: unknown }];

/**
 * openapi-fetch's `ClientMethod`, resolving to {@link ApiResponse}.
 *
 * @example
 * import type { ApiMethod, ApiPaths } from '@svc/client';
 * type Get = ApiMethod<ApiPaths, 'get'>;
 */
export type ApiMethod<Paths extends {}, Method extends HttpMethod, Media extends MediaType = MediaType> = <
  Path extends PathsWithMethod<Paths, Method>,
  Init extends MaybeOptionalInit<Paths[Path], Method & keyof Paths[Path]>,
>(
  url: Path,
  ...init: InitParam<Init>
) => Promise<ApiResponse<Paths[Path][Method & keyof Paths[Path]], Init, Media>>;

/** The success body of `Method Path`. */
type Body<Method extends HttpMethod, Path extends PathsWithMethod<paths, Method>> = Exclude<
  ApiResponse<paths[Path][Method], unknown, MediaType>['data'],
  undefined
>;

/**
 * The operation record, as `GET /operations/{operation}` returns it.
 *
 * @example
 * import type { Operation } from '@svc/client';
 * const describe = (op: Operation) => `${op.type} ${op.state} ${op.progress}%`;
 */
export type Operation = Body<'get', '/operations/{operation}'>['operation'];

/**
 * The computer record, as `GET /workspaces/{workspace}/computers/{computer}` returns it.
 *
 * @example
 * import type { Computer } from '@svc/client';
 * const describe = (computer: Computer) => `${computer.name} ${computer.state}`;
 */
export type Computer = Body<'get', '/workspaces/{workspace}/computers/{computer}'>['computer'];

/**
 * The token record of `POST /auth/token`.
 *
 * @example
 * import type { Token } from '@svc/client';
 * const bearer = (token: Token) => `${token.token_type} ${token.access_token}`;
 */
export type Token = Body<'post', '/auth/token'>['token'];

type RelaxIdempotencyKey<Op> = Op extends {
  parameters: { header: infer Header extends { 'Idempotency-Key': unknown } };
}
  ? Omit<Op, 'parameters'> & {
      parameters: Omit<Op['parameters'], 'header'> &
        // biome-ignore lint/complexity/noBannedTypes: `{} extends T` is how TS asks "are all keys of T optional?"
        ({} extends Omit<Header, 'Idempotency-Key'>
          ? { header?: Omit<Header, 'Idempotency-Key'> & { 'Idempotency-Key'?: Header['Idempotency-Key'] } }
          : { header: Omit<Header, 'Idempotency-Key'> & { 'Idempotency-Key'?: Header['Idempotency-Key'] } });
    }
  : Op;

/**
 * `Paths` with every required `Idempotency-Key` header made optional: the spec requires it on creates
 * (design §10), and the client's transport supplies one when the caller does not, so callers need not.
 *
 * @example
 * import type { ApiPaths, WithOptionalIdempotencyKey } from '@svc/client';
 * type CallablePaths = WithOptionalIdempotencyKey<ApiPaths>;
 */
export type WithOptionalIdempotencyKey<Paths> = {
  [Path in keyof Paths]: { [Method in keyof Paths[Path]]: RelaxIdempotencyKey<Paths[Path][Method]> };
};

/**
 * One frame of a computer's live screen as the spec says it (`ScreenFrame`): a base64 PNG, its size,
 * the screen's size, the pointer and when it was taken.
 */
export type ScreenFrameData = components['schemas']['ScreenFrame'];

/** A terminal of a computer (the spec's `Terminal`): its size, state, command and how it ended. */
export type Terminal = components['schemas']['Terminal'];

/** What opening a terminal takes (the spec's `CreateTerminalRequest`): `cols`, `rows`, `command`, `cwd`, `env`. */
export type CreateTerminalRequest = components['schemas']['CreateTerminalRequest'];

/** A terminal's screen as text (the spec's `TerminalScreen`): `cols`, `rows`, `lines` and the cursor. */
export type TerminalScreen = components['schemas']['TerminalScreen'];

/** How a terminal ended (the spec's `TerminalExit`, the data of its `exit` event). */
export type TerminalExit = components['schemas']['TerminalExit'];
