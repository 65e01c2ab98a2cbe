import { decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, test } from 'vitest';
import { createAssertion } from '../src/node.js';
import { BASE, makeKeyFile } from './helpers.js';

describe('createAssertion: an assertion for tools that exchange it themselves', () => {
  test.each(['EdDSA', 'ES256'] as const)(
    '%s: signed by the key, for <base>/auth/token, 5 minutes',
    async (algorithm) => {
      const { keyFile, publicKey } = await makeKeyFile(algorithm);
      const now = Date.UTC(2026, 10, 23, 12, 0, 0);
      const assertion = await createAssertion(keyFile, { now });
      const { payload } = await jwtVerify(assertion, publicKey, { currentDate: new Date(now) });
      expect(decodeProtectedHeader(assertion)).toMatchObject({
        alg: algorithm,
        kid: keyFile.key_id,
        typ: 'JWT',
      });
      expect(payload).toMatchObject({
        iss: keyFile.principal_id,
        sub: keyFile.principal_id,
        aud: `${BASE}/auth/token`,
      });
      expect(payload.exp! - payload.iat!).toBe(300);
      expect(await createAssertion(keyFile, { now })).not.toBe(assertion); // a fresh jti each time
    },
  );

  test('another base address changes the audience', async () => {
    const { keyFile, publicKey } = await makeKeyFile();
    const assertion = await createAssertion(keyFile, { baseUrl: 'https://other.test/v1/' });
    const { payload } = await jwtVerify(assertion, publicKey);
    expect(payload.aud).toBe('https://other.test/v1/auth/token');
  });
});
