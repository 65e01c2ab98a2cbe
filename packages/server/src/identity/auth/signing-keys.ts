import type { CryptoKey, JWK } from 'jose';
import { CompactEncrypt, compactDecrypt, exportJWK, generateKeyPair, importJWK } from 'jose';
import type { Queryable } from '../../platform/db/database.js';
import { newId } from '../../platform/ids.js';
import {
  activeSigningKey,
  insertSigningKey,
  plaintextSigningKeys,
  sealSigningKey,
  signingPublicKey,
} from '../repositories/signing-keys.js';
import { ephemeralSecretKey } from './secret-key.js';

/** The signing keys in the database cannot be unsealed with this process's secret key. */
export class SealedKeyError extends Error {
  override name = 'SealedKeyError';
}

/** The server's key for signing access tokens. */
export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
}

const encoder = new TextEncoder();

/**
 * Seals a private JWK as a compact JWE (`dir`, A256GCM) under `secretKey`. The key's id is in the
 * protected header, which the tag authenticates, so a sealed key cannot be moved to another row.
 */
async function seal(kid: string, jwk: JWK, secretKey: Uint8Array): Promise<string> {
  return new CompactEncrypt(encoder.encode(JSON.stringify(jwk)))
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid, cty: 'jwk+json' })
    .encrypt(secretKey);
}

async function unseal(kid: string, jwe: string, secretKey: Uint8Array): Promise<JWK> {
  let opened: Awaited<ReturnType<typeof compactDecrypt>>;
  try {
    opened = await compactDecrypt(jwe, secretKey, {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
    });
  } catch {
    throw new SealedKeyError(
      `signing key ${kid} was sealed with another secret key: give every replica the same SVC_SECRET_KEY ` +
        '(or the secret key file the database was first started with)',
    );
  }
  if (opened.protectedHeader.kid !== kid)
    throw new SealedKeyError(`sealed signing key ${kid} names another key`);
  return JSON.parse(new TextDecoder().decode(opened.plaintext)) as JWK;
}

/**
 * The access-token signing keys (EdDSA, Ed25519), kept in the database so every replica signs and
 * verifies with the same keys. The first replica to need a key creates it; a unique index on the
 * active key makes concurrent first starts agree on one. Verification keys are cached by `kid`.
 * The private key is stored sealed (a compact JWE, `dir` + A256GCM) under a secret key that lives
 * outside the database (`loadSecretKey`), so a reader of the database alone holds no usable key.
 * Plaintext keys written by older versions are sealed on first use.
 *
 * @example
 * const keys = new ServerKeys(db, loadSecretKey(config));
 * const { kid, privateKey } = await keys.signingKey();
 */
export class ServerKeys {
  private active: Promise<SigningKey> | undefined;
  private readonly verifying = new Map<string, Promise<CryptoKey | undefined>>();

  /** `secretKey`: 32 bytes; default a per-process key, for databases that die with the process. */
  constructor(
    private readonly db: Queryable,
    private readonly secretKey: Uint8Array = ephemeralSecretKey(),
  ) {}

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
      found = signingPublicKey(this.db, kid).then((jwk) =>
        jwk ? (importJWK(jwk, 'EdDSA') as Promise<CryptoKey>) : undefined,
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

  /** Seals every plaintext private key (rows of versions before sealing); idempotent across replicas. */
  private async sealPlaintext(): Promise<void> {
    for (const row of await plaintextSigningKeys(this.db)) {
      if (!row.private_jwk) continue;
      await sealSigningKey(this.db, row.id, await seal(row.id, row.private_jwk, this.secretKey));
    }
  }

  private async loadOrCreate(): Promise<SigningKey> {
    await this.sealPlaintext();
    const existing = await this.loadActive();
    if (existing) return existing;
    const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const kid = newId();
    await insertSigningKey(this.db, {
      id: kid,
      publicJwk: await exportJWK(publicKey),
      privateJwe: await seal(kid, await exportJWK(privateKey), this.secretKey),
    });
    const stored = await this.loadActive();
    if (!stored) throw new Error('no active signing key after creating one');
    return stored;
  }

  private async loadActive(): Promise<SigningKey | undefined> {
    const row = await activeSigningKey(this.db);
    if (!row) return undefined;
    if (!row.private_jwe) throw new SealedKeyError(`signing key ${row.id} has no sealed private key`);
    const jwk = await unseal(row.id, row.private_jwe, this.secretKey);
    return { kid: row.id, privateKey: (await importJWK(jwk, 'EdDSA')) as CryptoKey };
  }
}
