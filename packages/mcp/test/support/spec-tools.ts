// The tools the spec should yield, derived from the spec through @svc/contract alone (not from the
// code under test): one per operation but the two without an access token; a byte operation on a file
// is a text tool named for what it does to the content (`read_…`, `write_…`), a tar archive's none.
import {
  byteOperationIds,
  byteRequestBody,
  byteResponse,
  listOperations,
  loadDocument,
  type OpenApiDocument,
} from '@svc/contract';
import { toolName } from '../../src/names.js';

/** Operations that take no access token, so no tool. */
export const NOT_TOOLS = ['getHealth', 'exchangeToken'];

const FILE = 'application/octet-stream';

/** The expected tools of the document, in spec order, with their tag. */
export function expectedTools(document: OpenApiDocument = loadDocument()): { name: string; tag: string }[] {
  const bytes = new Set(byteOperationIds(document));
  return listOperations(document)
    .filter((op) => !NOT_TOOLS.includes(op.operationId))
    .flatMap((op) => {
      const name = toolName(op.operationId);
      const tag = (op.operation.tags as string[])[0] as string;
      if (!bytes.has(op.operationId)) return [{ name, tag }];
      const file =
        byteResponse(document, op)?.mediaType === FILE || byteRequestBody(document, op)?.mediaType === FILE;
      return file ? [{ name: name.replace(/^download_/, 'read_').replace(/^upload_/, 'write_'), tag }] : [];
    });
}
