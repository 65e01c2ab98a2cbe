import { describe, expect, it } from 'vitest';
import { compileRouter } from '../../src/http/router.js';
import { document, operations, samplePath } from './fixtures.js';

const router = compileRouter(document);

describe('router', () => {
  it.each(operations.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op] as const))(
    'routes %s',
    (_, op) => {
      const { path, params } = samplePath(op);
      expect(Object.values(params)).not.toContain('undefined'); // every path parameter has an example
      expect(router.match(op.method.toUpperCase(), path)).toEqual({
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
    const found = router.match('PUT', '/v1/workspaces/acme-dev');
    expect(found.kind).toBe('method_not_allowed');
    if (found.kind !== 'method_not_allowed') return;
    expect([...found.allow].sort()).toEqual([...onPath, 'HEAD', 'OPTIONS'].sort());
  });

  it.each([
    ['unknown top-level', 'GET', '/v1/nope'],
    ['missing prefix', 'GET', '/me'],
    ['other version', 'GET', '/v2/me'],
    ['trailing slash', 'GET', '/v1/workspaces/'],
    ['empty parameter segment', 'GET', '/v1/workspaces//computers'],
    ['too deep', 'GET', '/v1/workspaces/a/computers/b/start/now'],
    ['encoded static segment', 'GET', '/v1/%77orkspaces'],
    ['case differs', 'GET', '/v1/Workspaces'],
    ['unknown path, unknown method', 'BREW', '/v1/coffee'],
  ])('404 for %s', (_, method, path) => {
    expect(router.match(method, path)).toEqual({ kind: 'not_found' });
  });

  it('prefers a static segment and backtracks to a parameter', () => {
    expect(router.match('POST', '/v1/workspaces/w/computers/c/start')).toMatchObject({
      operationId: 'startComputer',
    });
    expect(router.match('GET', '/v1/workspaces/computers')).toMatchObject({
      operationId: 'getWorkspace',
      pathParams: { workspace: 'computers' },
    });
  });

  it('percent-decodes parameters after matching, so an encoded slash stays in one segment', () => {
    expect(router.match('GET', '/v1/workspaces/a%2Fb%20c')).toMatchObject({
      kind: 'match',
      pathParams: { workspace: 'a/b c' },
    });
  });

  it.each([['%zz'], ['%'], ['%E0%A4%A']])(
    'a malformed escape (%s) is a violation of that parameter',
    (bad) => {
      expect(router.match('GET', `/v1/workspaces/${bad}/computers`)).toEqual({
        kind: 'malformed_path',
        operationId: 'listComputers',
        field: 'path.workspace',
      });
    },
  );

  it('answers HEAD with the GET operation, and 405 where there is no GET', () => {
    expect(router.match('HEAD', '/v1/me')).toMatchObject({ kind: 'match', operationId: 'getMe', head: true });
    expect(router.match('HEAD', '/v1/workspaces/w/computers/c/start')).toMatchObject({
      kind: 'method_not_allowed',
      allow: ['POST', 'OPTIONS'],
    });
  });

  it('lists the allowed methods of a known path for preflight', () => {
    expect(router.allowed('/v1/auth/token')).toEqual(['POST', 'OPTIONS']);
    expect(router.allowed('/v1/nope')).toBeUndefined();
  });
});
