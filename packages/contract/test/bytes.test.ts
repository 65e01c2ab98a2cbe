import { describe, expect, it } from 'vitest';
import {
  BYTE_MEDIA_TYPES,
  byteOperationIds,
  byteRequestBody,
  byteResponse,
  isByteOperation,
  listOperations,
  loadDocument,
  type OpenApiDocument,
} from '../src/index.js';

const doc = loadDocument();

// The byte operations found the long way, apart from the reader: every operation with a request body
// or a response whose content names a byte media type, whatever its status.
function byteOperationsTheLongWay(document: OpenApiDocument): string[] {
  const found = new Set<string>();
  for (const item of Object.values(document.paths))
    for (const operation of Object.values(item) as {
      operationId?: string;
      requestBody?: unknown;
      responses?: object;
    }[]) {
      const text = JSON.stringify([
        operation?.requestBody ?? null,
        operation?.responses?.['200' as keyof object] ?? null,
      ]);
      if (BYTE_MEDIA_TYPES.some((type) => text.includes(`"${type}"`)))
        found.add(String(operation.operationId));
    }
  return [...found];
}

describe('byte bodies', () => {
  it('finds every operation that takes or answers bytes, and no other', () => {
    expect(byteOperationIds(doc).sort()).toEqual(byteOperationsTheLongWay(doc).sort());
    expect(byteOperationIds(doc)).toEqual(
      expect.arrayContaining([
        'uploadComputerFile',
        'downloadComputerFile',
        'uploadComputerArchive',
        'downloadComputerArchive',
      ]),
    );
  });

  it.each([
    ['uploadComputerFile', { mediaType: 'application/octet-stream', maxBytes: 1073741824 }],
    ['uploadComputerArchive', { mediaType: 'application/x-tar', maxBytes: 1073741824 }],
    ['createComputer', undefined],
    ['getMe', undefined],
  ] as const)('reads the byte request body of %s', (id, want) => {
    expect(byteRequestBody(doc, id)).toEqual(want);
  });

  it.each([
    ['downloadComputerFile', 'application/octet-stream'],
    ['downloadComputerArchive', 'application/x-tar'],
    ['getComputerFile', undefined],
    ['streamWorkspaceEvents', undefined],
  ] as const)('reads the byte response of %s', (id, want) => {
    expect(byteResponse(doc, id)?.mediaType).toBe(want);
  });

  it('a JSON operation about files is no byte operation', () => {
    expect(isByteOperation(doc, 'listComputerFiles')).toBe(false);
    expect(isByteOperation(doc, 'deleteComputerFile')).toBe(false);
  });

  it('refuses an operation the document does not have', () => {
    expect(() => byteRequestBody(doc, 'noSuchOperation')).toThrow(/no operation noSuchOperation/);
    expect(listOperations(doc).length).toBeGreaterThan(0);
  });
});
