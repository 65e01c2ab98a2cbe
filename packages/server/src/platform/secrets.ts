import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

// Endpoint secrets at rest: sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the
// server's secret key, the one that seals the signing keys (`SVC_SECRET_KEY` or its key file, outside
// the database). The endpoint's id is the associated data, so a sealed secret moved to another row
// does not open.

const INFO = 'svc webhook endpoint secrets v1';
/** The purpose of the box that seals the client keys of remote Docker Engines (design §4.4), bound to the host's id. */
export const HOST_KEYS = 'svc fleet host engine client keys v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * A new signing secret the Standard Webhooks way: `whsec_` and base64 of 32 random bytes.
 *
 * @example
 * const secret = newWebhookSecret(); // 'whsec_MfKQ9r8G…='
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Seals and opens endpoint secrets under a key derived from the server's secret key.
 *
 * @example
 * const box = new SecretBox(secretKey);
 * const sealed = box.seal(endpointId, secret);
 * box.open(endpointId, sealed) === secret; // true
 */
export class SecretBox {
  readonly #key: Buffer;

  /**
   * `purpose` keeps the boxes of different secrets apart (another key is derived for each): endpoint
   * secrets by default, a fleet host's Engine client key with {@link HOST_KEYS}.
   */
  constructor(serverSecretKey: Uint8Array, purpose: string = INFO) {
    this.#key = Buffer.from(hkdfSync('sha256', serverSecretKey, Buffer.alloc(0), purpose, 32));
  }

  /** `iv ‖ tag ‖ ciphertext` of `secret`, bound to `endpointId`. */
  seal(endpointId: string, secret: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(endpointId));
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  /** The secret sealed for `endpointId`; throws when it was sealed under another key or row. */
  open(endpointId: string, sealed: Uint8Array): string {
    const bytes = Buffer.from(sealed);
    const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(endpointId));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  }
}
