// The file tools (`read_computer_file`, `write_computer_file`) through callTool, against an injected
// fetch answering the files routes as the spec writes them: text and base64 both ways, the 1 MiB limit
// (refused without reading, or before sending), the error envelope, and the hints and descriptions.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createClient } from '@svc/client/retry';
import { loadDocument } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { callTool } from '../src/call.js';
import { buildCatalog } from '../src/catalog.js';
import { FILE_TOOL_MAX_BYTES } from '../src/file-tools.js';
import { buildTools } from '../src/tools.js';

const document = loadDocument();
const tools = new Map(buildTools(document).map((t) => [t.name, t]));
const tool = (name: string) => tools.get(name) ?? (undefined as never);
const context = { signal: new AbortController().signal, waitTimeoutMs: 5_000 };
const texts = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : ''));
const where = { workspace: 'dev', computer: 'box', path: '/home/svc/a.txt' };

/** A files API: GET answers `content` (with Content-Length unless `unsized`), PUT records the body. */
function api(options: { content?: Uint8Array; unsized?: boolean; refuse?: [number, string] } = {}) {
  const seen: { request: Request; body: Uint8Array }[] = [];
  const client = createClient({
    baseUrl: 'http://api.test/v1',
    token: 't',
    fetch: async (request) => {
      const body = new Uint8Array(await request.arrayBuffer());
      seen.push({ request, body });
      if (options.refuse) {
        const [status, code] = options.refuse;
        return Response.json(
          { error: { code, message: `${code} here`, details: null, request_id: 'req_9' } },
          { status, headers: { 'Request-Id': 'req_9' } },
        );
      }
      const path = new URL(request.url).searchParams.get('path') ?? '';
      if (request.method === 'PUT')
        return Response.json({
          file: {
            path,
            name: 'a.txt',
            type: 'file',
            size: body.byteLength,
            mode: '0600',
            modified_at: '2026-11-10T12:00:05Z',
          },
        });
      const content = options.content ?? new Uint8Array();
      return new Response(
        options.unsized
          ? new Blob([content as Uint8Array<ArrayBuffer>]).stream()
          : (content as Uint8Array<ArrayBuffer>),
        {
          headers: { 'Content-Type': 'application/octet-stream', ETag: 'W/"1"' },
        },
      );
    },
  });
  return { client, seen };
}

describe('the byte operations as tools', () => {
  it('offers a file as read_ and write_ tools with their limits, and no tool for a tar archive', () => {
    expect([...tools.keys()].filter((n) => /computer_(file|archive)/.test(n))).toEqual([
      'read_computer_file',
      'write_computer_file',
      'delete_computer_file',
      'get_computer_file',
      'list_computer_files',
    ]);
    for (const name of ['read_computer_file', 'write_computer_file']) {
      expect(tool(name).description).toContain('At most 1 MiB (1,048,576 bytes)');
      const compact = buildCatalog(document)
        .list({ mode: 'compact' })
        .find((t) => t.name === name);
      expect(compact?.description).toContain('At most 1 MiB (1,048,576 bytes)');
    }
    expect(tool('read_computer_file').annotations).toMatchObject({ readOnlyHint: true });
    expect(tool('write_computer_file').annotations).toMatchObject({
      destructiveHint: true,
      idempotentHint: true,
    });
    expect(tool('delete_computer_file').annotations).toMatchObject({
      destructiveHint: true,
      idempotentHint: true,
    });
    expect(tool('write_computer_file').inputSchema.required).toEqual([
      'workspace',
      'computer',
      'path',
      'content',
    ]);
    expect(Object.keys(tool('write_computer_file').inputSchema.properties as object)).not.toContain('body');
  });
});

describe('read_computer_file', () => {
  it('answers UTF-8 text as it is', async () => {
    const { client, seen } = api({ content: new TextEncoder().encode('héllo\n') });
    const result = await callTool(client, tool('read_computer_file'), where, context);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      path: where.path,
      size: 7,
      encoding: 'utf-8',
      content: 'héllo\n',
      etag: 'W/"1"',
    });
    expect(new URL(seen[0]?.request.url ?? '').pathname).toBe('/v1/workspaces/dev/computers/box/files');
  });

  it('answers other bytes in base64', async () => {
    const bytes = new Uint8Array([0, 255, 1, 254]);
    const { client } = api({ content: bytes, unsized: true });
    const result = await callTool(client, tool('read_computer_file'), where, context);
    expect(result.structuredContent).toMatchObject({
      encoding: 'base64',
      content: Buffer.from(bytes).toString('base64'),
      size: 4,
    });
  });

  it.each([
    ['said by Content-Length', false],
    ['found while reading', true],
  ])('refuses a file over 1 MiB, %s, pointing at the HTTP API and the CLI', async (_, unsized) => {
    const { client } = api({ content: new Uint8Array(FILE_TOOL_MAX_BYTES + 1), unsized });
    const result = await callTool(client, tool('read_computer_file'), where, context);
    expect(result.isError).toBe(true);
    expect(texts(result)[0]).toMatch(/at most 1 MiB/);
    expect(texts(result)[0]).toMatch(/svc computers cp/);
    expect(texts(result)[0]).toMatch(/GET \/workspaces\/\{workspace\}\/computers\/\{computer\}\/files/);
  });

  it('answers the API refusal as the error envelope', async () => {
    const { client } = api({ refuse: [409, 'invalid_state'] });
    const result = await callTool(client, tool('read_computer_file'), where, context);
    expect(result.isError).toBe(true);
    expect(texts(result)[0]).toBe('Error 409 invalid_state: invalid_state here (request_id req_9)');
  });
});

describe('write_computer_file', () => {
  it('sends UTF-8 text as the file, with mode, parents and an Idempotency-Key', async () => {
    const { client, seen } = api();
    const result = await callTool(
      client,
      tool('write_computer_file'),
      { ...where, content: 'héllo\n', mode: '0600', parents: true },
      context,
    );
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ file: { path: where.path, size: 7 } });
    const [put] = seen;
    expect(put?.request.method).toBe('PUT');
    expect(put?.request.headers.get('Content-Type')).toBe('application/octet-stream');
    expect(put?.request.headers.get('Idempotency-Key')).toBeTruthy();
    expect(Object.fromEntries(new URL(put?.request.url ?? '').searchParams)).toEqual({
      path: where.path,
      mode: '0600',
      parents: 'true',
    });
    expect(new TextDecoder().decode(put?.body)).toBe('héllo\n');
  });

  it('decodes base64 content to bytes', async () => {
    const { client, seen } = api();
    await callTool(
      client,
      tool('write_computer_file'),
      { ...where, content: 'AP8B/g==', encoding: 'base64' },
      context,
    );
    expect([...(seen[0]?.body ?? [])]).toEqual([0, 255, 1, 254]);
  });

  it.each([
    ['content over 1 MiB', { content: 'x'.repeat(FILE_TOOL_MAX_BYTES + 1) }, /at most 1 MiB/],
    ['base64 that is not', { content: 'not base64!', encoding: 'base64' }, /not valid base64/],
  ])('refuses %s before sending anything', async (_, extra, message) => {
    const { client, seen } = api();
    const result = await callTool(client, tool('write_computer_file'), { ...where, ...extra }, context);
    expect(result.isError).toBe(true);
    expect(texts(result)[0]).toMatch(message);
    expect(seen).toHaveLength(0);
  });
});
