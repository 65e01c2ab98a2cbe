// The tools of the spec's byte operations on a file (`downloadComputerFile`, `uploadComputerFile`): a
// tool call carries JSON, not a 1 GiB stream, so the file's content travels as text (UTF-8, or base64
// for other bytes) within a small limit, stated in the descriptions. A directory's tar archive has no
// tool: it is bytes for the HTTP API and the CLI (`svc computers cp`).
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { SvcClient } from '@svc/client';
import { downloadFile, uploadFile } from '@svc/client/files';
import { kindBytes, type OpenApiDocument, type OperationInfo, operationKind } from '@svc/contract';
import { successResult, textError } from './results.js';
import type { JsonSchema } from './schema.js';
import { strictSchema } from './strict.js';
import type { ToolDefinition } from './tools.js';

/** The most bytes a file tool reads or writes in one call: a tool result is text in a model's context. */
export const FILE_TOOL_MAX_BYTES = 1024 * 1024;

/** What a file tool's name says instead of the operation's verb: the content, not a byte transfer. */
const VERBS: Readonly<Record<string, 'read' | 'write'>> = { download: 'read', upload: 'write' };

const ENCODING: JsonSchema = {
  type: 'string',
  enum: ['utf-8', 'base64'],
  description: '`utf-8`: the content is the text itself; `base64`: the content is the bytes in base64.',
};

/** What a read answers. */
const READ_OUTPUT: JsonSchema & { type: 'object' } = {
  type: 'object',
  required: ['path', 'size', 'encoding', 'content'],
  properties: {
    path: { type: 'string', description: 'The path read.' },
    size: { type: 'integer', minimum: 0, description: 'Bytes in the file.' },
    encoding: ENCODING,
    content: { type: 'string', description: 'The whole file, as `encoding` says.' },
    etag: { type: 'string', description: 'The file’s weak ETag.' },
  },
};

const mib = (bytes: number) => `${bytes / (1024 * 1024)} MiB (${bytes.toLocaleString('en')} bytes)`;

function limitText(direction: 'read' | 'write', maxBytes: number): string {
  const elsewhere = 'Larger files, and directories as tar archives: the HTTP API or `svc computers cp`.';
  return direction === 'read'
    ? `This tool answers the content as JSON text, \`encoding\` \`utf-8\` when it is valid UTF-8, else \`base64\`. At most ${mib(maxBytes)}: a larger file is refused unread. ${elsewhere}`
    : `This tool takes the content as JSON text, \`encoding\` \`utf-8\` (default) or \`base64\`. At most ${mib(maxBytes)} decoded: more is refused before sending. ${elsewhere}`;
}

/**
 * The tool of a byte operation on a file, from its generic definition (`base`: the spec's parameters,
 * annotations, output): `read_…` for a GET answering `application/octet-stream`, `write_…` for a PUT
 * taking it, with the content as text and the limit in the description. Undefined for other byte
 * operations (tar archives), which get no tool.
 *
 * @example
 * import { listOperations, loadDocument } from '@svc/contract';
 * const doc = loadDocument();
 * const op = listOperations(doc).find((o) => o.operationId === 'downloadComputerFile')!;
 * fileTool(doc, op, toolFromOperation(doc, op))?.name; // 'read_computer_file'
 */
