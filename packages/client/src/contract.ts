// The only file that reaches into @svc/contract: every type the client names is derived here from the
// generated `paths`/`components`, so nothing re-types a schema by hand.
import type { components, paths } from '@svc/contract';
import type { Client, MethodResponse } from 'openapi-fetch';

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
 * The operation record, as `GET /operations/{operation}` returns it.
 *
 * @example
 * import type { Operation } from '@svc/client';
 * const describe = (op: Operation) => `${op.type} ${op.state} ${op.progress}%`;
 */
export type Operation = MethodResponse<Client<paths>, 'get', '/operations/{operation}'>['operation'];

/**
 * The token record of `POST /auth/token`.
 *
 * @example
 * import type { Token } from '@svc/client';
 * const bearer = (token: Token) => `${token.token_type} ${token.access_token}`;
 */
export type Token = MethodResponse<Client<paths>, 'post', '/auth/token'>['token'];

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
