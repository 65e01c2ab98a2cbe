// The Standard Webhooks signature, with WebCrypto (browsers and Node alike): HMAC-SHA256 of
// `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64-decoded part of a `whsec_` secret,
// sent as `v1,<base64>`. What the server signs with `standardwebhooks`' `Webhook.sign`.

/** The prefix of a webhook secret. */
export const SECRET_PREFIX = 'whsec_';

/** The bytes of standard base64 (`+/`, padded or not); undefined when it is not base64. */
export function fromBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** Standard base64 of `bytes`, padded. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The HMAC key of a `whsec_…` secret (the prefix is optional, as in `standardwebhooks`). */
export async function secretKey(secret: string): Promise<CryptoKey> {
  const raw = fromBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  if (raw === undefined || raw.length === 0)
    throw new TypeError('a webhook secret is `whsec_` and base64 of its bytes');
  return crypto.subtle.importKey(
    'raw',
    raw as Uint8Array<ArrayBuffer>,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
}

/** The bytes signed: `<id>.<timestamp>.` then the body as sent. */
export function signedContent(id: string, timestamp: string, body: string | Uint8Array): Uint8Array {
  const encoder = new TextEncoder();
  const head = encoder.encode(`${id}.${timestamp}.`);
  const tail = typeof body === 'string' ? encoder.encode(body) : body;
  const content = new Uint8Array(head.length + tail.length);
  content.set(head);
  content.set(tail, head.length);
  return content;
}

/** The raw HMAC-SHA256 of `content` under `key`. */
export async function hmac(key: CryptoKey, content: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, content as Uint8Array<ArrayBuffer>));
}

/** Whether two byte strings are equal, in time that depends on their length only. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] as number) ^ (b[i] as number);
  return difference === 0;
}
