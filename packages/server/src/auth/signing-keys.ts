import type { CryptoKey, JWK } from 'jose';
import { exportJWK, generateKeyPair, importJWK } from 'jose';
import type { Queryable } from '../db/database.js';
import { newId } from '../ids.js';

/** The server's key for signing access tokens. */
export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
}

interface Row {
  id: string;
  public_jwk: JWK;
  private_jwk: JWK;
  state: 'active' | 'retired';
}

/**
 * The access-token signing keys (EdDSA, Ed25519), kept in the database so every replica signs and
 * verifies with the same keys. The first replica to need a key creates it; a unique index on the
 * active key makes concurrent first starts agree on one. Verification keys are cached by `kid`.
 * The private key is stored as a JWK in plain text: protect the database (open decision: wrap it
 * with a key from the environment).
 *
 * @example
 * const keys = new ServerKeys(db);
 * const { kid, privateKey } = await keys.signingKey();
 */
export class ServerKeys {
  private active: Promise<SigningKey> | undefined;
  private readonly verifying = new Map<string, Promise<CryptoKey | undefined>>();

  constructor(private readonly db: Queryable) {}

  /** The active signing key, created on first use. */
  signingKey(): Promise<SigningKey> {
    this.active ??= this.loadOrCreate().catch((error: unknown) => {
      this.active = undefined;
      throw error;
    });
    return this.active;
  }

  /** The public key with this `kid` (active or retired), or `undefined`. */
  verificationKey(kid: string): Promise<CryptoKey | undefined> {
    let found = this.verifying.get(kid);
    if (!found) {
      found = this.db
        .query<Pick<Row, 'public_jwk'>>('SELECT public_jwk FROM server_signing_keys WHERE id = $1', [kid])
        .then(({ rows }) =>
          rows[0] ? (importJWK(rows[0].public_jwk, 'EdDSA') as Promise<CryptoKey>) : undefined,
        );
      // Only known kids are cached, so probing random kids cannot grow the map.
      found.then(
        (key) => key === undefined && this.verifying.delete(kid),
        () => this.verifying.delete(kid),
      );
      this.verifying.set(kid, found);
    }
    return found;
  }

  private async loadOrCreate(): Promise<SigningKey> {
    const existing = await this.loadActive();
    if (existing) return existing;
    const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const kid = newId();
    await this.db.query(
      `INSERT INTO server_signing_keys (id, algorithm, public_jwk, private_jwk) VALUES ($1, 'EdDSA', $2, $3)
       ON CONFLICT DO NOTHING`,
      [kid, await exportJWK(publicKey), await exportJWK(privateKey)],
    );
    const stored = await this.loadActive();
    if (!stored) throw new Error('no active signing key after creating one');
    return stored;
  }

  private async loadActive(): Promise<SigningKey | undefined> {
    const { rows } = await this.db.query<Row>(
      `SELECT id, private_jwk FROM server_signing_keys WHERE state = 'active'`,
    );
    const row = rows[0];
    if (!row) return undefined;
    return { kid: row.id, privateKey: (await importJWK(row.private_jwk, 'EdDSA')) as CryptoKey };
  }
}
