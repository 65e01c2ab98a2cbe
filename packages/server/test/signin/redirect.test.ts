import { describe, expect, test } from 'vitest';
import { checkAuthorizeRequest } from '../../src/identity/signin/authorize-request.js';
import { s256, verifyPkce } from '../../src/identity/signin/pkce.js';
import { isLoopbackRedirect } from '../../src/identity/signin/redirect.js';

describe('isLoopbackRedirect (RFC 8252 §7.3, exact match)', () => {
  test.each<[string, { given: string; want: boolean }]>([
    ['IPv4 loopback, any port', { given: 'http://127.0.0.1:53682/callback', want: true }],
    ['IPv6 loopback', { given: 'http://[::1]:8080/callback', want: true }],
    ['highest port', { given: 'http://127.0.0.1:65535/callback', want: true }],
    ['port out of range', { given: 'http://127.0.0.1:65536/callback', want: false }],
    ['no port', { given: 'http://127.0.0.1/callback', want: false }],
    ['port 0', { given: 'http://127.0.0.1:0/callback', want: false }],
    ['localhost (RFC 8252 §8.3)', { given: 'http://localhost:5000/callback', want: false }],
    ['https', { given: 'https://127.0.0.1:5000/callback', want: false }],
    ['other path', { given: 'http://127.0.0.1:5000/cb', want: false }],
    ['trailing slash', { given: 'http://127.0.0.1:5000/callback/', want: false }],
    ['query', { given: 'http://127.0.0.1:5000/callback?x=1', want: false }],
    ['fragment', { given: 'http://127.0.0.1:5000/callback#x', want: false }],
    ['user info', { given: 'http://evil@127.0.0.1:5000/callback', want: false }],
    ['short IPv4 form', { given: 'http://127.1:5000/callback', want: false }],
    ['other host', { given: 'http://evil.example:5000/callback', want: false }],
    ['host with loopback prefix', { given: 'http://127.0.0.1.evil.example:5000/callback', want: false }],
    ['encoded path', { given: 'http://127.0.0.1:5000/%63allback', want: false }],
    ['upper case scheme', { given: 'HTTP://127.0.0.1:5000/callback', want: false }],
  ])('%s', (_name, { given, want }) => {
    expect(isLoopbackRedirect(given)).toBe(want);
  });
});

describe('PKCE S256', () => {
  test('RFC 7636 appendix B vector', () => {
    expect(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });
  test.each<[string, { verifier: string; want: boolean }]>([
    ['matching verifier', { verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', want: true }],
    ['other verifier', { verifier: 'eBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', want: false }],
    [
      'the challenge itself (plain)',
      { verifier: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', want: false },
    ],
    ['too short', { verifier: 'abc', want: false }],
  ])('%s', (_name, { verifier, want }) => {
    expect(verifyPkce(verifier, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(want);
  });
});

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const valid = {
  response_type: 'code',
  client_id: 'svc-cli',
  redirect_uri: 'http://127.0.0.1:5000/callback',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
  state: 'xyz',
};

describe('checkAuthorizeRequest', () => {
  test.each<[string, { given: Record<string, string>; want: string }]>([
    ['valid', { given: valid, want: 'valid' }],
    ['unknown client: refused, not redirected', { given: { ...valid, client_id: 'other' }, want: 'refused' }],
    [
      'non-loopback redirect: refused',
      { given: { ...valid, redirect_uri: 'https://evil.example/callback' }, want: 'refused' },
    ],
    [
      'plain PKCE',
      { given: { ...valid, code_challenge_method: 'plain' }, want: 'redirect_error:invalid_request' },
    ],
    [
      'no PKCE',
      {
        given: { ...valid, code_challenge_method: '', code_challenge: '' },
        want: 'redirect_error:invalid_request',
      },
    ],
    [
      'token response type',
      { given: { ...valid, response_type: 'token' }, want: 'redirect_error:unsupported_response_type' },
    ],
    ['no state', { given: { ...valid, state: '' }, want: 'redirect_error:invalid_request' }],
  ])('%s', (_name, { given, want }) => {
    const check = checkAuthorizeRequest(new URLSearchParams(given));
    expect(check.kind === 'redirect_error' ? `${check.kind}:${check.error}` : check.kind).toBe(want);
  });

  test('a parameter given twice is refused', () => {
    const params = new URLSearchParams(valid);
    params.append('code_challenge', CHALLENGE);
    const check = checkAuthorizeRequest(params);
    expect(check.kind === 'redirect_error' && check.error).toBe('invalid_request');
  });
});
