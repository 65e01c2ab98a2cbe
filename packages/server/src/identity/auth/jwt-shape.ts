import type { ProtectedHeaderParameters } from 'jose';
import { AuthError } from './errors.js';

/** The registered JOSE header parameters and the JSON type each must have (RFC 7515 §4.1). */
const HEADER_STRINGS = ['alg', 'kid', 'typ', 'cty', 'jku', 'x5u', 'x5t', 'x5t#S256'] as const;

/**
 * Refuses a JWT header whose registered parameters have the wrong JSON type (a number, array,
 * object, boolean or null where RFC 7515 says string; `crit` and `x5c` arrays of strings, `jwk` an
 * object, `b64` a boolean), before any of them is compared or read:
 * `jose` decodes the header as untyped JSON. A wrong type is a malformed credential: 401.
 *
 * @example
 * checkHeaderTypes(decodeProtectedHeader(token), 'assertion');
 */
export function checkHeaderTypes(header: ProtectedHeaderParameters, what: string): void {
  const values = header as Record<string, unknown>;
  for (const name of HEADER_STRINGS) {
    if (name in values && typeof values[name] !== 'string')
      throw new AuthError('malformed', `the ${what} header "${name}" must be a string`);
  }
  for (const name of ['crit', 'x5c'] as const) {
    if (name in values && !isStringArray(values[name]))
      throw new AuthError('malformed', `the ${what} header "${name}" must be an array of strings`);
  }
  if ('jwk' in values && (typeof values.jwk !== 'object' || values.jwk === null || Array.isArray(values.jwk)))
    throw new AuthError('malformed', `the ${what} header "jwk" must be an object`);
  if ('b64' in values && typeof values.b64 !== 'boolean')
    throw new AuthError('malformed', `the ${what} header "b64" must be a boolean`);
}

/**
 * Refuses registered claims of the wrong JSON type (RFC 7519 §4.1): `iss`, `sub`, `jti` strings;
 * `aud` a string or an array of strings; `exp`, `iat`, `nbf` finite numbers. Run on the verified
 * payload, so no later comparison or arithmetic meets an object where it expects a string or number.
 *
 * @example
 * checkClaimTypes(payload, 'assertion');
 */
export function checkClaimTypes(payload: Record<string, unknown>, what: string): void {
  for (const name of ['iss', 'sub', 'jti'] as const) {
    if (name in payload && typeof payload[name] !== 'string')
      throw new AuthError('bad_claims', `the ${what} claim "${name}" must be a string`);
  }
  for (const name of ['exp', 'iat', 'nbf'] as const) {
    if (name in payload && !(typeof payload[name] === 'number' && Number.isFinite(payload[name])))
      throw new AuthError('bad_claims', `the ${what} claim "${name}" must be a number`);
  }
  if ('aud' in payload && typeof payload.aud !== 'string' && !isStringArray(payload.aud))
    throw new AuthError('bad_claims', `the ${what} claim "aud" must be a string or an array of strings`);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
