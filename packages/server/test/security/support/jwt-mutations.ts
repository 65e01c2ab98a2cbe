// Wrong JSON types inside every part of a JWT, signed for real so they get past the signature: the
// server must answer 401 `unauthenticated`, never a 500 or a success. Shared by the fuzzer (mixed into
// its requests) and by jwt-types.test.ts (every field × every wrong value, exhaustively).
import { createPrivateKey, sign } from 'node:crypto';
import fc from 'fast-check';
import type { KeyFile } from '../../../src/identity/auth/keypair.js';
import { newId } from '../../../src/platform/ids.js';
import { assertionClaims } from '../../support/credentials.js';

/** The JSON type RFC 7515 §4.1 / RFC 7519 §4.1 (and our `key_id`) give each field; written from the RFCs. */
type FieldType = 'string' | 'number' | 'boolean' | 'object' | 'string[]' | 'audience';

/** Registered JOSE header parameters (RFC 7515 §4.1, RFC 7797 `b64`). */
export const HEADER_FIELDS: Readonly<Record<string, FieldType>> = {
  alg: 'string',
  kid: 'string',
  typ: 'string',
  cty: 'string',
  jku: 'string',
  x5u: 'string',
  x5t: 'string',
  'x5t#S256': 'string',
  jwk: 'object',
  x5c: 'string[]',
  crit: 'string[]',
  b64: 'boolean',
};

/** Registered claims (RFC 7519 §4.1). */
export const CLAIM_FIELDS: Readonly<Record<string, FieldType>> = {
  iss: 'string',
  sub: 'string',
  aud: 'audience',
  exp: 'number',
  iat: 'number',
  nbf: 'number',
  jti: 'string',
};

/** The access token's own claim: the key it was exchanged for (an assertion has no such claim). */
export const ACCESS_TOKEN_CLAIM_FIELDS: Readonly<Record<string, FieldType>> = {
  ...CLAIM_FIELDS,
  key_id: 'string',
};

/** JSON values of every type, and arrays and objects holding them. */
const VALUES: readonly unknown[] = [
  0,
  -1,
  1.5,
  1e300,
  true,
  false,
  null,
  '',
  '1767225600',
  [],
  [1],
  [null],
  ['x', 2],
  [[]],
  {},
  { a: 'b' },
  { '0': 'x' },
];

function hasType(value: unknown, type: FieldType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'string[]':
      return Array.isArray(value) && value.every((item) => typeof item === 'string');
    case 'audience':
      return typeof value === 'string' || (Array.isArray(value) && value.every((i) => typeof i === 'string'));
  }
}

/** The values of `VALUES` that do NOT have the field's type. */
export function wrongValues(type: FieldType): unknown[] {
  return VALUES.filter((value) => !hasType(value, type));
}

/** One field of one part set to a value of the wrong JSON type. */
export interface JwtMutation {
  part: 'header' | 'claims';
  field: string;
  value: unknown;
}

/** Every mutation of one kind of JWT: each field of each part × each wrong value. */
export function allJwtMutations(kind: 'assertion' | 'access_token'): JwtMutation[] {
  const out: JwtMutation[] = [];
  for (const [part, fields] of [
    ['header', HEADER_FIELDS],
    ['claims', kind === 'assertion' ? CLAIM_FIELDS : ACCESS_TOKEN_CLAIM_FIELDS],
  ] as const)
    for (const [field, type] of Object.entries(fields))
      for (const value of wrongValues(type)) out.push({ part, field, value });
  return out;
}

/** A random mutation of one kind of JWT (for the fuzzer). */
export function jwtMutationArbitrary(kind: 'assertion' | 'access_token'): fc.Arbitrary<JwtMutation> {
  return fc.constantFrom(...allJwtMutations(kind));
}

export function describeMutation(m: JwtMutation): string {
  return `${m.part}.${m.field}=${JSON.stringify(m.value)}`;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function apply(header: Record<string, unknown>, claims: Record<string, unknown>, m: JwtMutation) {
  (m.part === 'header' ? header : claims)[m.field] = m.value;
}

/**
 * A service-account assertion (as `signAssertion` makes it) with `mutation` applied, signed with the
 * key file's private key: by hand, since jose refuses to sign some of these shapes.
 */
export function mutatedAssertion(file: KeyFile, tokenUrl: string, mutation: JwtMutation): string {
  const header: Record<string, unknown> = { alg: file.algorithm, kid: file.key_id, typ: 'JWT' };
  const claims = assertionClaims(file, tokenUrl);
  apply(header, claims, mutation);
  const input = `${b64url(header)}.${b64url(claims)}`;
  const key = createPrivateKey(file.private_key);
  const signature =
    file.algorithm === 'ES256'
      ? sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
      : sign(null, Buffer.from(input), key);
  return `${input}.${signature.toString('base64url')}`;
}

/**
 * An access token for `sub` (as the server issues it) with `mutation` applied, signed with the
 * server's own signing key, so only the type checks can refuse it.
 */
export async function mutatedAccessToken(
  signer: { kid: string; privateKey: CryptoKey },
  baseUrl: string,
  sub: string,
  mutation: JwtMutation,
): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  const header: Record<string, unknown> = { alg: 'EdDSA', typ: 'at+jwt', kid: signer.kid };
  const claims: Record<string, unknown> = {
    iss: baseUrl,
    aud: baseUrl,
    sub,
    jti: newId(),
    iat,
    exp: iat + 900,
  };
  apply(header, claims, mutation);
  const input = `${b64url(header)}.${b64url(claims)}`;
  const signature = await crypto.subtle.sign('Ed25519', signer.privateKey, Buffer.from(input));
  return `${input}.${Buffer.from(signature).toString('base64url')}`;
}
