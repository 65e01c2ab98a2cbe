import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fetchHandler, RequestContext } from '../../src/http/context.js';
import { JsonBytes } from '../../src/http/json-bytes.js';
import type { Principal } from '../../src/identity/auth/authenticate.js';

const ID = /^[0-9a-hjkmnp-tv-z]{27}$/;
const ada: Principal = { id: 'p-1', kind: 'user', name: 'ada', display_name: 'Ada', email: null };

describe('the request context', () => {
  it('knows the path, and the path below /v1 only inside the API', () => {
    const inside = new RequestContext(new Request('http://h/v1/workspaces/acme?limit=1'));
    expect([inside.path, inside.apiPath]).toEqual(['/v1/workspaces/acme', '/workspaces/acme']);
    const outside = new RequestContext(new Request('http://h/signin/authorize?x=1'));
    expect([outside.path, outside.apiPath]).toEqual(['/signin/authorize', undefined]);
  });

  it('carries what a step set to the steps after it, by typed key', () => {
    const c = new RequestContext(new Request('http://h/v1/me'));
    expect(c.get('principal')).toBeUndefined();
    c.set('principal', ada);
    expect(c.get('principal')?.id).toBe('p-1');
    expect(new RequestContext(new Request('http://h/v1/me')).get('principal')).toBeUndefined();
  });

  it('mints a request id only when asked, then keeps it', () => {
    const c = new RequestContext(new Request('http://h/signin'));
    expect(c.knownRequestId).toBeUndefined();
    const id = c.requestId;
    expect(id).toMatch(ID);
    expect([c.requestId, c.knownRequestId]).toEqual([id, id]);
  });

  it('answers with CORS, the collected headers, Request-Id and the envelope', async () => {
    const c = new RequestContext(new Request('http://h/v1/me'));
    c.cors = { 'access-control-allow-origin': '*' };
    c.headers.ratelimit = '"principal";r=9;t=60';
    const response = c.error('not_found', 'no such route', {}, { 'x-extra': '1' });
    expect(response.status).toBe(404);
    expect(Object.fromEntries(response.headers)).toEqual({
      'access-control-allow-origin': '*',
      ratelimit: '"principal";r=9;t=60',
      'x-extra': '1',
      'request-id': c.requestId,
      'content-type': 'application/json',
    });
    expect(await response.json()).toEqual({
      error: { code: 'not_found', message: 'no such route', details: {}, request_id: c.requestId },
    });
    const empty = c.json(204);
    expect([empty.body, empty.headers.get('content-type')]).toEqual([null, null]);
  });

  it('answers a body serialized beforehand (JsonBytes) with the bytes and headers of the value itself', async () => {
    const value = { computers: [{ id: 'c-1', name: 'zoë', labels: { é: '✓' } }], next_cursor: null };
    const answer = async (body: unknown) => {
      const c = new RequestContext(new Request('http://h/v1/me'));
      c.cors = { 'access-control-allow-origin': '*' };
      c.headers.ratelimit = '"principal";r=9;t=60';
      const response = c.json(200, body, { 'x-extra': '1' });
      const headers = Object.fromEntries(response.headers);
      delete headers['request-id'];
      return { status: response.status, headers, bytes: new Uint8Array(await response.arrayBuffer()) };
    };
    const serialized = JsonBytes.of(value);
    const twice = [await answer(serialized), await answer(serialized)];
    for (const sent of twice) expect(sent).toEqual(await answer(value));
    expect(new TextDecoder().decode(twice[0]?.bytes)).toBe(JSON.stringify(value));
    // Serialized again (an idempotency record), it is the value's JSON, not the object holding the bytes.
    expect(JSON.stringify({ body: serialized })).toBe(JSON.stringify({ body: value }));
  });

  it('is made fresh for each request by fetchHandler', async () => {
    const seen: RequestContext[] = [];
    const fetch = fetchHandler(async (c) => {
      seen.push(c);
      return c.json(200, { path: c.path });
    });
    await fetch(new Request('http://h/v1/me'));
    await fetch(new Request('http://h/v1/me'));
    expect(seen).toHaveLength(2);
    expect(seen[0]).not.toBe(seen[1]);
  });
});

// Per-request state lives in the context: no module keeps its own table of requests.
it.each(sources(new URL('../../src/', import.meta.url)))('%s keys no WeakMap by request', (_, file) => {
  expect(readFileSync(file, 'utf8')).not.toMatch(/WeakMap<\s*Request\b/);
});

function sources(dir: URL): [string, URL][] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => [name, new URL(name, dir)]);
}
