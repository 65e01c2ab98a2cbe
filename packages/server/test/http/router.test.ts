import { describe, expect, it } from 'vitest';
import { compileRouter } from '../../src/http/router.js';
import { document, operations, samplePath } from './fixtures.js';

// The router matches the spec's own paths: what is below /v1 (src/http/path.ts strips the prefix).

const router = compileRouter(document);

describe('router', () => {
  it.each(operations.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op] as const))(
    'routes %s',
    (_, op) => {
      const { path, params } = samplePath(op);
      expect(Object.values(params)).not.toContain('undefined'); // every path parameter has an example
      expect(router.match(op.method.toUpperCase(), path.slice('/v1'.length))).toEqual({
        kind: 'match',
        operationId: op.operationId,
        pathParams: params,
        head: false,
      });
    },
  );

  it('answers 405 with every method of the path, derived from the spec', () => {
    const onPath = operations
      .filter((op) => op.path === '/workspaces/{workspace}')
      .map((op) => op.method.toUpperCase());
    const found = router.match('PUT', '/workspaces/acme-dev');
    expect(found.kind).toBe('method_not_allowed');
    if (found.kind !== 'method_not_allowed') return;
    expect([...found.allow].sort()).toEqual([...onPath, 'HEAD', 'OPTIONS'].sort());
  });

  it.each([
    ['unknown top-level', 'GET', '/nope'],
    ['no leading slash', 'GET', 'me'],
    ['the root', 'GET', '/'],
    ['trailing slash', 'GET', '/workspaces/'],
    ['empty parameter segment', 'GET', '/workspaces//computers'],
    ['too deep', 'GET', '/workspaces/a/computers/b/start/now'],
    ['encoded static segment', 'GET', '/%77orkspaces'],
    ['case differs', 'GET', '/Workspaces'],
    ['unknown path, unknown method', 'BREW', '/coffee'],
  ])('404 for %s', (_, method, path) => {
    expect(router.match(method, path)).toEqual({ kind: 'not_found' });
  });

  it('prefers a static segment and backtracks to a parameter', () => {
    expect(router.match('POST', '/workspaces/w/computers/c/start')).toMatchObject({
      operationId: 'startComputer',
    });
    expect(router.match('GET', '/workspaces/computers')).toMatchObject({
      operationId: 'getWorkspace',
      pathParams: { workspace: 'computers' },
    });
  });

  it('percent-decodes parameters after matching, so an encoded slash stays in one segment', () => {
    expect(router.match('GET', '/workspaces/a%2Fb%20c')).toMatchObject({
      kind: 'match',
      pathParams: { workspace: 'a/b c' },
    });
  });

  it.each([['%zz'], ['%'], ['%E0%A4%A']])(
    'a malformed escape (%s) is a violation of that parameter',
    (bad) => {
      expect(router.match('GET', `/workspaces/${bad}/computers`)).toEqual({
        kind: 'malformed_path',
        operationId: 'listComputers',
        field: 'path.workspace',
      });
    },
  );

  it('answers HEAD with the GET operation, and 405 where there is no GET', () => {
    expect(router.match('HEAD', '/me')).toMatchObject({ kind: 'match', operationId: 'getMe', head: true });
    expect(router.match('HEAD', '/workspaces/w/computers/c/start')).toMatchObject({
      kind: 'method_not_allowed',
      allow: ['POST', 'OPTIONS'],
    });
  });

  it('lists the allowed methods of a known path for preflight', () => {
    expect(router.allowed('/auth/token')).toEqual(['POST', 'OPTIONS']);
    expect(router.allowed('/nope')).toBeUndefined();
  });
});
