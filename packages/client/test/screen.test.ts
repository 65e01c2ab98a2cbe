// `@svc/client/screen` against an injected fetch answering `GET …/screen` as the spec writes it: the
// PNG's bytes with the size and the pointer from the headers, the scaling asked in the query, and a
// refusal as `ApiError` with its code.
import { describe, expect, it } from 'vitest';
import { ApiError, createClient } from '../src/index.js';
import { screenshot } from '../src/screen.js';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

function api(answer: () => Response) {
  const seen: URL[] = [];
  const client = createClient({
    baseUrl: 'http://api.test/v1',
    token: 't',
    fetch: async (request: Request) => {
      seen.push(new URL(request.url));
      return answer();
    },
  });
  return { client, seen };
}

describe('screenshot', () => {
  it('answers the bytes, the screen size and the pointer, and sends the scaling', async () => {
    const { client, seen } = api(
      () =>
        new Response(PNG, {
          headers: {
            'Content-Type': 'image/png',
            'Screen-Width': '1280',
            'Screen-Height': '800',
            'Cursor-X': '640',
            'Cursor-Y': '400',
          },
        }),
    );
    const shot = await screenshot(client, 'dev', 'desk', { maxWidth: 640 });
    expect([...shot.png]).toEqual([...PNG]);
    expect(shot.screen).toEqual({ width: 1280, height: 800 });
    expect(shot.cursor).toEqual({ x: 640, y: 400 });
    expect(seen[0]?.pathname).toBe('/v1/workspaces/dev/computers/desk/screen');
    expect(seen[0]?.searchParams.get('max_width')).toBe('640');
    expect(seen[0]?.searchParams.has('max_height')).toBe(false);
  });

  it('throws the refusal as ApiError with its code', async () => {
    const { client } = api(() =>
      Response.json(
        {
          error: {
            code: 'invalid_state',
            message: 'no display',
            details: { reason: 'no_display' },
            request_id: 'req_1',
          },
        },
        { status: 409, headers: { 'Request-Id': 'req_1' } },
      ),
    );
    const error = await screenshot(client, 'dev', 'box').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 409, code: 'invalid_state' });
  });
});
