// An in-memory files API for the CLI's tests, answering the files routes as the spec writes them
// (stat, download and upload of a file, a directory as tar both ways, the error envelope), through
// the injected fetch: what `svc computers cp` and the byte commands talk to.
import { Readable } from 'node:stream';
import tar from 'tar-stream';

/** One path of the fake computer. */
export interface Node {
  type: 'file' | 'directory' | 'symlink';
  content?: Buffer;
  mode: string;
  link?: string;
}

/** A request the fake API received, its body read. */
export interface FilesRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: Buffer;
}

const BASE = '/v1/workspaces/dev/computers/box/files';

function envelope(
  status: number,
  code: string,
  message: string,
  details: Record<string, unknown> = {},
): Response {
  return Response.json(
    { error: { code, message, details, request_id: 'req-files' } },
    { status, headers: { 'Request-Id': 'req-files' } },
  );
}

function info(path: string, node: Node) {
  return {
    path,
    name: path === '/' ? '/' : (path.split('/').pop() as string),
    type: node.type,
    size: node.content?.length ?? 4096,
    mode: node.mode,
    modified_at: '2026-11-10T12:00:05Z',
    ...(node.link ? { link_target: node.link } : {}),
  };
}

/** Packs entries into a tar, in order. */
export async function tarOf(
  entries: { name: string; type?: tar.Headers['type']; content?: string; linkname?: string; mode?: number }[],
): Promise<Buffer> {
  const pack = tar.pack();
  for (const { content, ...header } of entries)
    pack.entry(
      {
        type: 'file',
        mode: 0o644,
        ...header,
        ...(content === undefined ? {} : { size: Buffer.byteLength(content) }),
      },
      content,
    );
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack as unknown as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** The entries of a tar: name, type and content. */
export async function entriesOf(
  bytes: Buffer,
): Promise<{ name: string; type: string; content: string; mode: number }[]> {
  const extract = tar.extract();
  Readable.from([bytes]).pipe(extract as unknown as NodeJS.WritableStream);
  const found: { name: string; type: string; content: string; mode: number }[] = [];
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    found.push({
      name: entry.header.name,
      type: String(entry.header.type),
      content: Buffer.concat(chunks).toString(),
      mode: entry.header.mode ?? 0,
    });
  }
  return found;
}

/**
 * A fake computer's files (`tree`: absolute path → node) behind the files routes. `refuse` answers
 * every request with that error instead.
 */
export function filesApi(tree: Record<string, Node>, options: { refuse?: [number, string, string] } = {}) {
  const requests: FilesRequest[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const body = Buffer.from(await request.arrayBuffer());
    requests.push({ method: request.method, url, headers: request.headers, body });
    if (options.refuse) return envelope(...options.refuse);
    const path = url.searchParams.get('path') ?? '';
    const node = tree[path];
    const route = `${request.method} ${url.pathname.slice(BASE.length) || '/'}`;
    switch (route) {
      case 'GET /stat':
        return node
          ? Response.json({ file: info(path, node) })
          : envelope(404, 'not_found', `${path}: no such file`, { path });
      case 'GET /':
        if (!node) return envelope(404, 'not_found', `${path}: no such file`, { path });
        if (node.type !== 'file') return envelope(400, 'invalid_argument', `${path} is a directory`);
        return new Response(new Uint8Array(node.content ?? Buffer.alloc(0)), {
          headers: {
            'Content-Type': 'application/octet-stream',
            'Content-Length': String(node.content?.length ?? 0),
            ETag: 'W/"1"',
          },
        });
      case 'PUT /': {
        tree[path] = {
          type: 'file',
          content: body,
          mode: (url.searchParams.get('mode') ?? '0644').padStart(4, '0'),
        };
        return Response.json({ file: info(path, tree[path] as Node) });
      }
      case 'GET /archive': {
        if (node?.type !== 'directory')
          return envelope(400, 'invalid_argument', `${path} is not a directory`);
        const name = path.split('/').pop() as string;
        const entries = Object.entries(tree)
          .filter(([p]) => p.startsWith(`${path}/`))
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([p, n]) => ({
            name: `${name}/${p.slice(path.length + 1)}${n.type === 'directory' ? '/' : ''}`,
            type: n.type,
            mode: Number.parseInt(n.mode, 8),
            ...(n.type === 'file' ? { content: n.content?.toString() ?? '' } : {}),
            ...(n.link ? { linkname: n.link } : {}),
          }));
        const bytes = await tarOf([{ name: `${name}/`, type: 'directory', mode: 0o755 }, ...entries]);
        return new Response(new Uint8Array(bytes), { headers: { 'Content-Type': 'application/x-tar' } });
      }
      case 'PUT /archive': {
        const entries = await entriesOf(body);
        tree[path] ??= { type: 'directory', mode: '0755' };
        for (const entry of entries) {
          const at = `${path}/${entry.name.replace(/\/$/, '')}`;
          tree[at] =
            entry.type === 'directory'
              ? { type: 'directory', mode: '0755' }
              : {
                  type: 'file',
                  content: Buffer.from(entry.content),
                  mode: entry.mode.toString(8).padStart(4, '0'),
                };
        }
        const bytes = entries.reduce((sum, e) => sum + Buffer.byteLength(e.content), 0);
        return Response.json({ archive: { path, entries: entries.length, bytes } });
      }
      default:
        return envelope(404, 'not_found', `no route ${route}`);
    }
  };
  return { fetch, requests, tree };
}
