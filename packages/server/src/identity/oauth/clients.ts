import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a registered client may do: where codes may be sent back, and its name for the sign-in page. */
export interface RegisteredClient {
  redirect_uris: string[];
  client_name?: string;
}

const PREFIX = 'mcp.';
const MAX_REDIRECT_URIS = 5;
const MAX_URI_LENGTH = 2000;
const MAX_NAME_LENGTH = 100;

/**
 * Whether a client may register `uri` as a redirect (RFC 8252 for native clients, RFC 6749 §3.1.2):
 * an `https` URL, or `http` on a loopback host (`127.0.0.1`, `[::1]`, `localhost`) with a port, as
 * MCP clients on the user's machine listen; never a fragment or user info.
 *
 * @example
 * isRegistrableRedirect('http://127.0.0.1:33418/callback'); // true
 * isRegistrableRedirect('http://evil.example/cb'); // false
 */
function isRegistrableRedirect(uri: string): boolean {
  if (uri.length > MAX_URI_LENGTH) return false;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.hash !== '' || uri.includes('#') || url.username !== '' || url.password !== '') return false;
  if (url.protocol === 'https:') return true;
  return (
    url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname) && url.port !== ''
  );
}

/**
 * Dynamic client registration (RFC 7591) without a table: the client id IS the registration, signed
 * with a server secret (`mcp.<base64url(JSON)>.<HMAC>`), so every replica accepts it and nothing is
 * stored. Public clients only (PKCE, no client secret), as MCP clients on a user's machine are.
 *
 * @example
 * const registry = new ClientRegistry(secret);
 * const { client_id } = registry.register({ redirect_uris: ['http://127.0.0.1:5000/callback'] });
 * registry.lookup(client_id)?.redirect_uris; // ['http://127.0.0.1:5000/callback']
 */
export class ClientRegistry {
  constructor(private readonly secret: Uint8Array | string) {}

  /**
   * Registers a client from its metadata; returns the RFC 7591 answer, or the RFC 7591 §3.2.2 error
   * (`invalid_redirect_uri`, `invalid_client_metadata`).
   */
  register(
    metadata: unknown,
  ):
    | { ok: true; client: RegisteredClient & { client_id: string } }
    | { ok: false; error: string; description: string } {
    const m = (typeof metadata === 'object' && metadata !== null ? metadata : {}) as Record<string, unknown>;
    const uris = m.redirect_uris;
    if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS)
      return {
        ok: false,
        error: 'invalid_redirect_uri',
        description: `redirect_uris: 1 to ${MAX_REDIRECT_URIS} URIs`,
      };
    if (!uris.every((uri) => typeof uri === 'string' && isRegistrableRedirect(uri)))
      return {
        ok: false,
        error: 'invalid_redirect_uri',
        description: 'each redirect URI must be https, or http on 127.0.0.1, [::1] or localhost with a port',
      };
    const method = m.token_endpoint_auth_method ?? 'none';
    if (method !== 'none')
      return {
        ok: false,
        error: 'invalid_client_metadata',
        description: 'only public clients: token_endpoint_auth_method none',
      };
    const name = typeof m.client_name === 'string' ? m.client_name.slice(0, MAX_NAME_LENGTH) : undefined;
    const client: RegisteredClient = {
      redirect_uris: uris as string[],
      ...(name ? { client_name: name } : {}),
    };
    const payload = Buffer.from(JSON.stringify(client)).toString('base64url');
    return { ok: true, client: { ...client, client_id: `${PREFIX}${payload}.${this.sign(payload)}` } };
  }

  /** The registration a client id carries, if this server signed it. */
  lookup(clientId: string): RegisteredClient | undefined {
    if (!clientId.startsWith(PREFIX) || clientId.length > 8 * 1024) return undefined;
    const [payload, signature, ...rest] = clientId.slice(PREFIX.length).split('.');
    if (!payload || !signature || rest.length > 0) return undefined;
    const want = Buffer.from(this.sign(payload));
    const got = Buffer.from(signature);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
    try {
      const client = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as RegisteredClient;
      return Array.isArray(client.redirect_uris) ? client : undefined;
    } catch {
      return undefined;
    }
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update(`oauth-client:${payload}`).digest('base64url');
  }
}
