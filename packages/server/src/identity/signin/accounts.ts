import type { Database, Queryable } from '../../platform/db/database.js';
import { isName, newId } from '../../platform/ids.js';
import { hashPassword, verifyPassword } from '../auth/password.js';
import {
  insertLocalAccount,
  localAccountByUsername,
  lockLocalAccount,
  setPasswordHash,
} from '../repositories/local-accounts.js';
import { insertUserPrincipal, setDisplayName, userNameTaken } from '../repositories/principals.js';
import { revokeRefreshTokensOf } from '../repositories/refresh-tokens.js';

/** What {@link setLocalAccount} creates or resets. */
export interface LocalAccountInput {
  /** The sign-in name; compared case-insensitively (stored lowercased). */
  email: string;
  password: string;
  /** The principal's name (a DNS label, unique among users). Default: derived from the email. */
  name?: string;
  displayName?: string;
}

/** Thrown for an input {@link setLocalAccount} refuses (bad email, short password, name taken). */
export class LocalAccountError extends Error {
  override name = 'LocalAccountError';
}

/** NIST SP 800-63B §5.1.1.2: at least 8 characters; no other composition rules. */
export const MIN_PASSWORD_LENGTH = 8;

/**
 * The canonical username of an email: trimmed and lowercased.
 *
 * @example
 * usernameOf(' Ada@Example.COM '); // 'ada@example.com'
 */
export function usernameOf(email: string): string {
  return email.trim().toLowerCase();
}

/** A DNS-label principal name from an email's local part, e.g. `Ada.Lovelace@x` → `ada-lovelace`. */
function nameFromEmail(username: string): string {
  const local = (username.split('@')[0] ?? '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
  return local.replace(/-+$/, '') || 'user';
}

/**
 * Creates a local account (a `user` principal plus its scrypt-hashed password), or, when one with this
 * email exists, resets its password (and display name when given) and revokes its refresh tokens, so
 * a reset signs out every `svc` session. Used by the server's `account set` command and by bootstrap.
 *
 * @example
 * const { principalId, created } = await setLocalAccount(db, { email: 'ada@example.com', password: 'correct horse' });
 */
export async function setLocalAccount(
  db: Database,
  input: LocalAccountInput,
): Promise<{ principalId: string; username: string; created: boolean }> {
  const username = usernameOf(input.email);
  if (!/^[^\s@]+@[^\s@]+$/.test(username) || username.length > 254)
    throw new LocalAccountError(`not an email address: ${input.email}`);
  if (input.password.length < MIN_PASSWORD_LENGTH)
    throw new LocalAccountError(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  const name = input.name ?? nameFromEmail(username);
  if (!isName(name)) throw new LocalAccountError(`not a valid name (a DNS label that is not an id): ${name}`);
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const existing = await lockLocalAccount(tx, username);
    if (existing) {
      await setPasswordHash(tx, existing, passwordHash);
      if (input.displayName !== undefined) await setDisplayName(tx, existing, input.displayName);
      await revokeRefreshTokensOf(tx, existing);
      return { principalId: existing, username, created: false };
    }
    if (await userNameTaken(tx, name))
      throw new LocalAccountError(`a user named ${name} exists already; pass another name`);
    const principalId = newId();
    await insertUserPrincipal(tx, {
      id: principalId,
      name,
      displayName: input.displayName ?? name,
      email: username,
    });
    await insertLocalAccount(tx, { principalId, username, passwordHash });
    return { principalId, username, created: true };
  });
}

// A real scrypt hash of a random password: an unknown user costs the same scrypt as a known one, so
// response time does not tell which emails have accounts.
let dummyHash: Promise<string> | undefined;

/**
 * Checks an email and password; the principal id when they match an enabled account, else undefined.
 * Takes one scrypt whether or not the account exists.
 *
 * @example
 * const principalId = await checkLocalPassword(db, 'ada@example.com', 'correct horse');
 */
export async function checkLocalPassword(
  db: Queryable,
  email: string,
  password: string,
): Promise<string | undefined> {
  const account = await localAccountByUsername(db, usernameOf(email));
  dummyHash ??= hashPassword(newId());
  const ok = await verifyPassword(password, account?.password_hash ?? (await dummyHash));
  return ok && account && !account.disabled ? account.principal_id : undefined;
}
