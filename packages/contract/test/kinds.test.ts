import { describe, expect, it } from 'vitest';
import {
  BYTE_MEDIA_TYPES,
  kindBytes,
  listOperations,
  loadDocument,
  OPERATION_KINDS,
  type OpenApiDocument,
  type OperationKindName,
  operationKind,
  operationKinds,
} from '../src/index.js';

const doc = loadDocument();

// Each kind found the long way, apart from the readers: by the raw text of the operation's request body
// and of its responses, with `$ref`s to components followed one level (what the bundle holds).
function theLongWay(document: OpenApiDocument): Record<string, OperationKindName[]> {
  const text = (value: unknown): string => {
    const ref = (value as { $ref?: unknown } | undefined)?.$ref;
    if (typeof ref !== 'string') return JSON.stringify(value ?? null);
    const [, , section, name] = ref.split('/');
    return JSON.stringify(
      (document.components as Record<string, Record<string, unknown>>)[section as string]?.[name as string],
    );
  };
  const found: Record<string, OperationKindName[]> = {};
  for (const item of Object.values(document.paths))
    for (const operation of Object.values(item) as {
      operationId?: string;
      requestBody?: unknown;
      responses?: Record<string, unknown>;
    }[]) {
      if (typeof operation?.operationId !== 'string') continue;
      const kinds: OperationKindName[] = [];
      const responses = operation.responses ?? {};
      if ('202' in responses) kinds.push('long-running');
      if (text(responses['200']).includes('"text/event-stream"')) kinds.push('event-stream');
      const bytes = (raw: unknown) => BYTE_MEDIA_TYPES.some((type) => text(raw).includes(`"${type}"`));
      if (bytes(operation.requestBody)) kinds.push('bytes-in');
      if (bytes(responses['200'])) kinds.push('bytes-out');
      found[operation.operationId] = kinds.length === 0 ? ['json'] : kinds;
    }
  return found;
}

describe('operationKinds', () => {
  const kinds = operationKinds(doc);

  it('gives every operation of the spec exactly one kind, the one its request and responses say', () => {
    expect([...kinds.keys()]).toEqual(listOperations(doc).map((op) => op.operationId));
    const want = theLongWay(doc);
    for (const [id, kind] of kinds) expect([id, [kind.kind]]).toEqual([id, want[id]]);
  });

  // Every operation but these is JSON (54 of 72 today): a plain operation changes no count here, a new
  // operation of another kind does, on purpose (CONTRIBUTING.md, "Operation kinds").
  it('counts the kinds the spec has', () => {
    const count = Object.fromEntries(OPERATION_KINDS.map((k) => [k, 0])) as Record<OperationKindName, number>;
    for (const { kind } of kinds.values()) count[kind] += 1;
    const { json, ...others } = count;
    expect(others).toEqual({ 'long-running': 8, 'event-stream': 4, 'bytes-in': 3, 'bytes-out': 3 });
    expect(json).toBe(listOperations(doc).length - 18);
    expect(json).toBeGreaterThan(0);
  });

  it.each([
    ['getMe', 'json'],
    ['execComputer', 'json'],
    ['createComputer', 'long-running'],
    ['runComputer', 'long-running'],
    ['streamWorkspaceEvents', 'event-stream'],
    ['streamComputerScreenFrames', 'event-stream'],
    ['uploadComputerFile', 'bytes-in'],
    ['sendComputerTerminalInput', 'bytes-in'],
    ['downloadComputerArchive', 'bytes-out'],
    ['downloadComputerScreen', 'bytes-out'],
  ] as const)('%s is %s', (id, want) => {
    expect(operationKind(doc, id).kind).toBe(want);
  });

  it('carries what each kind needs: the 202, the stream, the byte body', () => {
    const created = operationKind(doc, 'createComputer');
    expect(created.kind === 'long-running' && created.accepted.status).toBe('202');
    const events = operationKind(doc, 'streamOperationOutput');
    expect(events.kind === 'event-stream' && events.stream.operationId).toBe('streamOperationOutput');
    expect(operationKind(doc, 'uploadComputerArchive')).toEqual({
      kind: 'bytes-in',
      body: { mediaType: 'application/x-tar', maxBytes: 1073741824 },
    });
    expect(operationKind(doc, 'downloadComputerScreen')).toEqual({
      kind: 'bytes-out',
      body: { mediaType: 'image/png', maxBytes: undefined },
    });
  });

  it('gives the bytes of the kinds that move bytes, and of no other', () => {
    const moved = [...kinds].flatMap(([id, kind]) => {
      const bytes = kindBytes(kind);
      return bytes ? [[id, bytes.direction, bytes.body.mediaType]] : [];
    });
    expect(moved).toEqual([
      ['downloadComputerScreen', 'out', 'image/png'],
      ['downloadComputerFile', 'out', 'application/octet-stream'],
      ['uploadComputerFile', 'in', 'application/octet-stream'],
      ['downloadComputerArchive', 'out', 'application/x-tar'],
      ['uploadComputerArchive', 'in', 'application/x-tar'],
      ['sendComputerTerminalInput', 'in', 'application/octet-stream'],
    ]);
  });

  it('reads a document once, and takes an operation as listed or by id', () => {
    expect(operationKinds(doc)).toBe(kinds);
    const op = listOperations(doc).find((o) => o.operationId === 'uploadComputerFile');
    expect(op && operationKind(doc, op)).toBe(operationKind(doc, 'uploadComputerFile'));
    expect(() => operationKind(doc, 'noSuchOperation')).toThrow('no operation noSuchOperation');
  });

  it('refuses an operation that would be two kinds at once, naming it', () => {
    const copy = structuredClone(doc);
    const put = (copy.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)[
      '/workspaces/{workspace}/computers/{computer}/files'
    ]?.put;
    if (!put) throw new Error('the spec moved uploadComputerFile');
    put.responses['202'] = { description: 'Accepted' };
    expect(() => operationKinds(copy)).toThrow('uploadComputerFile is long-running and bytes-in at once');
  });
});
