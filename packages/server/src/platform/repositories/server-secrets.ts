import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/database.js';

/**
 * A named secret of the server (the cursor key, the sign-in CSRF key), created by the first replica
 * that needs it (`ON CONFLICT DO NOTHING`, then read, so concurrent first starts agree) and shared by
 * every replica through the database.
 *
 * @example
 * const csrfKey = await serverSecret(db, 'signin-csrf');
 */
export async function serverSecret(db: Queryable, name: string): Promise<Uint8Array> {
  await db.query('INSERT INTO server_secrets (name, secret) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
    name,
    randomBytes(32),
  ]);
  const { rows } = await db.query<{ secret: Uint8Array }>(
    'SELECT secret FROM server_secrets WHERE name = $1',
    [name],
  );
  const secret = rows[0]?.secret;
  if (!secret) throw new Error(`no server secret ${name} after creating one`);
  return new Uint8Array(secret);
}
