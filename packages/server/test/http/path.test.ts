import { describe, expect, it } from 'vitest';
import { apiPath, isPath, pathOf } from '../../src/http/path.js';

describe('request paths', () => {
  it.each([
    ['a plain path', 'http://127.0.0.1:8080/v1/me', '/v1/me'],
    ['the query left off', 'http://127.0.0.1/v1/workspaces?limit=5&after=x', '/v1/workspaces'],
    [
      'a query holding slashes',
      'http://h/signin/authorize?redirect_uri=http://127.0.0.1/cb',
      '/signin/authorize',
    ],
    ['still percent-encoded', 'https://api.example/v1/workspaces/a%2Fb', '/v1/workspaces/a%2Fb'],
    ['the root', 'http://h/', '/'],
    ['an IPv6 host', 'http://[::1]:8080/ready', '/ready'],
  ])('pathOf: %s', (_, url, want) => {
    expect(pathOf(url)).toBe(want);
    expect(pathOf(url)).toBe(new URL(url).pathname);
  });

  it.each([
    ['the API', '/v1/me', '/me'],
    ['deeper', '/v1/workspaces/acme/computers', '/workspaces/acme/computers'],
    ['the API root', '/v1/', '/'],
    ['the prefix alone', '/v1', undefined],
    ['a longer first segment', '/v1x/me', undefined],
    ['another version', '/v2/me', undefined],
    ['no prefix', '/me', undefined],
    ['sign-in', '/signin', undefined],
  ])('apiPath: %s', (_, path, want) => {
    expect(apiPath(path)).toBe(want);
  });

  it.each([
    ['exactly', 'http://h/ready', true],
    ['with a query', 'http://h:1/ready?x=1', true],
    ['longer', 'http://h/readyz', false],
    ['below it', 'http://h/ready/x', false],
    ['elsewhere', 'http://h/v1/ready', false],
  ])('isPath: %s', (_, url, want) => {
    expect(isPath(url, '/ready')).toBe(want);
  });
});
