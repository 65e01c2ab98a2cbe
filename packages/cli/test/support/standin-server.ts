// A stand-in for the server app while packages/server has no app yet: the server's own parts
// (database, access tokens, assertions, signin, grants) mounted the way the app must mount them.
// Delete once `@svc/server` exports its app; test/e2e.test.ts prefers the real one.
import { AccessTokens } from '../../../server/src/auth/access-token.js';
import { verifyAssertion } from '../../../server/src/auth/assertion.js';
import { authenticate, bearerToken } from '../../../server/src/auth/authenticate.js';
import { exchangeAuthorizationCode, exchangeRefreshToken } from '../../../server/src/auth/grants.js';
import { generateServiceAccountKey, type KeyFile, keyFile } from '../../../server/src/auth/keypair.js';
import { ServerKeys } from '../../../server/src/auth/signing-keys.js';
import type { Database } from '../../../server/src/db/database.js';
import { migrate } from '../../../server/src/db/migrate.js';
import { openPglite } from '../../../server/src/db/pglite.js';
import { ApiError } from '../../../server/src/errors.js';
import { listen } from '../../../server/src/http/node-adapter.js';
import { newId } from '../../../server/src/ids.js';
import { setLocalAccount } from '../../../server/src/signin/accounts.js';
import { createSigninHandler } from '../../../server/src/signin/handler.js';

export interface RunningService {
  baseUrl: string;
  /** Creates a local account and returns its sign-in. */
  addAccount(email: string, password: string): Promise<void>;
  /** A service account's key file (what bootstrap writes). */
  keyFile: KeyFile;
  close(): Promise<void>;
}

export async function startStandIn(): Promise<RunningService> {
  const db: Database = await openPglite(undefined);
  await migrate(db);
  let baseUrl = '';
  let tokens: AccessTokens | undefined;
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json', 'request-id': newId() },
    });
  const core = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    try {
      if (url.pathname.startsWith('/signin')) return await signin(request);
      if (!tokens) throw new Error('not started');
      if (url.pathname === '/v1/auth/token' && request.method === 'POST') {
        const credential = bearerToken(request.headers.get('authorization'));
        const text = await request.text();
        const body = (text ? JSON.parse(text) : {}) as {
          grant_type?: string;
          code_verifier?: string;
          redirect_uri?: string;
        };
        const grant = body.grant_type ?? 'urn:ietf:params:oauth:grant-type:jwt-bearer';
        if (grant === 'authorization_code')
          return json(200, {
            token: await exchangeAuthorizationCode(
              { db, tokens },
              { code: credential, codeVerifier: body.code_verifier, redirectUri: body.redirect_uri },
            ),
          });
        if (grant === 'refresh_token')
          return json(200, {
            token: await exchangeRefreshToken({ db, tokens }, { refreshToken: credential }),
          });
        const { principalId, keyId } = await verifyAssertion(db, credential, {
          tokenUrl: `${baseUrl}/auth/token`,
        });
        return json(200, { token: await tokens.issue(principalId, { keyId }) });
      }
      if (url.pathname === '/v1/me' && request.method === 'GET') {
        const principal = await authenticate(db, tokens, request.headers.get('authorization'));
        return json(200, {
          identity: { principal: { ...principal, email: principal.email ?? undefined }, workspaces: [] },
        });
      }
      return json(404, {
        error: { code: 'not_found', message: 'no such route', details: {}, request_id: newId() },
      });
    } catch (error) {
      if (error instanceof ApiError) return json(error.status, error.toEnvelope(newId()));
      throw error;
    }
  };
  const running = await listen(core, { port: 0 });
  baseUrl = `${running.url}/v1`;
  tokens = new AccessTokens(new ServerKeys(db), { baseUrl });
  const signin = createSigninHandler({ db, publicOrigin: running.url });
  // A service account with a key, as bootstrap makes one.
  const principalId = newId();
  await db.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'service_account', 'robot')`, [
    principalId,
  ]);
  const pair = await generateServiceAccountKey('EdDSA');
  const keyId = newId();
  await db.query('INSERT INTO keys (id, principal_id, algorithm, public_jwk) VALUES ($1, $2, $3, $4)', [
    keyId,
    principalId,
    pair.algorithm,
    pair.publicJwk,
  ]);
  return {
    baseUrl,
    keyFile: keyFile({ keyId, principalId, baseUrl, pair }),
    addAccount: async (email, password) => {
      await setLocalAccount(db, { email, password });
    },
    close: async () => {
      await running.close();
      await db.close();
    },
  };
}
