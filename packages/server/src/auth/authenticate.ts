import type { components } from '@svc/contract';
import type { Queryable } from '../db/database.js';
import type { AccessTokens } from './access-token.js';
import { AuthError } from './errors.js';

/** The caller of a request, read from the database on every request (never from the token alone). */
export interface Principal {
  id: string;
  kind: components['schemas']['PrincipalKind'];
  name: string;
  display_name: string;
  email: string | null;
  /** With `{ workspaces: true }`: the principal's workspaces and its role in each, newest first. */
  workspaces?: {
    id: string;
    name: string;
    display_name: string;
    role: components['schemas']['Role'];
  }[];
}

/**
 * The credential of an `Authorization: Bearer …` header; `AuthError('missing')` when there is none.
 *
 * @example
 * bearerToken(request.headers.get('authorization')); // 'eyJ…'
 */
export function bearerToken(header: string | null | undefined): string {
  if (!header) throw new AuthError('missing', 'this route needs Authorization: Bearer <access token>');
  const match = /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)[ ]*$/i.exec(header);
  if (!match) throw new AuthError('malformed', 'the Authorization header must be "Bearer <token>"');
  return match[1] as string;
}

/**
 * Authenticates a request: verifies the Bearer access token, then loads the principal in one query,
 * refusing a disabled or deleted principal, and a token exchanged from a key that has since been
 * revoked or has expired (design §5: revocation takes effect on the next request).
 *
 * @example
 * const principal = await authenticate(db, accessTokens, request.headers.get('authorization'));
 */
export async function authenticate(
  db: Queryable,
  tokens: AccessTokens,
  authorization: string | null | undefined,
  options: { workspaces?: boolean } = {},
): Promise<Principal> {
  const claims = await tokens.verify(bearerToken(authorization));
  // `workspaces` rides along in the same statement: GET /me is one database round trip in all.
  const { rows } = await db.query<Principal & { disabled: boolean; key_ok: boolean | null }>(
    `SELECT p.id, p.kind, p.name, p.display_name, p.email, p.disabled_at IS NOT NULL AS disabled,
            CASE WHEN $2::text IS NULL THEN NULL
                 ELSE EXISTS (SELECT 1 FROM keys k WHERE k.id = $2 AND k.principal_id = p.id AND k.state = 'active'
                              AND (k.expires_at IS NULL OR k.expires_at > now())) END AS key_ok${
                                options.workspaces ? `, ${WORKSPACES}` : ''
                              }
       FROM principals p WHERE p.id = $1`,
    [claims.sub, claims.key_id ?? null],
  );
  const row = rows[0];
  if (!row || row.disabled)
    throw new AuthError('principal_unknown', 'the principal of this token no longer exists or is disabled');
  if (row.key_ok === false)
    throw new AuthError('key_revoked', 'the key this token was issued for has been revoked or has expired');
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    display_name: row.display_name,
    email: row.email,
    ...(options.workspaces ? { workspaces: row.workspaces ?? [] } : {}),
  };
}

/** The caller's workspaces with roles, as one JSON column (at most 1000, the spec's cap). */
const WORKSPACES = `(SELECT coalesce(json_agg(json_build_object('id', w.id, 'name', w.name,
      'display_name', CASE WHEN w.display_name = '' THEN w.name ELSE w.display_name END, 'role', m.role)
      ORDER BY w.id DESC), '[]'::json)
   FROM (SELECT workspace_id, role FROM members WHERE principal_id = p.id ORDER BY workspace_id DESC LIMIT 1000) m
   JOIN workspaces w ON w.id = m.workspace_id) AS workspaces`;
