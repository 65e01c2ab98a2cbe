import type { OpenApiDocument } from '@svc/contract';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { routeSecurity, type WithoutAccessToken } from '../../src/identity/auth/route-security.js';
import { document, operations } from '../http/fixtures.js';

describe('routeSecurity', () => {
  it('reads every operation of the bundle from its security: public, grant or access token', () => {
    const security = routeSecurity(document);
    expect(security.size).toBe(operations.length);
    expect(security.get('getHealth')).toBe('public');
    expect(security.get('exchangeToken')).toBe('grant');
    const others = operations.filter((op) => !['getHealth', 'exchangeToken'].includes(op.operationId));
    for (const op of others)
      expect(security.get(op.operationId as never), op.operationId).toBe('access_token');
  });

  it('types the same operations as running without a principal (checked by the typecheck)', () => {
    expectTypeOf<WithoutAccessToken>().toEqualTypeOf<'getHealth' | 'exchangeToken'>();
    const without = [...routeSecurity(document)].filter(([, kind]) => kind !== 'access_token');
    expect(without.map(([id]) => id)).toEqual(['getHealth', 'exchangeToken'] satisfies WithoutAccessToken[]);
  });

  it('follows the spec, not a list: security: [] on any operation makes it public', () => {
    const tiny: OpenApiDocument = {
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      security: [{ bearerAuth: [] }],
      paths: {
        '/a': { get: { operationId: 'a', security: [] } },
        '/b': { get: { operationId: 'b' } },
        '/c': { get: { operationId: 'c', security: [{ apiKey: [] }] } },
      },
      components: {},
    };
    expect(Object.fromEntries(routeSecurity(tiny))).toEqual({ a: 'public', b: 'access_token', c: 'grant' });
  });
});