export function fileTool(
  document: OpenApiDocument,
  op: OperationInfo,
  base: ToolDefinition,
): ToolDefinition | undefined {
  const bytes = kindBytes(operationKind(document, op));
  const request = bytes?.direction === 'in' ? bytes.body : undefined;
  const response = bytes?.direction === 'out' ? bytes.body : undefined;
  const media = request?.mediaType ?? response?.mediaType;
  const [verb, ...rest] = base.name.split('_');
  const direction = VERBS[verb ?? ''];
  if (media !== 'application/octet-stream' || direction === undefined) return undefined;
  if ((direction === 'read') !== (response !== undefined)) return undefined;
  const maxBytes = Math.min(FILE_TOOL_MAX_BYTES, request?.maxBytes ?? Number.POSITIVE_INFINITY);
  const { body: _, ...properties } = base.inputSchema.properties as Record<string, JsonSchema>;
  const required = ((base.inputSchema.required as string[] | undefined) ?? []).filter((n) => n !== 'body');
  const { body: __, ...targets } = base.targets;
  if (direction === 'write') {
    properties.content = {
      type: 'string',
      description: "The file's whole content, as `encoding` says.",
    };
    properties.encoding = { ...ENCODING, default: 'utf-8' };
    required.push('content');
  }
  // The title says the tool's verb too: the summary's first word is the operation's (`Download a file
  // from a computer` → `Read a file from a computer`).
  const title = base.title.replace(/^\S+/, direction === 'read' ? 'Read' : 'Write');
  const tool: ToolDefinition = {
    ...base,
    name: [direction, ...rest].join('_'),
    title,
    annotations: { ...base.annotations, title },
    description: `${base.description}\n\n${limitText(direction, maxBytes)}`,
    inputSchema: strictSchema({ ...base.inputSchema, properties, required }),
    targets,
    bodyRequired: false,
    file: { direction, maxBytes, note: limitText(direction, maxBytes) },
  };
  if (direction === 'read') tool.outputSchema = strictSchema(READ_OUTPUT);
  return tool;
}

function tooLarge(tool: ToolDefinition, size: string): CallToolResult {
  const max = tool.file?.maxBytes ?? FILE_TOOL_MAX_BYTES;
  return textError(
    `${size}; ${tool.name} handles at most ${mib(max)}. Move larger files with the HTTP API (${tool.operation.method.toUpperCase()} ${tool.operation.path}?path=…, streamed) or the CLI: svc computers cp <local> <workspace>/<computer>:<path> (and back).`,
  );
}

/** The bytes of a stream, or undefined past `max` (the stream is then cancelled). */
async function readAtMost(body: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = body.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    total += next.value.byteLength;
    if (total > max) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(next.value);
  }
  return Buffer.concat(chunks);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Runs a file tool ({@link fileTool}): reads the file into text, or writes text to it, through
 * `@svc/client/files`. An API refusal is thrown (`ApiError`), as a plain call's is.
 *
 * @example
 * const result = await callFileTool(client, tool, { workspace: 'dev', computer: 'box', path: '/home/svc/a.txt' }, signal);
 */
export async function callFileTool(
  client: SvcClient,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const max = tool.file?.maxBytes ?? FILE_TOOL_MAX_BYTES;
  const workspace = String(args.workspace);
  const computer = String(args.computer);
  const path = String(args.path);
  if (tool.file?.direction === 'read') {
    const download = await downloadFile(client, workspace, computer, path, { signal });
    if (download.size !== undefined && download.size > max) {
      await download.body.cancel();
      return tooLarge(tool, `The file is ${download.size.toLocaleString('en')} bytes`);
    }
    const bytes = await readAtMost(download.body, max);
    if (bytes === undefined) return tooLarge(tool, 'The file is larger than the limit');
    let content: string;
    let encoding: 'utf-8' | 'base64' = 'utf-8';
    try {
      content = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      content = Buffer.from(bytes).toString('base64');
      encoding = 'base64';
    }
    const answer = {
      path,
      size: bytes.byteLength,
      encoding,
      content,
      ...(download.etag === undefined ? {} : { etag: download.etag }),
    };
    return successResult(answer, { note: `Read ${bytes.byteLength} bytes (${encoding}).` });
  }
  const text = typeof args.content === 'string' ? args.content : '';
  let bytes: Uint8Array;
  if (args.encoding === 'base64') {
    const compact = text.replace(/\s+/g, '');
    if (compact.length % 4 === 1 || !BASE64.test(compact))
      return textError('content: not valid base64 (encoding is base64).');
    bytes = Buffer.from(compact, 'base64');
  } else bytes = new TextEncoder().encode(text);
  if (bytes.byteLength > max)
    return tooLarge(tool, `The content is ${bytes.byteLength.toLocaleString('en')} bytes`);
  const answer = await uploadFile(client, workspace, computer, path, bytes, {
    mode: typeof args.mode === 'string' ? args.mode : undefined,
    parents: typeof args.parents === 'boolean' ? args.parents : undefined,
    idempotencyKey: typeof args.idempotency_key === 'string' ? args.idempotency_key : undefined,
    signal,
  });
  return successResult(answer, { note: `Wrote ${bytes.byteLength} bytes.` });
}
